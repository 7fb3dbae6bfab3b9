"""Every edge searches through one method: the MCP tools and prompt, the command line, the proactive hook and
rag-bench each hand ``Workspace.search`` one ``SearchRequest``."""

from __future__ import annotations

import contextlib
import io
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client

from agentty_rag.bench.ladder import ranking_searcher
from agentty_rag.cli.command import main
from agentty_rag.cli.inject import HookEvent, proactive_context
from agentty_rag.config import load_settings
from agentty_rag.workspace.outcome import Outcome
from agentty_rag.workspace.request import SearchRequest
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, fixture_env
from tests.server.conftest import server


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[SearchRequest]]:
    """The requests ``Workspace.search`` is given, in order."""
    requests: list[SearchRequest] = []
    search = Workspace.search

    def spy(self: Workspace, request: SearchRequest) -> Outcome:
        requests.append(request)
        return search(self, request)

    monkeypatch.setattr(Workspace, "search", spy)
    yield requests


@pytest.fixture
def code(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "code", root)
    return root


def test_the_hook_asks_for_the_proactive_block(tmp_path: Path, asked: list[SearchRequest]) -> None:
    workspace = Workspace(tmp_path, load_settings(fixture_env(tmp_path)))
    workspace.index("docs").refresh()
    injection = proactive_context(workspace, HookEvent("which bucket permissions does the artifact store need?"), True)
    workspace.close()
    assert injection.block is not None
    assert [(r.tool, r.indexes, r.form, r.k) for r in asked] == [("proactive", ("docs",), "context", 6)]


def test_the_command_line_and_rag_bench_ask_with_their_own_forms(code: Path, asked: list[SearchRequest]) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--root", str(code), "search-code", "refresh", "token", "-k", "3"]) == 0
    workspace = Workspace(code, load_settings(LEXICAL))
    workspace.index("code").refresh()
    searched = ranking_searcher(workspace, "code")("refresh token", 5)
    workspace.close()
    assert searched.hits
    forms = [(r.tool, r.indexes, r.form, r.k, r.wait_s) for r in asked]
    assert forms == [("search_code", ("code",), "tool", 3, 3600), ("search_code", ("code",), "ranking", 5, None)]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_tools_and_the_prompt_hand_over_their_checked_arguments(
    code: Path, asked: list[SearchRequest]
) -> None:
    async with Client(server(code)) as client:
        await client.call_tool("search_code", {"query": "refresh token", "k": 2, "language": "py"})
        await client.get_prompt("context_for", {"question": "how are tokens refreshed?"})
    tool, prompt = asked
    assert (tool.tool, tool.query, tool.k, tool.filters.languages, tool.form) == (
        "search_code",
        "refresh token",
        2,
        ("python",),
        "tool",
    )
    assert (prompt.tool, prompt.query, prompt.form) == ("proactive", "how are tokens refreshed?", "context")
