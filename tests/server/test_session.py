"""The server's workspace over its lifetime, over the SDK's in-memory client: opened by the lifespan, chosen
by the client's MCP roots, closed when the server shuts down. (Found from where the command starts:
``tests/server/test_server_stdio.py``.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import ListRootsResult, Root
from pydantic import FileUrl

from agentty_rag.config import load_settings
from agentty_rag.server.session import warm_up
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write
from tests.server.conftest import server, started_in

pytestmark = pytest.mark.anyio


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def test_the_lifespan_opens_the_workspace_and_closes_it_on_shutdown(repo: Path) -> None:
    app = server(repo)
    lifespan = app.settings.lifespan
    assert lifespan is not None
    async with lifespan(app) as state:
        workspace = state.session.workspace
        assert workspace is not None and workspace.root == repo and not workspace.closed
    assert workspace.closed


async def test_each_connection_gets_its_own_workspace_and_closes_it(repo: Path) -> None:
    app = server(repo)
    async with Client(app) as first:
        found = await first.call_tool("search_docs", {"query": "when does the release train leave"})
    (repo / "docs" / "deploy.md").write_text("# Deploying\n\nThe release train leaves every Friday now.\n")
    async with Client(app) as second:
        refound = await second.call_tool("search_docs", {"query": "when does the release train leave"})
    assert "Tuesday" in _text(found) and "Friday" in _text(refound)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_client_roots_choose_the_workspace(repo: Path, tmp_path: Path, mode: str) -> None:
    elsewhere = tmp_path / "started-here"
    write(elsewhere, {"docs/other.md": "# Other\n\nNothing about trains.\n"})

    async def roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl("file:///")), Root(uri=FileUrl(repo.as_uri()), name="repo")])

    app = started_in(elsewhere, AGENTTY_RAG_STRUCTURED="1")
    async with Client(app, mode=mode, list_roots_callback=roots) as client:  # type: ignore[arg-type]
        result = await client.call_tool("search_docs", {"query": "when does the release train leave"})
    assert not result.is_error, _text(result)
    assert "docs:docs/deploy.md:1-3" in _text(result)
    assert result.structured_content is not None and result.structured_content["workspace"] == str(repo)


async def test_roots_are_asked_again_after_the_client_says_they_changed(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    write(other, {"docs/boats.md": "# Boats\n\nThe ferry leaves every Sunday.\n", ".git/HEAD": ""})
    offered = [repo]

    async def roots(_context: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=FileUrl(offered[0].as_uri()))])

    app = started_in(tmp_path, AGENTTY_RAG_STRUCTURED="1")
    async with Client(app, mode="legacy", list_roots_callback=roots) as client:  # type: ignore[arg-type]
        before = await client.call_tool("search_docs", {"query": "when does it leave"})
        offered[0] = other
        unchanged = await client.call_tool("search_docs", {"query": "when does it leave"})
        with pytest.warns(MCPDeprecationWarning):
            await client.send_roots_list_changed()
        after = await client.call_tool("search_docs", {"query": "when does it leave"})
    assert "docs:docs/deploy.md" in _text(before) and "docs:docs/deploy.md" in _text(unchanged)
    assert "docs:docs/boats.md" in _text(after)
    assert after.structured_content is not None and after.structured_content["workspace"] == str(other)


def test_a_workspace_closed_before_its_warm_up_runs_builds_nothing(repo: Path) -> None:
    workspace = Workspace(repo, load_settings(LEXICAL))
    workspace.close()
    warm_up(workspace, workspace.jobs.stop)
    assert not (repo / ".agentty").exists()
