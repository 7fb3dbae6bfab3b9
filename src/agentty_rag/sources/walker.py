"""Find the files a source should index, cheaply enough to run before every search.

The walk prunes ignored and dependency directories *before descending*, honours ``.gitignore`` files at every
level plus ``.git/info/exclude`` and ``.agentty/ignore``, stats only files whose name the caller accepts, and
never leaves the workspace root: a symlink is followed only when its target lies inside the root, and a
directory reached twice (a symlink loop or a second link to it) is walked once.

Nothing here reads file contents: what a file holds (binary, generated, undecodable) is judged when it is
loaded, so that a scan with nothing changed costs one ``stat`` per candidate file.
"""

from __future__ import annotations

import operator
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentty_rag.fsguard import is_inside
from agentty_rag.sources.ignore import Ignore, ignores_at
from agentty_rag.sources.listing import DIR, FILE, LINK, SKIP, Decision, Listing, ListingCache, Step, folder_signature
from agentty_rag.sources.names import (
    is_generated_name,
    is_pruned_dir,
    is_secret_name,
    is_utf8_name,
    printable_path,
)
from agentty_rag.sources.selection import Selection, select
from agentty_rag.sources.skips import REPORT_PATHS_PER_REASON, SkipReport
from agentty_rag.types import FileStamp


@dataclass
class ScanResult:
    """What a scan found: accepted files in path order, and what it left out."""

    files: list[FileStamp]
    skipped: SkipReport
    selection: Selection = field(default_factory=Selection)


@dataclass(frozen=True)
class WalkRules:
    """What a walk accepts.

    Args:
        accept: takes a file name, says whether the source can index it (by extension or name).
        key_prefix: prefix of each ``FileStamp.key`` (``code:``, ``docs:``).
        max_files: past this many files, ``selection.select`` chooses which to keep; the rest are skipped
            as ``over file cap``.
        cap_setting: the variable that sets ``max_files``, named when the cap leaves files out.
        max_bytes: larger files are skipped as ``too large``.
        secrets: also accept secrets-looking files.
        judge: for a file ``accept`` took, by its name and its path in the workspace: None to keep it, a
            reason to skip it and report why, "" to leave it out silently (the docs' rules by location).
        prune: for a folder, by its name and its path in the workspace: whether the walk leaves it out.
    """

    accept: Callable[[str], bool]
    key_prefix: str
    max_files: int = 1_000_000
    cap_setting: str = ""
    max_bytes: int = 1 << 30
    secrets: bool = False
    judge: Callable[[str, str], str | None] | None = None
    prune: Callable[[str, str], bool] | None = None


_by_name = operator.attrgetter("name")


def folder_boundary(folder: Path, workspace: Path) -> str:
    """The real folder whose inside a source's files must stay in.

    A folder named inside the workspace (``./docs``, ``.agentty/memory``) is held to the workspace, so a
    link out of it (``docs -> /etc``) is refused; a folder named outside it (a user's own skills folder, or
    one the user set in the environment) is a deliberate choice and becomes its own boundary.
    """
    workspace_real = os.path.realpath(workspace)
    named = os.path.abspath(folder if folder.is_absolute() else Path(workspace_real) / folder)
    if is_inside(named, os.path.abspath(workspace)) or is_inside(named, workspace_real):
        return workspace_real
    return os.path.realpath(named)


def scan_tree(start: Path, workspace: Path, rules: WalkRules, cache: ListingCache | None = None) -> ScanResult:
    """Walk ``start`` (a folder inside or equal to ``workspace``) and stat what ``rules`` accepts.

    A file or folder reached both directly and through a symlink is indexed once, under its real path (the
    one with no link in it): an agent opens and edits real paths. Links are therefore followed last, and
    only to what the walk has not already reached. Over ``rules.max_files``, ``selection.select`` chooses
    which files to keep.

    Args:
        start: the folder to index (the workspace itself for code, the docs folder for docs).
        workspace: the root no file may lie outside of; gitignore paths are relative to it. A ``start``
            whose real path is outside it (a ``docs`` link to ``/etc``) is not walked at all.
        rules: which files to accept and the caps.
        cache: what earlier walks with the same ``rules`` decided per folder (see ``listing``); a folder
            whose stat and ignore rules are unchanged is not listed again, only its files are stat'ed.

    Returns:
        Accepted files sorted by key, and a report of what was left out. Never raises for unreadable
        directories or broken links: they are reported.
    """
    ws_real = os.path.realpath(workspace)
    start_real = os.path.realpath(start)
    if not is_inside(start_real, ws_real):
        skipped = SkipReport()
        skipped.add("symlink outside root", str(start))
        return ScanResult([], skipped)
    start_rel = os.path.relpath(start_real, ws_real).replace(os.sep, "/") if start_real != ws_real else ""
    walk = _Walk(ws_real, rules, cache if cache is not None else ListingCache())
    walk.visited.add(start_real)
    walk.cache.begin()
    walk.run([(start_real, start_rel, "", ignores_at(Path(ws_real), start_rel))])
    # Then what only a symlink reaches: folders first (they may hold more links), then files.
    while walk.linked_dirs:
        pending, walk.linked_dirs = walk.linked_dirs, []
        for target, ws_rel, rel, ignore in pending:
            if target in walk.visited:
                walk.skipped.add("symlink loop or duplicate", rel)
                continue
            walk.visited.add(target)
            walk.run([(target, ws_rel, rel, ignore)])
    for target, rel, path in walk.linked_files:
        if target in walk.real_files:
            walk.skipped.add("symlink loop or duplicate", rel)
            continue
        walk.accept_file(rel, path, target)
    walk.cache.finish()
    files, left_out, selection = select(walk.files, rules.max_files, rules.key_prefix, rules.cap_setting)
    for rel in left_out:
        walk.skipped.add("over file cap", rel)
    files.sort(key=lambda f: f.key)
    return ScanResult(files, walk.skipped, selection)


