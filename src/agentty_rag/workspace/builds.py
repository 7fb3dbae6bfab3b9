"""Index builds outside a request: a server's background job, and the hook's detached process."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from agentty_rag.errors import AgenttyError, IndexCorrupt
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.storage.ingest import PartPool
from agentty_rag.index.storage.lock import held as lock_held
from agentty_rag.index.storage.refresh import Parts
from agentty_rag.jobs import Job, Stop, Supervisor

log = logging.getLogger(__name__)

# How long a build in parts lets the searches that came during a part go first.
_READER_TURN_S = 5.0


class Builds:
    """The builds of one workspace's indexes that run outside a request.

    Args:
        root: the workspace root (a detached build is started for it).
        index: the workspace's index of a name.
        batch: files per part of a build in the background (``AGENTTY_RAG_BUILD_BATCH``).
        jobs: the workspace's supervisor: a build is its job ``build:NAME`` (one at a time per index, run again
            after a back-off if it raises; its stop ends a build in parts at the next part).
    """

    def __init__(self, root: Path, index: Callable[[str], CorpusIndex], batch: int, jobs: Supervisor) -> None:
        self.root = root
        self.index = index
        self.batch = batch
        self.jobs = jobs
        self._guard = threading.Lock()
        self._searchable: dict[str, threading.Event] = {}

    def start(self, name: str) -> Job:
        """The job that builds an index in the background (started when none is running)."""
        with self._guard:
            key = f"build:{name}"
            if self.jobs.running(key):
                job = self.jobs.job(key)
                assert job is not None
                return job
            searchable = self._searchable[name] = threading.Event()
            return self.jobs.start(key, lambda stop: self._build(name, searchable, stop))

    def wait_searchable(self, name: str, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the build of ``name`` to commit its first part (or to end);
        whether it did."""
        with self._guard:
            searchable = self._searchable.get(name)
        return searchable is None or searchable.wait(max(0.0, timeout))

    def _build(self, name: str, searchable: threading.Event, stop: Stop) -> None:
        """Build in parts of ``batch`` files, so that searches answer from the first part on: the index is
        held for one part at a time, and a search that came during a part goes before the next. A failure the
        index reports (``AgenttyError``) is logged and left to the next search; anything else raises to the
        supervisor, which runs the build again after a back-off."""
        index = self.index(name)
        parts = Parts(self.batch, PartPool())
        try:
            while True:
                report = index.refresh(full_scan=True, parts=parts)
                searchable.set()
                if report.rebuilt and index.partial is None:
                    log.info("%s index built: %d chunks in %.1f s", name, report.chunks_added, report.seconds)
                if stop.requested:
                    return
                if index.partial is None:
                    if parts.scan is not None:  # built from one scan: catch up with the edits made meanwhile
                        index.refresh(full_scan=True)
                    return
                index.let_readers_in(timeout=_READER_TURN_S)
        except AgenttyError as error:
            log.warning("building the %s index: %s", name, error)
        finally:
            parts.pool.close()
            searchable.set()

    def detached(self, name: str) -> str:
        """When an index must be built first, start ``agentty-rag index NAME`` as a detached process.

        For callers that must answer fast (the proactive hook): they stay quiet this turn instead of
        building inside their time limit. Returns what was done ("" when the index can be used now).
        """
        index = self.index(name)
        if not index.config.sources:
            return ""
        if lock_held(index.config.lock_path):
            return f"the {name} index is being built by another process"
        with index.reading():
            try:
                reason = index.needs_build()
            except IndexCorrupt as error:
                reason = str(error)
        if not reason:
            return ""
        import subprocess  # only a hook that builds needs it

        subprocess.Popen(
            [sys.executable, "-m", "agentty_rag", "--root", str(self.root), "index", name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        return f"the {name} index needed a build ({reason}); building it in the background"


__all__ = ["Builds"]
