"""The ignore rules in force in a folder: ``.git/info/exclude``, ``.agentty/ignore`` and every ``.gitignore``
from the workspace root down to it, matched as git matches them.

Each ignore file is read and compiled once, and again only when its ``lstat`` changes (inode, size, mtime,
ctime): a scan before every search does not re-read and recompile hundreds of files. A rule stack carries a
``key`` naming the files and versions it was built from, so a walk can tell that a folder's decisions made
under an earlier stack still hold.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from pathlib import Path

import pathspec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

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
        signature, specs = compiled(str(file), boundary)
        if not specs:
            return self
        added = tuple((base_rel, spec) for spec in specs)
        return Ignore((*self.specs, *added), (*self.key, (base_rel, str(file), signature)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Git's rule: the deepest file with a matching pattern decides; within a file, the last pattern."""
        decision: bool | None = None
        for base, spec in self.specs:
            sub = rel[len(base) + 1 :] if base else rel
            if is_dir:
                sub += "/"
            try:
                result = spec.check_file(sub).include
            except UnicodeEncodeError:  # a name that is not UTF-8: RE2 takes UTF-8 text only
                result = spec.check_file(matchable(sub)).include
            if result is not None:
                decision = result
        return bool(decision)


# A lone surrogate: how Python keeps a byte of a file name that is not UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def matchable(rel: str) -> str:
    """A path (or an ignore line) RE2 can take: each byte that is not UTF-8 becomes U+FFFD, one character as
    it was one byte, so ``?`` and ``*`` match it as git matches the byte. Ignore files are read the same way,
    so a pattern naming such a byte matches it (and any other byte that is not UTF-8 in its place)."""
    return _SURROGATE.sub("\ufffd", rel)


_IGNORE_MAX_BYTES = 1 << 20
# A pattern only a path longer than this could match is left out before it is translated (pathspec's
# translation takes time quadratic in a pattern's length); so is a line longer than _LINE_CHARS_MAX.
_PATTERN_MIN_CHARS_MAX = 1024
_LINE_CHARS_MAX = 4096
# Patterns kept per ignore file, and their characters (git's own files hold a few hundred short lines).
_PATTERNS_MAX = 10_000
_PATTERN_CHARS_MAX = 256 * 1024
# One RE2 set holds up to this many patterns or characters: RE2's memory budget refuses a set of a few
# thousand patterns, so a larger file becomes several sets, matched in order.
_SET_PATTERNS = 512
_SET_CHARS = 8 * 1024
# Compiled ignore files kept (a tree holds a few hundred at most; past this the cache starts afresh).
_CACHE_MAX = 20_000
Specs = tuple[pathspec.GitIgnoreSpec, ...]
_cache: dict[tuple[str, str], tuple[Signature, Specs]] = {}
_cache_lock = threading.Lock()
_STARS = re.compile(r"\*{3,}")
_ANY_FOLDERS = re.compile(r"(?:\*\*/){2,}")


def _signature(path: str) -> Signature | None:
    """The ``lstat`` of a regular file (None for a link, which is read anew each time; raises when missing)."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def compiled(path: str, boundary: str) -> tuple[Signature | None, Specs]:
    """An ignore file's signature and compiled specs (none when it is missing, empty or unreadable).

    Compiled once per version of the file; a link (followed only inside ``boundary``) is read every time."""
    try:
        signature = _signature(path)
    except OSError:
        return None, ()
    if signature is not None:
        with _cache_lock:
            cached = _cache.get((path, boundary))
        if cached is not None and cached[0] == signature:
            return cached
    specs = ignore_specs(_read_ignore_lines(Path(path), boundary))
    if signature is not None:
        with _cache_lock:
            if len(_cache) >= _CACHE_MAX:
                _cache.clear()
            _cache[(path, boundary)] = (signature, specs)
    return signature, specs


def bounded(line: str) -> str | None:
    """A gitignore line as git reads it, its wildcards no longer than they need to be (``***`` is ``**``,
    ``**/**/`` is ``**/``); None for a line left out: one only a path longer than ``_PATTERN_MIN_CHARS_MAX``
    characters could match, or longer than ``_LINE_CHARS_MAX``. Linear in the line's length."""
    line = _ANY_FOLDERS.sub("**/", _STARS.sub("**", line))
    if len(line) > _LINE_CHARS_MAX or _min_chars(line) > _PATTERN_MIN_CHARS_MAX:
        return None
    return line


