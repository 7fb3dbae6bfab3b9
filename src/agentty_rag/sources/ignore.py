"""The ignore rules in force in a folder: ``.git/info/exclude``, ``.agentty/ignore`` and every ``.gitignore``
from the workspace root down to it, matched as git matches them.

Each ignore file is read and compiled once, and again only when its ``lstat`` changes (inode, size, mtime,
ctime): a scan before every search does not re-read and recompile hundreds of files. A rule stack carries a
``key`` naming the files and versions it was built from, so a walk can tell that a folder's decisions made
under an earlier stack still hold.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pathspec

from agentty_rag.fsguard import read_regular

# (inode, size, mtime, ctime) of an ignore file, None when it must be read every time (a link).
Signature = tuple[int, int, int, int]
# What a rule stack was built from: (folder, ignore file, signature) per file with rules.
IgnoreKey = tuple[tuple[str, str, Signature | None], ...]


class Ignore:
    """The stack of gitignore specs that applies to one directory, deepest last."""

    def __init__(self, specs: tuple[tuple[str, pathspec.GitIgnoreSpec], ...] = (), key: IgnoreKey = ()) -> None:
        self.specs = specs
        self.key = key
        # Whether decisions made under this stack can be reused while its key stays the same.
        self.cacheable = all(signature is not None for _, _, signature in key)

    def with_file(self, base_rel: str, file: Path, boundary: str) -> Ignore:
        signature, spec = compiled(str(file), boundary)
        if spec is None:
            return self
        return Ignore((*self.specs, (base_rel, spec)), (*self.key, (base_rel, str(file), signature)))

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
# Compiled ignore files kept (a tree holds a few hundred at most; past this the cache starts afresh).
_CACHE_MAX = 20_000
_cache: dict[tuple[str, str], tuple[Signature, pathspec.GitIgnoreSpec | None]] = {}
_cache_lock = threading.Lock()


def _signature(path: str) -> Signature | None:
    """The ``lstat`` of a regular file (None for a link, which is read anew each time; raises when missing)."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def compiled(path: str, boundary: str) -> tuple[Signature | None, pathspec.GitIgnoreSpec | None]:
    """An ignore file's signature and compiled spec (None when it is missing, empty or unreadable).

    Compiled once per version of the file; a link (followed only inside ``boundary``) is read every time."""
    try:
        signature = _signature(path)
    except OSError:
        return None, None
    if signature is not None:
        with _cache_lock:
            cached = _cache.get((path, boundary))
        if cached is not None and cached[0] == signature:
            return cached
    lines = _read_ignore_lines(Path(path), boundary)
    spec = ignore_spec(lines) if lines else None
    if signature is not None:
        with _cache_lock:
            if len(_cache) >= _CACHE_MAX:
                _cache.clear()
            _cache[(path, boundary)] = (signature, spec)
    return signature, spec


def ignore_spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    """Gitignore lines compiled for RE2, whose matching time grows linearly with the path: a hostile line
    (``*a*a*a*x``, ``**/a/**/a/…``) cannot make the scan before every search backtrack for seconds. A line
    that cannot be compiled is left out; the others apply. RE2 matches every pattern of a file in one pass."""
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


__all__ = ["Ignore", "IgnoreKey", "compiled", "ignore_spec", "ignores_at"]
