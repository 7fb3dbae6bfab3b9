"""Watching a workspace for changes, so that a server's search need not walk the tree first.

A ``TreeWatcher`` runs ``watchfiles`` (inotify, FSEvents, ReadDirectoryChangesW underneath) in a thread on
the folders the walks entered and hands each index an ``Inbox`` of the paths changed since it last looked.
The watcher only says *where* to look; what a path means (indexed, ignored, too large) is still decided by
the walker's rules.

The inbox is trusted only once the watcher is running (``ready``). While it starts, an index answers from
the scan that started it (``index.storage.freshness``); after it fails (no notification support, too many
folders to watch), an index scans before every search as the command line does, and ``problem`` says why.
Events that come faster than they can be kept (a checkout, a build) set ``overflow``: the next refresh scans
everything.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from agentty_rag.jobs import Job, Stop, Supervisor
from agentty_rag.source_kinds import state_folders

log = logging.getLogger(__name__)

# Changed paths an inbox keeps; past this a full scan is cheaper than looking at each.
OVERFLOW_PATHS = 2_000
# How long the watcher waits for a burst of changes to end (ms), and the longest it groups them.
STEP_MS = 10
DEBOUNCE_MS = 100
# How often the watcher thread wakes with nothing to report (it tells ``ready`` the first time).
TIMEOUT_MS = 1_000

# The folders whose events never matter: version-control data and this tool's own files (its writes would
# otherwise wake it after every commit), except what under .agentty holds sources: the ignore rules and the
# source kinds' folders (``SourceSpec.state_folder``).
_QUIET_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules", ".mypy_cache", ".ruff_cache"})
_STATE_SOURCES = frozenset({*state_folders(), "ignore"})


def relevant(root: str, path: str) -> bool:
    """Whether a change at ``path`` can matter to an index (a cheap filter run on every event)."""
    rel = path[len(root) + 1 :] if path.startswith(root + os.sep) else path
    parts = rel.split(os.sep)
    if parts[0] == ".agentty":
        return len(parts) > 1 and parts[1] in _STATE_SOURCES
    if parts[0] == ".git":
        return parts[1:] == ["info", "exclude"]
    return not any(part in _QUIET_DIRS for part in parts[:-1])


class Inbox:
    """The changes one index has not looked at yet."""

    def __init__(self, watcher: TreeWatcher) -> None:
        self.watcher = watcher
        self._lock = threading.Lock()
        self._paths: set[str] = set()
        self._overflow = False

    @property
    def ready(self) -> bool:
        """Whether the watcher runs, so that an empty inbox means nothing changed (since ``epoch`` began)."""
        return self.watcher.state == "watching"

    @property
    def starting(self) -> bool:
        """Whether the watcher is starting (first, or again to follow new folders): soon ``ready``."""
        return self.watcher.state == "starting"

    @property
    def epoch(self) -> int:
        return self.watcher.epoch

    def want(self, folders: frozenset[str]) -> None:
        """Watch these folders (the ones the index's last full scan walked)."""
        self.watcher.want(self, folders)

    def put(self, paths: Iterable[str]) -> None:
        with self._lock:
            if not self._overflow:
                self._paths.update(paths)
                if len(self._paths) > OVERFLOW_PATHS:
                    self._overflow, self._paths = True, set()

    def overflow(self) -> None:
        with self._lock:
            self._overflow, self._paths = True, set()

    def pending(self) -> bool:
        with self._lock:
            return self._overflow or bool(self._paths)

    def take(self) -> tuple[set[str], bool]:
        """The changed paths and whether there were too many to list (then: scan everything); emptied."""
        with self._lock:
            paths, overflow = self._paths, self._overflow
            self._paths, self._overflow = set(), False
            return paths, overflow


# watchfiles.watch, or a stand-in with its signature (tests).
WatchFunction = Callable[..., Iterator[set[tuple[Any, str]]]]


class _Either:
    """A stop event for ``watchfiles``: set when any of its events is."""

    def __init__(self, *events: threading.Event | Stop) -> None:
        self.events = events

    def is_set(self) -> bool:
        return any(event.is_set() for event in self.events)


class TreeWatcher:
    """A thread watching the folders the indexes' walks entered; their events go to every inbox.

    Each folder is watched on its own, not recursively: a watch never follows a link out of the workspace
    nor enters a pruned or ignored folder (``node_modules``, a build output). When the walked folders change
    (a folder was added), the watcher starts again with the new set; until it runs again, the indexes scan.

    ``state`` is ``starting``, ``watching``, ``stopped``, or ``failed`` (with ``problem`` saying why);
    ``epoch`` counts the times it started watching, so that an index knows a restart may have lost events.
    """

    def __init__(
        self,
        root: Path,
        watch: WatchFunction | None = None,
        on_state: Callable[[str, str], None] | None = None,
        jobs: Supervisor | None = None,
    ) -> None:
        self.root = os.path.realpath(root)
        self.jobs = jobs if jobs is not None else Supervisor()
        self.state = "starting"
        self.problem = ""
        self.epoch = 0
        self._watch = watch
        self._on_state = on_state  # told (state, problem) when the watcher starts watching or fails
        self._inboxes: list[Inbox] = []
        self._wanted: dict[int, frozenset[str]] = {}  # the folders each inbox's index walked
        self._watched: frozenset[str] = frozenset()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._restart = threading.Event()  # the wanted folders changed
        self._job: Job | None = None
        self._ready = threading.Event()

    def inbox(self) -> Inbox:
        """A new inbox, receiving every change from now on."""
        inbox = Inbox(self)
        self._inboxes.append(inbox)
        return inbox

    def drop(self, inbox: Inbox) -> None:
        """Stop filling an inbox nobody reads."""
        if inbox in self._inboxes:
            self._inboxes.remove(inbox)
        self.want(inbox, frozenset())

    def want(self, inbox: Inbox, folders: frozenset[str]) -> None:
        """The folders an inbox's index walked (after each full scan); the watcher follows the union."""
        with self._lock:
            self._wanted[id(inbox)] = folders
            if self._union() != self._watched:
                self._restart.set()

    def _union(self) -> frozenset[str]:
        folders: set[str] = set()
        for wanted in self._wanted.values():
            folders |= wanted
        if folders:  # the workspace-wide ignore files live in folders no walk enters
            folders |= {os.path.join(self.root, ".git", "info"), os.path.join(self.root, ".agentty")}
        return frozenset(f for f in folders if os.path.isdir(f))

    def start(self) -> None:
        """Watch in the job ``watch``: a watcher that failed is started again after the supervisor's back-off
        (the indexes scan meanwhile), so a passing failure does not leave the session scanning for good."""
        self._job = self.jobs.start("watch", self._run)

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the watcher runs or failed; whether it runs."""
        self._ready.wait(timeout)
        return self.state == "watching"

    def stop(self) -> None:
        self._stop.set()
        if self._job is not None:
            self._job.join(timeout=5)
        if self.state != "failed":
            self.state = "stopped"

    def _run(self, stop: Stop) -> None:
        if self.state == "failed":  # run again after a failure: follow the wanted folders from the start
            self._restart.set()
        try:
            while not (self._stop.is_set() or stop.requested):
                if not self._restart.wait(0.05):
                    continue
                with self._lock:
                    self._restart.clear()
                    self._watched = self._union()
                if self._watched:
                    self.state = "starting"
                    self._follow(self._watched, stop)
        except Exception as error:  # any failure of the watcher leaves the indexes to scan: say why, and run again
            self._fail(f"{type(error).__name__}: {error}")
            if not (self._stop.is_set() or stop.requested):
                raise
        finally:
            self._ready.set()

    def _follow(self, folders: frozenset[str], stop: Stop) -> None:
        """Hand every change to the inboxes until the watcher is stopped or its folders change."""
        for changes in self._changes(folders, stop):
            if self._stop.is_set() or stop.requested:
                break
            if self.state == "starting":
                self.state = "watching"
                self.epoch += 1
                self._ready.set()
                self._tell()
            root = self.root
            paths = [path for _, path in changes if relevant(root, path)]
            if paths:
                for inbox in list(self._inboxes):
                    inbox.put(paths)  # still true when a restart is due: they happened before it
            if self._restart.is_set():
                break
        if not (self._stop.is_set() or stop.requested or self._restart.is_set()):
            raise RuntimeError("the watcher stopped")

    def _fail(self, problem: str) -> None:
        again = self.state == "failed" or self.problem == problem  # the same failure after a run again: once is news
        self.problem = problem
        self.state = "failed"
        (log.info if again else log.warning)(
            "watching %s failed (%s); every search scans the tree until it watches again", self.root, problem
        )
        for inbox in list(self._inboxes):
            inbox.overflow()
        self._tell()

    def _tell(self) -> None:
        if self._on_state is not None:
            self._on_state(self.state, self.problem)

    def _changes(self, folders: frozenset[str], stop: Stop) -> Iterator[set[tuple[Any, str]]]:
        watch = self._watch
        if watch is None:
            import watchfiles  # only a server watches: the command line never pays for the import

            watch = watchfiles.watch
            quiet = logging.getLogger("watchfiles")
            if quiet.level == logging.NOTSET:
                quiet.setLevel(logging.WARNING)  # it logs every batch of changes at INFO
        # No filter here: watchfiles yields nothing for a batch its filter empties and starts its timeout
        # again, so the index's own writes in .agentty/ (a build, a patch) kept the first yield, and with it
        # ``watching``, away for as long as they went on. ``_follow`` drops what is not ``relevant``.
        return watch(
            *sorted(folders),
            watch_filter=None,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=_Either(self._stop, self._restart, stop),
            rust_timeout=TIMEOUT_MS,
            yield_on_timeout=True,
            debug=False,  # watchfiles' debug output goes to stdout, the MCP protocol's channel
            raise_interrupt=False,
            force_polling=False,  # polling a large tree costs more than the scan it would replace
            recursive=False,  # each walked folder alone: no link followed out, no pruned folder entered
            ignore_permission_denied=True,
        )


__all__ = ["OVERFLOW_PATHS", "Inbox", "TreeWatcher", "WatchFunction", "relevant"]