def _min_chars(line: str) -> int:
    """The fewest characters of a path a pattern matches (a lower bound: ``*`` and ``/`` count none, a
    ``?``, an escaped or plain character and a bracket expression one each)."""
    count, i, n = 0, 0, len(line)
    while i < n:
        char = line[i]
        if char == "\\":
            i += 1
        elif char == "[":
            close = line.find("]", i + 2)
            i = close if close > 0 else i
        elif char in "*/":
            count -= 1
        count += 1
        i += 1
    return count


def ignore_specs(lines: list[str]) -> Specs:
    """Gitignore lines compiled for RE2, whose matching time grows linearly with the path: a hostile line
    (``*a*a*a*x``, ``**/a/**/a/…``) cannot make the scan before every search backtrack for seconds, and a
    line no real path can match is left out before it is translated. A line that cannot be compiled is left
    out; the others apply. RE2 matches every pattern of a set in one pass; a file larger than one set
    (``_SET_PATTERNS`` patterns, ``_SET_CHARS`` characters) is matched as several, in order (the last match
    decides, as within one). At most ``_PATTERNS_MAX`` patterns of ``_PATTERN_CHARS_MAX`` characters are
    kept: compiling is bounded, whatever the file holds."""
    kept: list[str] = []
    chars = 0
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        reduced = bounded(line)
        if reduced is None or not _valid(reduced):
            continue
        chars += len(reduced)
        if len(kept) >= _PATTERNS_MAX or chars > _PATTERN_CHARS_MAX:
            break
        kept.append(reduced)
    sets: list[list[str]] = [[]]
    size = 0
    for line in kept:
        if sets[-1] and (len(sets[-1]) >= _SET_PATTERNS or size + len(line) > _SET_CHARS):
            sets.append([])
            size = 0
        sets[-1].append(line)
        size += len(line)
    return tuple(spec for part in sets for spec in _compiled_set(part))


def _valid(line: str) -> bool:
    """Whether pathspec can translate the line (``!`` alone or a trailing backslash cannot be)."""
    try:
        GitIgnoreSpecPattern.pattern_to_regex(line)
    except Exception:  # pathspec's error for an invalid line is not part of its stable API
        return False
    return True


def _compiled_set(lines: list[str]) -> list[pathspec.GitIgnoreSpec]:
    """The lines as one RE2 set, or, when RE2 refuses it (past its memory budget), as the sets of each half;
    a single line RE2 refuses is left out."""
    if not lines:
        return []
    try:
        return [pathspec.GitIgnoreSpec.from_lines(lines, backend="re2")]
    except Exception:  # past RE2's memory budget (or a line it refuses): split it
        if len(lines) == 1:
            return []
    half = len(lines) // 2
    return _compiled_set(lines[:half]) + _compiled_set(lines[half:])


def _read_ignore_lines(file: Path, boundary: str) -> list[str]:
    """The lines of an ignore file inside ``boundary`` (none when it is missing, too large, a link out or a FIFO)."""
    try:
        data = read_regular(str(file), boundary, _IGNORE_MAX_BYTES)
    except OSError:
        return []
    if len(data) > _IGNORE_MAX_BYTES:
        return []
    return matchable(data.decode("utf-8", errors="surrogateescape")).splitlines()


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


__all__ = ["Ignore", "IgnoreKey", "bounded", "compiled", "ignore_specs", "ignores_at", "matchable"]
