"""How one index learns what changed on disk since its last refresh: a scan, or a watcher's reports.

On the command line (and in a server whose watcher is off or failed) every refresh scans the sources — a
stat per file, the walker reusing unchanged folders. In a server whose watcher runs, a refresh looks only
at the paths the watcher reported since the last one, and at none when it reported nothing: the search
does not touch the tree. A full scan still happens when the watcher has just started (events before it
ran are unknown; so after each restart to follow new folders), after an overflow, when a path cannot be
settled alone (a folder, a link, an ignore file), and from the server's reconciling thread every few
seconds, for events a file system never sent.

While the watcher starts (the first scan told it which folders to watch; a restart follows new ones), a
refresh does not scan again: it answers from the last full scan when that began less than ``START_WINDOW_S``
ago, and the result says nothing of it (a second or so; ``status`` says the watcher is starting). A tree that
scans in under ``CHEAP_SCAN_S`` is simply scanned again. The scan after the watcher's start then finds edits
made meanwhile (the server runs it in the background). An edit made before the server started is always
seen: the first refresh scans.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence

from agentty_rag.fsguard import is_inside
from agentty_rag.index.storage.manifest import Diff, Scan, diff, diff_keys, scan
from agentty_rag.index.storage.store import FileRow
from agentty_rag.sources.base import Source
from agentty_rag.sources.rescan import Rescannable
from agentty_rag.sources.watcher import Inbox

# How long, while the watcher starts, a refresh answers from the last full scan instead of scanning again;
# and the scan cost below which it scans again anyway (exact, and cheaper than the doubt it would leave).
START_WINDOW_S = 10.0
CHEAP_SCAN_S = 0.03


class Freshness:
    """One index's view of its files on disk (not thread-safe: the index lock is held around every call)."""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = sources
        self.inbox: Inbox | None = None
        self.last: Scan | None = None
        self.full_scans = 0  # for measurements and tests: how many refreshes walked the whole tree
        self._epoch = -1  # the watcher's epoch a full scan began in (its reports are trusted from then on)
        self._clean = False  # the last scan was committed (nothing it found is still to be written)
        self._generation = -2  # the database generation the last refresh left
        self._scanned_at = -math.inf  # when the last full scan since ``watch`` began (time.monotonic)
        self._scan_s = 0.0  # how long it took

    def watch(self, inbox: Inbox) -> bool:
        """Use a watcher's reports when every source can look again at single paths and lies inside the
        watched folder; whether it will."""
        root = inbox.watcher.root
        usable = all(
            isinstance(s, Rescannable) and is_inside(os.path.realpath(s.watched_folder()), root) for s in self.sources
        )
        self.inbox = inbox if usable else None
        self._epoch = -1
        self._scanned_at = -math.inf  # only a scan made from now on may stand in while the watcher starts
        return usable

    def describe(self) -> str:
        """How the index finds changes, for ``status``."""
        inbox = self.inbox
        if inbox is None:
            return "scans the files before every search"
        watcher = inbox.watcher
        if watcher.state == "failed":
            return f"the watcher failed ({watcher.problem}): scans the files before every search"
        if watcher.state == "watching":
            return f"watches {watcher.root}: a search re-reads only the files that changed"
        if watcher.state == "starting":
            return f"the watcher is starting: a search uses the last scan (at most {START_WINDOW_S:.0f} s old)"
        return f"the watcher is {watcher.state}: scans the files before every search"

    def changes(self, files: Mapping[str, FileRow], generation: int, full: bool = False) -> tuple[Scan, Diff]:
        """What the sources hold now, and how it differs from the manifest's rows ``files``.

        Args:
            files: the manifest's rows.
            generation: the database generation they are of (another process's commit changes it).
            full: scan everything whatever the watcher says (a reconciling pass, a rebuild).
        """
        inbox = self.inbox
        if inbox is not None and not full and self.last is not None and inbox.starting:
            age = time.monotonic() - self._scanned_at
            if age < START_WINDOW_S and self._scan_s >= CHEAP_SCAN_S:
                clean = self._clean and generation == self._generation
                return self.last, Diff() if clean else diff(files, self.last)
        if inbox is None or full or self.last is None or not inbox.ready or inbox.epoch != self._epoch:
            return self._full_scan(files)
        paths, overflow = inbox.take()
        if overflow:
            return self._full_scan(files)
        last = self.last
        # Clean: the last refresh committed what it found, and no other process has committed since.
        clean = self._clean and generation == self._generation
        if not paths and clean:
            return last, Diff()
        touched = self._restamp(last, paths)
        if touched is None:
            return self._full_scan(files)
        self._clean = False
        return last, diff_keys(files, last, touched) if clean else diff(files, last)

    @property
    def behind(self) -> bool:
        """Whether the watcher runs but this index has not scanned since it started (its next refresh will)."""
        inbox = self.inbox
        return inbox is not None and inbox.ready and inbox.epoch != self._epoch

    def settled(self, generation: int) -> None:
        """The last scan is what the index now holds, as of this database generation."""
        self._clean = True
        self._generation = generation

    def _full_scan(self, files: Mapping[str, FileRow]) -> tuple[Scan, Diff]:
        inbox = self.inbox
        self._epoch = inbox.epoch if inbox is not None and inbox.ready else -1
        if inbox is not None:
            inbox.take()  # the scan covers them; what changes from now on is reported again
        self._scanned_at = time.monotonic()
        self.last = scan(self.sources)
        self._scan_s = time.monotonic() - self._scanned_at
        self.full_scans += 1
        self._clean = False
        if inbox is not None:
            inbox.want(frozenset().union(*(s.walked_folders() for s in self.sources if isinstance(s, Rescannable))))
        return self.last, diff(files, self.last)

    def _restamp(self, last: Scan, paths: set[str]) -> set[str] | None:
        """Apply the changed paths to ``last`` in place; the keys touched (None: a full scan must tell)."""
        touched: set[str] = set()
        for source in self.sources:
            assert isinstance(source, Rescannable)
            restamped = source.rescan(paths)
            if restamped is None:
                return None
            for key, stamp in restamped.items():
                owner = last.owners.get(key)
                if owner is not None and owner is not source:
                    continue  # an earlier source lists the key
                touched.add(key)
                if stamp is None:
                    last.stamps.pop(key, None)
                    last.owners.pop(key, None)
                else:
                    last.stamps[key] = stamp
                    last.owners[key] = source
        return touched


__all__ = ["CHEAP_SCAN_S", "START_WINDOW_S", "Freshness"]
