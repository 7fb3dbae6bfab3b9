"""The server's upkeep of one workspace's indexes: the watcher, and a reconciling pass in the background.

With the watcher running, a search re-reads only the files the watcher reported (``index.freshness``).
Every ``AGENTTY_RAG_RECONCILE_S`` seconds a background pass scans the whole tree, for changes a file system
never reported, and writes the manifest's JSON mirror if a commit left it behind. When the watcher is off
or cannot start, searches scan as the command line does; the log and ``status`` say so.
"""

from __future__ import annotations

import logging
import threading

from agentty_rag.errors import AgenttyError
from agentty_rag.sources.watcher import TreeWatcher, WatchFunction
from agentty_rag.state import watch as watch_state
from agentty_rag.workspace.places import index_names
from agentty_rag.workspace.service import Workspace

log = logging.getLogger(__name__)


class Upkeep:
    """Watches a workspace for the server and reconciles its indexes; ``stop`` ends both."""

    def __init__(self, workspace: Workspace, watch: WatchFunction | None = None) -> None:
        self.workspace = workspace
        self.watcher: TreeWatcher | None = None
        self._watch = watch
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the watcher (when the settings allow it) and the reconciling thread."""
        settings = self.workspace.settings
        if settings.watch:
            self.watcher = TreeWatcher(self.workspace.root, self._watch, self._record)
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
        self._thread = threading.Thread(target=self._reconcile, name="agentty-reconcile", daemon=True)
        self._thread.start()

    def _reconcile(self) -> None:
        interval = self.workspace.settings.reconcile_s
        while not self._stop.wait(interval):
            watching = self.watcher is not None and self.watcher.state == "watching"
            for name in index_names():
                if self._stop.is_set() or self.workspace.closed:
                    return
                self._pass(name, watching)

    def _pass(self, name: str, scan: bool) -> None:
        """One index's reconciling pass: never waits for a search, never builds (a build is the warm-up's)."""
        index = self.workspace.index(name)
        with index.reading(timeout=0) as held:
            if not held:
                return
            try:
                if scan:
                    index.refresh(build=False, full_scan=True)
                index.flush_manifest()
            except AgenttyError as error:
                log.info("reconciling the %s index: %s", name, error)
            except Exception:
                log.exception("reconciling the %s index failed", name)

    def _record(self, state: str, problem: str) -> None:
        """Tell ``agentty-rag status`` (another process) what this server does."""
        if not self._stop.is_set():
            watch_state.record(self.workspace.state_dir, state, problem)

    def stop(self) -> None:
        self._stop.set()
        if self.watcher is not None:
            self.watcher.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
        watch_state.clear(self.workspace.state_dir)


__all__ = ["Upkeep"]
