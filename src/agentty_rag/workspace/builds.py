"""Index builds outside a request: a server's background thread, and the hook's detached process."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from agentty_rag.errors import AgenttyError, IndexCorrupt
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.storage.lock import held as lock_held

log = logging.getLogger(__name__)


class Builds:
    """The builds of one workspace's indexes that run outside a request.

    Args:
        root: the workspace root (a detached build is started for it).
        index: the workspace's index of a name.
    """

    def __init__(self, root: Path, index: Callable[[str], CorpusIndex]) -> None:
        self.root = root
        self.index = index
        self._guard = threading.Lock()
        self._building: dict[str, threading.Thread] = {}

    def thread(self, name: str) -> threading.Thread:
        """The thread that builds an index in the background (started when none is running)."""
        with self._guard:
            running = self._building.get(name)
            if running is not None and running.is_alive():
                return running
            thread = threading.Thread(target=self._build, args=(name,), name=f"agentty-build-{name}", daemon=True)
            self._building[name] = thread
            thread.start()
            return thread

    def _build(self, name: str) -> None:
        index = self.index(name)
        try:
            index.refresh()
        except AgenttyError as error:
            log.warning("building the %s index: %s", name, error)

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
                reason = index.needs_rebuild()
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