def judge_name(rules: WalkRules, name: str, is_dir: bool, ws_rel: str, dir_ignore: Ignore) -> Decision | None:
    """What a walk does with an entry (not a link), from its name, its type and the ignore rules in its
    folder (None: nothing, silently)."""
    if is_dir:
        if is_pruned_dir(name) or (rules.prune is not None and rules.prune(name, ws_rel)):
            return None
        if dir_ignore.ignored(ws_rel, True):
            return None
        if not is_utf8_name(name):
            return (SKIP, name, "name not UTF-8")
        return (DIR, name, "")
    if rules.judge is not None and not rules.accept(name):
        return None  # a walk that judges by location reports only what it would index (not every .env)
    secret = not rules.secrets and is_secret_name(name)
    if not secret and not rules.accept(name):
        return None  # never indexed, whatever the ignore rules say: no pattern test needed
    if dir_ignore.ignored(ws_rel, False):
        return None
    if secret:
        return (SKIP, name, "secret-looking name")
    if not is_utf8_name(name):
        # Kept out: a name that is not text cannot be stored, shown or cited.
        return (SKIP, name, "name not UTF-8")
    if is_generated_name(name):
        return (SKIP, name, "generated")
    verdict = rules.judge(name, ws_rel) if rules.judge is not None else None
    if verdict is not None:
        return (SKIP, name, verdict) if verdict else None
    return (FILE, name, "")


# (real path, path relative to the workspace, path relative to start, ignore rules in force)
_DirItem = tuple[str, str, str, Ignore]


def _step(decision: Decision, real_dir: str, ws_rel_dir: str, rel_dir: str) -> Step:
    """A decision with the paths it needs, worked out once per listing (a reused listing builds no string)."""
    kind, name, reason = decision
    rel = f"{rel_dir}/{name}" if rel_dir else name
    ws_rel = f"{ws_rel_dir}/{name}" if ws_rel_dir else name
    return (kind, name, reason, rel, f"{real_dir}{os.sep}{name}", ws_rel)


