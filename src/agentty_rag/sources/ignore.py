"""The ignore rules in force in a folder: ``.git/info/exclude``, ``.agentty/ignore`` and every ``.gitignore``
from the workspace root down to it, matched as git matches them."""

from __future__ import annotations

from pathlib import Path

import pathspec

from agentty_rag.fsguard import read_regular


class Ignore:
    """The stack of gitignore specs that applies to one directory, deepest last."""

    def __init__(self, specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = ()) -> None:
        self.specs = specs

    def with_file(self, base_rel: str, file: Path, boundary: str) -> Ignore:
        lines = _read_ignore_lines(file, boundary)
        if not lines:
            return self
        return Ignore((*self.specs, (base_rel, ignore_spec(lines))))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Git's rule: the deepest file with a matching pattern decides; within a file, the last pattern."""
        decision: bool | None = None
        for base, spec in self.specs:
            sub = rel[len(base) + 1 :] if base else rel
            if is_dir:
                sub += "/"
            result = spec.check_file(sub).include
            if result is not None:
                decision = result
        return bool(decision)


_IGNORE_MAX_BYTES = 1 << 20


def ignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """Gitignore lines compiled for RE2, whose matching time grows linearly with the path: a hostile line
    (``*a*a*a*x``, ``**/a/**/a/…``) cannot make the scan before every search backtrack for seconds. A line
    that cannot be compiled is left out; the others apply."""
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")
    except Exception:  # an invalid pattern or one RE2 refuses: find it, keep the rest
        kept = [line for line in lines if _compiles(line)]
        return pathspec.GitIgnoreSpec.from_lines(kept, backend="re2")


def _compiles(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line], backend="re2")
    except Exception:
        return False
    return True


def _read_ignore_lines(file: Path, boundary: str) -> list[str]:
    """The lines of an ignore file inside ``boundary`` (none when it is missing, too large, a link out or a FIFO)."""
    try:
        data = read_regular(str(file), boundary, _IGNORE_MAX_BYTES)
    except OSError:
        return []
    if len(data) > _IGNORE_MAX_BYTES:
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def ignores_at(workspace: Path, start_rel: str) -> Ignore:
    """Ignore rules in force at ``start_rel``: the workspace's exclude files and every .gitignore down to it."""
    ignore = Ignore()
    boundary = str(workspace)
    for file in (".git/info/exclude", ".agentty/ignore", ".gitignore"):
        ignore = ignore.with_file("", workspace / file, boundary)
    base = ""
    for part in start_rel.split("/") if start_rel else ():
        base = f"{base}/{part}" if base else part
        ignore = ignore.with_file(base, workspace / base / ".gitignore", boundary)
    return ignore


__all__ = ["Ignore", "ignore_spec", "ignores_at"]
