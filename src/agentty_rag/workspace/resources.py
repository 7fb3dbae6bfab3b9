"""A workspace's MCP resources (``AGENTTY_RAG_MCP=1``): the servers started at first use, and what searches
say about them.

Nothing starts while the setting is off, nor before a search that reads MCP resources (or the server's
warm-up) asks: a search of code, ``index``, ``status`` and the proactive hook never start a server. Only the
servers the user approved are ever started (``mcp_resources.approval``); the others are told once. The hub
lives until the workspace is closed, that is for the life of ``serve`` or of one CLI command. A failed server
is told once in the notes under a result's header (again only if it fails otherwise, or after it recovered), a
server still starting every time.
"""

from __future__ import annotations

import threading
from pathlib import Path

from agentty_rag.config import Settings
from agentty_rag.jobs import Supervisor
from agentty_rag.mcp_resources.approval import Approvals
from agentty_rag.mcp_resources.hub import ResourceHub
from agentty_rag.mcp_resources.model import ReaderOptions, Snapshot
from agentty_rag.mcp_resources.servers import ServerList, configured_servers


class WorkspaceResources:
    """The hub of one workspace, started at first use.

    Args:
        root: the workspace root (its agent configuration files are read there).
        settings: whether MCP resources are read, which servers, and the bounds; a first search waits for the
            servers' first load up to ``AGENTTY_RAG_BUILD_WAIT_MS``.
    """

    def __init__(self, root: Path, settings: Settings, jobs: Supervisor | None = None) -> None:
        self.enabled = settings.mcp_enabled
        self._jobs = jobs
        self._root = root
        self._settings = settings
        self._wait_s = settings.build_wait_ms / 1000
        self._hub: ResourceHub | None = None
        self._guard = threading.Lock()
        self._told: dict[str, str] = {}  # server -> the failure last told
        self._told_problems = False

    def configured(self) -> ServerList:
        """The configured servers, the approved ones apart from the rest (nothing is started)."""
        s = self._settings
        approvals = Approvals(self._root, s.mcp_approved, s.home, s.claude_config_dir, s.codex_home)
        return configured_servers(self._root, s.mcp_servers_file, home=s.home, approvals=approvals)

    def start(self) -> ResourceHub | None:
        """Start reading the approved servers (once); None while the setting is off."""
        if not self.enabled:
            return None
        with self._guard:
            if self._hub is None:
                self._hub = ResourceHub(
                    self.configured(), ReaderOptions.from_settings(self._settings), jobs=self._jobs
                ).start()
            return self._hub

    @property
    def hub(self) -> ResourceHub | None:
        """The hub, when a search started it (``status`` starts none)."""
        return self._hub

    def snapshot(self) -> Snapshot:
        """The resources now, once every server's first load has ended (or the wait is over)."""
        hub = self.start()
        return Snapshot() if hub is None else hub.wait_loaded(self._wait_s)

    def notes(self) -> tuple[str, ...]:
        """What a search says about the servers: entries left out once, a failure once (until the server fails
        otherwise or recovers), servers still starting every time."""
        with self._guard:
            hub = self._hub
            if hub is None:
                return ()
            snapshot = hub.snapshot()
            notes: list[str] = []
            if not self._told_problems:
                self._told_problems = True
                notes += [f"MCP configuration: {problem}" for problem in snapshot.problems]
                notes += [
                    f"MCP server {u.name} ({u.origin}) is not approved, so not started: {u.how}"
                    for u in hub.servers.unapproved
                ]
            for server in snapshot.servers:
                if server.state == "ready":
                    self._told.pop(server.name, None)
                elif server.state == "failed" and self._told.get(server.name) != server.error:
                    self._told[server.name] = server.error
                    notes.append(f"MCP server {server.name} failed: {server.error}; its resources are left out")
                elif not server.loaded:
                    notes.append(f"MCP server {server.name} is still starting; its resources are not searched yet")
            return tuple(notes)

    def close(self) -> None:
        """Stop the servers this process started."""
        with self._guard:
            hub, self._hub = self._hub, None
        if hub is not None:
            hub.close()


__all__ = ["WorkspaceResources"]
