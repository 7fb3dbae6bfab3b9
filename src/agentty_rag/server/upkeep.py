"""The server's upkeep of one workspace's indexes: the watcher, and a reconciling pass in the background.

With the watcher running, a search re-reads only the files the watcher reported (``index.freshness``).
Every ``AGENTTY_RAG_RECONCILE_S`` seconds a background pass scans the whole tree, for changes a file system
never reported, and writes the manifest's JSON mirror if a commit left it behind. When the watcher is off
or cannot start, searches scan as the command line does; the log and ``status`` say so.

While the watcher starts, searches answer from the scan that started it (and say so); once it watches,
this thread scans each watching index at once, so that no search waits for that scan of the whole tree
unless it comes while the scan runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from agentty_rag.errors import AgenttyError
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.jobs import Job
from agentty_rag.sources.watcher import TreeWatcher, WatchFunction
from agentty_rag.state import watch as watch_state
from agentty_rag.workspace.places import index_names
from agentty_rag.workspace.service import Workspace

log = logging.getLogger(__name__)

# How soon a catch-up scan is tried again when a search (or a build) holds the index.
CATCH_UP_RETRY_S = 0.2


class Upkeep:
    """Watches a workspace for the server and reconciles its indexes; ``stop`` ends both."""

    def __init__(self, workspace: Workspace, watch: WatchFunction | None = None) -> None:
        self.workspace = workspace
        self.watcher: TreeWatcher | None = None
        self._watch = watch
        self._stop = threading.Event()
        self._started = threading.Event()  # the watcher began watching: the indexes catch up
        self._job: Job | None = None

    def start(self) -> None:
        """Start the watcher (when the settings allow it) and the reconciling pass: the workspace's jobs
        ``watch`` and ``reconcile``."""
        settings = self.workspace.settings
        if settings.watch:
            self.watcher = TreeWatcher(self.workspace.root, self._watch, self._record, self.workspace.jobs)
            for name in index_names():
                inbox = self.watcher.inbox()
                index = self.workspace.index(name)
                with index.reading():
                    usable = index.freshness.watch(inbox)
                if not usable:
                    self.watcher.drop(inbox)  # a source outside the workspace: that index scans per search
            self.watcher.start()
        else:
            log.info("AGENTTY_RAG_WATCH=0: every search scans the workspace first")
            self._record("off", "")
        self._job = self.workspace.jobs.start("reconcile", lambda stop: self._reconcile())

    def _reconcile(self) -> None:
        interval = self.workspace.settings.reconcile_s
        due = time.monotonic() + interval
        behind: set[str] = set()  # indexes to catch up with a watcher that just started
        while True:
            wait = CATCH_UP_RETRY_S if behind else due - time.monotonic()
            if self._started.wait(max(0.0, wait)):
                self._started.clear()
                behind = set(index_names())
            if self._stop.is_set() or self.workspace.closed:
                return
            behind = {name for name in sorted(behind) if not self._catch_up(name)}
            if time.monotonic() < due:
                continue
            watching = self.watcher is not None and self.watcher.state == "watching"
            for name in index_names():
                if self._stop.is_set() or self.workspace.closed:
                    return
                self._pass(name, watching)
            due = time.monotonic() + interval

    def _catch_up(self, name: str) -> bool:
        """Scan an index the started watcher has not seen scanned, before a search must; whether done (a busy
        index is tried again shortly)."""
        index = self.workspace.index(name)
        if not index.freshness.behind:
            return True
        with index.reading(timeout=0) as held:
            if held and index.freshness.behind:
                self._guarded(name, lambda: index.refresh(build=False))
            return held

    def _pass(self, name: str, scan: bool) -> None:
        """One index's reconciling pass: never waits for a search, never builds (a build is the warm-up's)."""
        index = self.workspace.index(name)
        with index.reading(timeout=0) as held:
            if held:
                self._guarded(name, lambda: self._reconciled(index, scan))

    @staticmethod
    def _reconciled(index: CorpusIndex, scan: bool) -> None:
        if scan:
            index.refresh(build=False, full_scan=True)
        index.flush_manifest()

    @staticmethod
    def _guarded(name: str, run: Callable[[], object]) -> None:
        """Run a background refresh of an index; a failure is logged (the next search meets it too)."""
        try:
            run()
        except AgenttyError as error:
            log.info("reconciling the %s index: %s", name, error)
        except Exception:
            log.exception("reconciling the %s index failed", name)

    def _record(self, state: str, problem: str) -> None:
        """Tell ``agentty-rag status`` (another process) what this server does."""
        if not self._stop.is_set():
            watch_state.record(self.workspace.state_dir, state, problem)
            if state == "watching":
                self._started.set()

    def stop(self) -> None:
        self._stop.set()
        self._started.set()  # wakes the reconciling thread
        if self.watcher is not None:
            self.watcher.stop()
        if self._job is not None:
            self._job.join(timeout=5)
        watch_state.clear(self.workspace.state_dir)


__all__ = ["Upkeep"]
