"""The server as ``agentty-rag serve`` builds it, for the SDK's in-memory client: no subprocess, same app."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from agentty_rag.config import load_settings
from agentty_rag.server import AppState, build_server
from agentty_rag.workspace.discovery import locate
from tests.conftest import LEXICAL


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _built(root: Path | None, start: Path, env: dict[str, str]) -> MCPServer[AppState]:
    settings = load_settings({**os.environ, **LEXICAL, **env})
    return build_server(locate(start, settings.home, root), settings)


def server(root: Path, **env: str) -> MCPServer[AppState]:
    """The server ``agentty-rag --root ROOT serve`` builds, started where the tests run, with no AGENTTY_*
    variable but ``env`` (lexical unless it says otherwise).

    Each ``Client(server(...))`` connection runs the server's lifespan: it opens the workspace, warms it up
    and closes it when the client disconnects.
    """
    return _built(root, Path.cwd(), env)


def started_in(cwd: Path, **env: str) -> MCPServer[AppState]:
    """The server a client starts in ``cwd``, with no --root."""
    return _built(None, cwd, env)
