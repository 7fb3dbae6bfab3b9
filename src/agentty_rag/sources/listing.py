"""What a walk decided in each folder, kept so that the next walk does not list an unchanged folder again.

Adding, removing or renaming an entry changes its folder's mtime (and ctime); editing a file does not, so
a reused folder's files are still stat'ed one by one. A folder's decisions are reused only when its stat
(inode, mtime, ctime), the path it was reached by and the ignore rules in force (each ignore file's own
stat) are what they were. Two more cautions keep it exact:

* a folder changed within ``RACY_NS`` of the walk is listed again next time: a change in the same clock
  tick as the listing would leave the mtime as it was (git's "racy" entries);
* a symlink is judged anew on every walk: its target can change without its folder changing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from agentty_rag.sources.ignore import Ignore

# What a walk does with one entry of a folder.
DIR, FILE, SKIP, LINK = 0, 1, 2, 3
# (what, the entry's name, the skip reason for SKIP)
Decision = tuple[int, str, str]
# A decision with its paths: (what, name, reason, path from the walk's start, real path, path in the workspace)
Step = tuple[int, str, str, str, str, str]
FolderSignature = tuple[int, int, int]

# A folder whose mtime is this close to the walk is listed again next time.
RACY_NS = 2_000_000_000


def folder_signature(path: str) -> FolderSignature:
    """What changes when an entry of the folder is added, removed or renamed (raises when it is gone)."""
    st = os.stat(path)
    return (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


@dataclass
class Listing:
    """One folder's decisions, and what they were made under."""

    signature: FolderSignature | None
    ws_rel: str
    rel: str
    gitignore: bool  # the folder holds a .gitignore (its rules are part of ``ignore``)
    ignore: Ignore  # the rules in force for the folder's entries
    venv: bool = False  # a virtual environment: nothing in it is indexed
    trusted: bool = False  # old enough to be reused by the next walk without listing the folder again
    steps: list[Step] = field(default_factory=list)  # the decisions, in name order


class ListingCache:
    """The folders of the last walk of one source (its rules never change). One walk at a time."""

    def __init__(self) -> None:
        self._folders: dict[str, Listing] = {}
        self._next: dict[str, Listing] = {}
        self._started = time.time_ns()
        self.reused = 0  # folders reused in the current walk (for measurements)

    def __reduce__(self) -> tuple[type[ListingCache], tuple[()]]:
        """A copy sent to another process (a build's workers get the source) starts empty: the compiled
        ignore rules cannot be pickled, and the workers never walk."""
        return (ListingCache, ())

    def begin(self) -> None:
        """Start a walk (its start time decides which folders changed too recently to be kept)."""
        self._next = {}
        self._started = time.time_ns()
        self.reused = 0

    def reuse(
        self, real_dir: str, signature: FolderSignature, ws_rel: str, rel: str, parent: Ignore, boundary: str
    ) -> Listing | None:
        """The folder's listing from the last walk, when it still holds (its rules re-checked by stat)."""
        listing = self._folders.get(real_dir)
        if listing is None or not listing.trusted or listing.signature != signature:
            return None
        if (listing.ws_rel, listing.rel) != (ws_rel, rel):
            return None
        ignore = parent
        if rel and listing.gitignore and not listing.venv:
            ignore = parent.with_file(ws_rel, Path(real_dir) / ".gitignore", boundary)
        if ignore.key != listing.ignore.key or not ignore.cacheable:
            return None
        listing.ignore = ignore
        self._next[real_dir] = listing
        self.reused += 1
        return listing

    def store(self, real_dir: str, listing: Listing) -> None:
        """Keep a fresh listing: for the next walk to reuse unless its folder changed too recently to be
        trusted, and in any case to tell ``walked`` what the folder's rules are."""
        signature = listing.signature
        recent = signature is None or signature[1] > self._started - RACY_NS
        listing.trusted = not recent and listing.ignore.cacheable
        self._next[real_dir] = listing

    def folders(self) -> frozenset[str]:
        """Every folder the last finished walk entered (real paths)."""
        return frozenset(self._folders)

    def walked(self, real_dir: str) -> Listing | None:
        """The folder as the last finished walk saw it (None: it did not walk it)."""
        return self._folders.get(real_dir)

    def finish(self) -> None:
        """End a walk: what it saw is what the next one may reuse (folders gone since are forgotten)."""
        self._folders, self._next = self._next, {}


__all__ = [
    "DIR",
    "FILE",
    "LINK",
    "RACY_NS",
    "SKIP",
    "Decision",
    "Listing",
    "ListingCache",
    "Step",
    "folder_signature",
]
