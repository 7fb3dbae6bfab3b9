"""The server's workspace over its lifetime: found at start, replaced once by the client's MCP roots, warmed
up in the background, closed on shutdown."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mcp.server.mcpserver.exceptions import ToolError

from agentty_rag.config import Settings
from agentty_rag.jobs import JobReport, Stop
from agentty_rag.state import watch as watch_state
from agentty_rag.workspace.discovery import Located, from_roots

if TYPE_CHECKING:
    from agentty_rag.server.upkeep import Upkeep
    from agentty_rag.workspace.service import Workspace

log = logging.getLogger(__name__)

# How long closing waits for the first workspace to finish opening.
CLOSE_OPEN_WAIT_S = 30.0


class Session:
    """The server's workspace: the one found at start, replaced once by the client's MCP roots.

    ``--root`` wins over roots. When the start folder cannot be a workspace (the file-system root, the home
    folder, a system folder) and no roots arrive, every tool call says so and names ``--root``.
    """

    def __init__(self, located: Located, settings: Settings) -> None:
        self.located = located
        self.settings = settings
        self.explicit = located.how == "--root"
        self.roots_pending = not self.explicit  # ask a client that declares roots, once (again after a change)
        self._workspace: Workspace | None = None
        self.upkeep: Upkeep | None = None  # the current workspace's watcher and reconciling pass
        self._lock = threading.Lock()
        # The first workspace is opened off the handshake (``warm_up``): opening loads the retrieval stack,
        # which the initialize reply does not need. Set once it is open (or there is none to open).
        self._opened = threading.Event()
        self._opening = False
        if located.root is None:
            self._opened.set()

    @property
    def workspace(self) -> Workspace | None:
        """The current workspace (None when there is none), once the first one is open."""
        with self._lock:
            inline = not (self._opening or self._opened.is_set())
            self._opening = True
        if inline:  # no warm-up started: open it here
            self._open_first()
        self._opened.wait()
        return self._workspace

    def _open_first(self) -> Workspace | None:
        try:
            workspace = self._open(self.located)
            with self._lock:
                if self._workspace is None:
                    self._workspace = workspace
                return self._workspace
        finally:
            self._opened.set()

    def _open(self, located: Located) -> Workspace:
        from agentty_rag.workspace.service import Workspace  # the retrieval stack: loaded after the handshake

        assert located.root is not None
        workspace = Workspace(located.root, self.settings, start=located.start)
        workspace.background_embedding = True
        workspace.background_builds = True  # a request never builds an index past the build wait
        workspace.jobs.on_change = lambda jobs: record_jobs(workspace.state_dir, jobs.reports())
        return workspace

    def warm_up(self) -> None:
        """Open the first workspace (in a thread of its own: the handshake goes on meanwhile), then start
        watching it and building its indexes in its background jobs."""
        with self._lock:
            first = not (self._opening or self._opened.is_set())
            self._opening = True
        if first:
            # A plain thread, not a job: the supervisor belongs to the workspace this thread opens.
            threading.Thread(target=self._open_and_warm, name="agentty-open", daemon=True).start()
        else:
            self._warm(self.workspace)

    def _open_and_warm(self) -> None:
        try:
            workspace = self._open_first()
        except Exception:  # every tool call then says there is no workspace
            log.exception("opening the workspace %s failed", self.located.root)
            return
        self._warm(workspace)

    def _warm(self, workspace: Workspace | None) -> None:
        from agentty_rag.server import upkeep  # with the retrieval stack, after the handshake

        if workspace is not None:
            with self._lock:
                if self.upkeep is None or self.upkeep.workspace is not workspace:
                    self.upkeep = upkeep.Upkeep(workspace)
                    self.upkeep.start()
            workspace.jobs.start("warm-up", lambda stop: warm_up(workspace, stop))

    def adopt_roots(self, uris: list[str]) -> None:
        """Switch to the first of the client's roots that can be a workspace (no change when none can)."""
        self.roots_pending = False
        located = from_roots(uris, self.located.start, self.settings.home)
        if located is None or located.root is None:
            if uris:
                log.info("no usable folder among the client's roots %s; keeping %s", uris, self.located.root)
            return
        current = self.workspace  # the first one open
        with self._lock:
            if current is not None and current.root == located.root:
                return
            previous, self._workspace, self.located = current, self._open(located), located
            previous_upkeep, self.upkeep = self.upkeep, None
        log.info("workspace from the client's roots: %s", located.root)
        self.warm_up()
        if previous_upkeep is not None:
            previous_upkeep.stop()
        if previous is not None:
            previous.close()

    def require(self) -> Workspace:
        """The workspace, or a tool error that says why there is none and what to do."""
        workspace = self.workspace
        if workspace is None:
            raise ToolError(
                f"no workspace: {self.located.problem}. Add --root DIR to the server's arguments in the "
                "client's configuration (agentty-rag init CLIENT writes it), or use a client that sends MCP roots."
            )
        return workspace

    def close(self) -> None:
        """Close the workspace: the server is shutting down."""
        self._opened.wait(CLOSE_OPEN_WAIT_S)  # a workspace still opening is closed by the process's exit
        with self._lock:
            workspace, upkeep = self._workspace, self.upkeep
        if upkeep is not None:
            upkeep.stop()
        if workspace is not None:
            workspace.close()


def record_jobs(state_dir: Path, reports: tuple[JobReport, ...]) -> None:
    """Tell ``agentty-rag status`` (another process) what the background jobs do."""
    watch_state.record_jobs(state_dir, [(r.key, r.failures, r.describe()) for r in reports])


@dataclass
class AppState:
    """What the server's lifespan gives every request: the session, and through it the workspace."""

    session: Session


def warm_up(workspace: Workspace, stop: Stop) -> None:
    """Probe the embedding server, open or build every index, then embed what has no vector yet.

    The workspace's job ``warm-up``: the MCP handshake never waits for it, and BM25 answers as soon as an
    index is built (the header says ``partial`` until every chunk has a vector). A workspace closed
    meanwhile (the server shut down, or the client's roots chose another) stops it at the next step.
    """
    from agentty_rag.workspace.places import index_names

    workspace.resources.start()  # other MCP servers start reading at once (AGENTTY_RAG_MCP=1), beside the builds
    status = workspace.dense.ensure()
    log.info("dense leg: %s", workspace.dense.describe())
    for name in index_names():
        if stop.requested:
            return
        # The build a search would start (in parts, searchable from the first): one per index, in turn.
        workspace.builds.start(name).join()
    if status.state == "unavailable":
        status = workspace.dense.wait_available(stop)
        if status.state == "ready" and not stop.requested:
            log.info("dense leg: %s", workspace.dense.describe())
    if status.state == "ready":
        for name in index_names():
            if stop.requested:
                return
            workspace.dense.embed_in_background(workspace.index(name)).join()


__all__ = ["AppState", "Session", "warm_up"]
