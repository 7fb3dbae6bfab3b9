"""The server's workspace over its lifetime: found at start, replaced once by the client's MCP roots, warmed
up in the background, closed on shutdown."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from mcp.server.mcpserver.exceptions import ToolError

from agentty_rag.config import Settings
from agentty_rag.server.upkeep import Upkeep
from agentty_rag.workspace.dense_backend import DenseStatus
from agentty_rag.workspace.discovery import Located, from_roots
from agentty_rag.workspace.places import index_names
from agentty_rag.workspace.service import Workspace

log = logging.getLogger(__name__)


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
        self.workspace: Workspace | None = None
        self.upkeep: Upkeep | None = None  # the current workspace's watcher and reconciling pass
        self._lock = threading.Lock()
        if located.root is not None:
            self.workspace = self._open(located)

    def _open(self, located: Located) -> Workspace:
        assert located.root is not None
        workspace = Workspace(located.root, self.settings, start=located.start)
        workspace.background_embedding = True
        workspace.background_builds = True  # a request never builds an index past the build wait
        return workspace

    def warm_up(self) -> None:
        """Start watching the current workspace and building its indexes in the background."""
        workspace = self.workspace
        if workspace is not None:
            with self._lock:
                if self.upkeep is None or self.upkeep.workspace is not workspace:
                    self.upkeep = Upkeep(workspace)
                    self.upkeep.start()
            threading.Thread(target=warm_up, args=(workspace,), name="agentty-warm-up", daemon=True).start()

    def adopt_roots(self, uris: list[str]) -> None:
        """Switch to the first of the client's roots that can be a workspace (no change when none can)."""
        self.roots_pending = False
        located = from_roots(uris, self.located.start, self.settings.home)
        if located is None or located.root is None:
            if uris:
                log.info("no usable folder among the client's roots %s; keeping %s", uris, self.located.root)
            return
        with self._lock:
            if self.workspace is not None and self.workspace.root == located.root:
                return
            previous, self.workspace, self.located = self.workspace, self._open(located), located
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
        with self._lock:
            workspace, upkeep = self.workspace, self.upkeep
        if upkeep is not None:
            upkeep.stop()
        if workspace is not None:
            workspace.close()


@dataclass
class AppState:
    """What the server's lifespan gives every request: the session, and through it the workspace."""

    session: Session


def warm_up(workspace: Workspace) -> None:
    """Probe the embedding server, open or build every index, then embed what has no vector yet.

    Runs in a background thread: the MCP handshake never waits for it, and BM25 answers as soon as an
    index is built (the header says ``partial`` until every chunk has a vector). A workspace closed
    meanwhile (the server shut down, or the client's roots chose another) is left at the next step.
    """
    workspace.resources.start()  # other MCP servers start reading at once (AGENTTY_RAG_MCP=1), beside the builds
    status = workspace.dense.ensure()
    log.info("dense leg: %s", workspace.dense.describe())
    for name in index_names():
        if workspace.closed:
            return
        # The build a search would start (in parts, searchable from the first): one per index, in turn.
        workspace.builds.thread(name).join()
    if status.state == "unavailable":
        status = _await_dense(workspace)
    if status.state == "ready":
        for name in index_names():
            if workspace.closed:
                return
            try:
                workspace.embed_all(name)
            except Exception:
                log.exception("embedding the %s index failed", name)


def _await_dense(workspace: Workspace) -> DenseStatus:
    """Wait, in the background, until the dense leg's own probes (``DenseLeg.ensure``) find the embedding server
    or the workspace closes: an embedding server started after the agent makes the session hybrid without a
    restart."""
    status = workspace.dense.ensure()
    while status.state == "unavailable" and not workspace.closed:
        time.sleep(0.5)
        status = workspace.dense.ensure()
    if status.state == "ready" and not workspace.closed:
        log.info("dense leg: %s", workspace.dense.describe())
    return status


__all__ = ["AppState", "Session", "warm_up"]