class _Walk:
    """The state of one scan: what was accepted, skipped, visited, and the symlinks left for last."""

    def __init__(self, ws_real: str, rules: WalkRules, cache: ListingCache) -> None:
        self.ws_real = ws_real
        self.rules = rules
        self.cache = cache
        self.files: list[FileStamp] = []
        self.skipped = SkipReport()
        self.visited: set[str] = set()  # real paths of the folders walked
        self.real_files: set[str] = set()  # real paths of the files accepted
        self.linked_dirs: list[_DirItem] = []
        self.linked_files: list[tuple[str, str, str]] = []  # (target, path relative to start, link path)

    def run(self, stack: list[_DirItem]) -> None:
        """Depth-first with an explicit stack; entries sorted so that the walk order is deterministic."""
        while stack:
            item = stack.pop()
            listing = self._listing(item)
            if listing is None:
                continue
            subdirs: list[_DirItem] = []
            ignore = listing.ignore
            for kind, name, reason, rel, real, ws_rel in listing.steps:
                if kind == FILE:
                    self.accept_file(rel, real, real)
                elif kind == DIR:
                    self.visited.add(real)
                    subdirs.append((real, ws_rel, rel, ignore))
                elif kind == SKIP:
                    self.skipped.add(reason, printable_path(rel) if reason == "name not UTF-8" else rel)
                else:
                    self._link(name, real, listing.ws_rel, rel, ignore)
            stack.extend(reversed(subdirs))

    def _listing(self, item: _DirItem) -> Listing | None:
        """The folder's decisions: from the cache when its stat and rules are unchanged, else by listing it."""
        real_dir, ws_rel_dir, rel_dir, dir_ignore = item
        try:
            signature = folder_signature(real_dir)
        except OSError:
            signature = None
        if signature is not None:
            listing = self.cache.reuse(real_dir, signature, ws_rel_dir, rel_dir, dir_ignore, self.ws_real)
            if listing is not None:
                return listing
        try:
            with os.scandir(real_dir) as it:
                entries = sorted(it, key=_by_name)
        except OSError:
            self.skipped.add("unreadable directory", rel_dir or ".")
            return None
        names = {e.name for e in entries}
        listing = Listing(signature, ws_rel_dir, rel_dir, ".gitignore" in names, dir_ignore)
        if rel_dir and "pyvenv.cfg" in names:
            listing.venv = True  # a virtual environment under any name
        else:
            if rel_dir and listing.gitignore:
                listing.ignore = dir_ignore.with_file(ws_rel_dir, Path(real_dir) / ".gitignore", self.ws_real)
            decisions = [d for e in entries if (d := self._judge(e, ws_rel_dir, listing.ignore)) is not None]
            listing.steps = [_step(d, real_dir, ws_rel_dir, rel_dir) for d in decisions]
        self.cache.store(real_dir, listing)
        return listing

    def _judge(self, entry: os.DirEntry[str], ws_rel_dir: str, dir_ignore: Ignore) -> Decision | None:
        """What to do with one entry, from its name, its type and the ignore rules (None: nothing, silently)."""
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir(follow_symlinks=True)
        except OSError:
            return None
        if is_link:
            return (LINK, entry.name, "")
        return self._judge_name(entry.name, is_dir, ws_rel_dir, dir_ignore)

    def _judge_name(self, name: str, is_dir: bool, ws_rel_dir: str, dir_ignore: Ignore) -> Decision | None:
        return judge_name(self.rules, name, is_dir, f"{ws_rel_dir}/{name}" if ws_rel_dir else name, dir_ignore)

    def _link(self, name: str, path: str, ws_rel_dir: str, rel: str, dir_ignore: Ignore) -> None:
        """A symlink, judged anew on every walk (its target may change without its folder changing)."""
        is_dir = os.path.isdir(path)
        decision = self._judge_name(name, is_dir, ws_rel_dir, dir_ignore)
        if decision is None:
            return
        if decision[0] == SKIP:
            self.skipped.add(decision[2], printable_path(rel) if decision[2] == "name not UTF-8" else rel)
            return
        target = os.path.realpath(path)
        if not is_inside(target, self.ws_real):
            self.skipped.add("symlink outside root", rel)
        elif not is_dir:
            self.linked_files.append((target, rel, path))
        elif is_inside(os.path.dirname(path), target):
            self.skipped.add("symlink loop or duplicate", rel)
        else:
            ws_rel = f"{ws_rel_dir}/{name}" if ws_rel_dir else name
            self.linked_dirs.append((target, ws_rel, rel, dir_ignore))

    def accept_file(self, rel: str, path: str, real: str) -> None:
        """Stat a candidate file and keep it unless it is not a regular file or too large."""
        try:
            st = os.stat(path)
        except OSError:
            self.skipped.add("broken link or unreadable", rel)
            return
        if not stat.S_ISREG(st.st_mode):
            return
        if st.st_size > self.rules.max_bytes:
            self.skipped.add("too large", rel)
            return
        self.real_files.add(real)
        key = f"{self.rules.key_prefix}{rel}"
        self.files.append(FileStamp(key, path, st.st_size, st.st_mtime_ns, self.ws_real))


def stamp_files(paths: Iterable[tuple[str, Path, str]]) -> ScanResult:
    """Stat an explicit list of (key, path, boundary) triples, e.g. skill files found in several folders.

    A file whose real path is outside its boundary, or that is not a regular file, is skipped and reported.
    """
    files: list[FileStamp] = []
    skipped = SkipReport()
    for key, path, boundary in paths:
        if not is_inside(os.path.realpath(path), boundary):
            skipped.add("symlink outside root", str(path))
            continue
        try:
            st = path.stat()
        except OSError:
            skipped.add("unreadable", str(path))
            continue
        if not stat.S_ISREG(st.st_mode):
            skipped.add("not a regular file", str(path))
            continue
        files.append(FileStamp(key, str(path), st.st_size, st.st_mtime_ns, boundary))
    files.sort(key=lambda f: f.key)
    return ScanResult(files, skipped)


# is_inside is fsguard's; request.py imports it from here.
__all__ = [
    "REPORT_PATHS_PER_REASON",
    "ListingCache",
    "ScanResult",
    "SkipReport",
    "WalkRules",
    "folder_boundary",
    "is_inside",
    "judge_name",
    "scan_tree",
    "stamp_files",
]
