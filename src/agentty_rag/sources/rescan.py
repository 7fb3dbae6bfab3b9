"""Looking again at the paths a watcher reported, instead of walking the whole tree.

The walker's last walk (``ListingCache.walked``) knows, for every folder it entered, the path it was reached
by and the ignore rules in force there: a changed file in such a folder is judged by the same rules as a walk
would judge it. Whatever a single path cannot settle — a folder added or removed, a link, an ignore file or a
``pyvenv.cfg``, a folder the last walk never entered although it may be indexed — asks for a full walk.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from agentty_rag.fsguard import is_inside
from agentty_rag.sources.listing import FILE, SKIP, ListingCache
from agentty_rag.sources.walker import WalkRules, judge_name
from agentty_rag.types import FileStamp

# Names whose change alters what a whole folder (or tree) holds.
_TREE_FILES = frozenset({".gitignore", "pyvenv.cfg"})

# key -> the file's new stamp (None: the key is no longer indexed)
Restamped = dict[str, FileStamp | None]


@runtime_checkable
class Rescannable(Protocol):
    """A source that can look again at changed paths only (None: it needs a full scan to tell)."""

    def watched_folder(self) -> Path:
        """The folder whose changes matter to the source."""
        ...

    def walked_folders(self) -> frozenset[str]:
        """The folders its last scan entered: where a watcher looks."""
        ...

    def rescan(self, paths: Iterable[str]) -> Restamped | None: ...


def rescan(
    paths: Iterable[str], start: Path, workspace: Path, rules: WalkRules, cache: ListingCache
) -> Restamped | None:
    """What the changed ``paths`` (real, absolute) now are for a walk of ``start``.

    Returns:
        For each path the walk would give a key to, its new stamp or None (gone, ignored, too large); paths
        outside the walk (an ignored or pruned folder, another folder) are left out. None when only a full
        walk can tell.
    """
    ws_real = os.path.realpath(workspace)
    start_real = os.path.realpath(start)
    tree_wide = {os.path.join(ws_real, ".git", "info", "exclude"), os.path.join(ws_real, ".agentty", "ignore")}
    found: Restamped = {}
    for path in paths:
        if path in tree_wide or path == start_real:
            return None
        if not is_inside(path, start_real):
            continue
        name, folder = os.path.basename(path), os.path.dirname(path)
        listing = cache.walked(folder)
        if listing is None:
            if _outside_the_walk(folder, start_real, rules, cache):
                continue
            return None
        if name in _TREE_FILES or cache.walked(path) is not None:
            return None  # an ignore file, a virtual environment's mark, or a folder that was walked
        if listing.venv:
            continue
        try:
            st: os.stat_result | None = os.lstat(path)
        except FileNotFoundError:
            st = None
        except OSError:
            return None
        if st is not None and not stat.S_ISREG(st.st_mode):
            return None  # a new folder, a link, a FIFO: the walk's rules for those are not per path
        rel = f"{listing.rel}/{name}" if listing.rel else name
        key = f"{rules.key_prefix}{rel}"
        ws_rel = f"{listing.ws_rel}/{name}" if listing.ws_rel else name
        decision = judge_name(rules, name, False, ws_rel, listing.ignore)
        if st is None or decision is None or decision[0] != FILE or st.st_size > rules.max_bytes:
            found[key] = None
        else:
            found[key] = FileStamp(key, path, st.st_size, st.st_mtime_ns, ws_real)
    return found


def _outside_the_walk(folder: str, start_real: str, rules: WalkRules, cache: ListingCache) -> bool:
    """Whether a folder the last walk did not enter lies where no walk goes (a pruned or ignored folder, a
    virtual environment); False when it may be new and indexed."""
    parts: list[str] = []
    current = folder
    while is_inside(current, start_real) and current != start_real:
        parent = os.path.dirname(current)
        parts.append(os.path.basename(current))
        listing = cache.walked(parent)
        if listing is not None:
            if listing.venv:
                return True
            child = parts[-1]
            ws_rel = f"{listing.ws_rel}/{child}" if listing.ws_rel else child
            if os.path.islink(os.path.join(parent, child)):
                return False
            decision = judge_name(rules, child, True, ws_rel, listing.ignore)
            return decision is None or decision[0] == SKIP
        current = parent
    return False


__all__ = ["Rescannable", "Restamped", "rescan"]
