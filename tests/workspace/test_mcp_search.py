"""End to end: search_docs over other MCP servers' resources (``AGENTTY_RAG_MCP=1``), with real servers.

The servers are ``tests/mcp_resources/resource_server.py`` (written with the SDK), named in the workspace's
``.mcp.json`` as an agent's configuration would name them.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from agentty_rag.config import load_settings
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, run_main, write
from tests.mcp_resources.conftest import SERVER

DOCS = {
    "docs/deploy.md": "# Deploying\n\n## Release train\n\nThe release train leaves every Tuesday from the staging branch.\n",
    "docs/queues.md": "# Queues\n\n## Backlog\n\nWhen a queue backs up, page the on-call engineer.\n",
}
QUESTION = "how do I drain the pelican queue when it backs up"
BROKEN_NOTE = (
    "note: MCP server broken failed: closed the connection while starting — its stderr: resource server: "
    "the wiki database is unavailable; its resources are left out"
)


def _server(*flags: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(SERVER), *flags]}


def _workspace(root: Path, servers: dict[str, Any]) -> Path:
    write(root, {**DOCS, ".mcp.json": json.dumps({"mcpServers": servers})})
    (root / ".git").mkdir()
    return root


def _kept(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (root / ".agentty").rglob("*") if p.is_file()}


def test_search_docs_ranks_mcp_resources_with_the_docs_and_keeps_none_of_them(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"wiki": _server("--docs")})
    settings = load_settings(
        {**LEXICAL, "AGENTTY_RAG_MCP": "1", "AGENTTY_RAG_MCP_APPROVED": "wiki", "HOME": str(tmp_path / "home")}
    )
    workspace = Workspace(root, settings)
    try:
        both = workspace.search_docs(QUESTION, k=3)
        only_mcp = workspace.search_docs("queue", sources=["mcp"])
        only_docs = workspace.search_docs("queue backs up", sources=["docs"])
        scoped = workspace.search_docs("queue backs up", scope="docs/queues.md")
    finally:
        workspace.close()
    results = both.structured["results"]
    assert [(r["provenance"], r["source"], r["server"]) for r in results] == [
        ("mcp:wiki://Team/Runbook", "mcp", "wiki"),
        ("docs:docs/queues.md:3-5", "docs", ""),
    ]
    assert both.text.splitlines()[2] == "[1] mcp:wiki://Team/Runbook (server wiki) · relevance 1.00"
    assert both.text.startswith("search_docs · bm25 · funnel 2→")
    assert [r["provenance"] for r in only_mcp.structured["results"]] == ["mcp:wiki://Team/Runbook"]
    assert {r["source"] for r in only_docs.structured["results"]} == {"docs"}
    assert [r["provenance"] for r in scoped.structured["results"]] == ["docs:docs/queues.md:3-5"]
    kept = _kept(root)
    assert sorted(kept) == [".gitignore", "rag_docs.lock", "rag_docs.ragdb", "rag_docs.ragdb.meta.json"]
    assert not any(b"pelican" in data for data in kept.values())


def test_the_command_line_says_why_a_server_is_missing_and_status_lists_every_server(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"wiki": _server("--docs"), "broken": _server("--crash")})
    # Approved as Claude Code keeps the answer to its prompt, in a folder the user trusts in Claude Code.
    write(root, {".claude/settings.local.json": json.dumps({"enabledMcpjsonServers": ["wiki", "broken"]})})
    home = Path(os.environ["HOME"])  # the test's own empty home folder
    write(home, {".claude.json": json.dumps({"projects": {str(root): {"hasTrustDialogAccepted": True}}})})
    env = {"AGENTTY_RAG_MCP": "1", "HOME": str(home)}
    searched = run_main("agentty_rag", root, ("search-docs", QUESTION, "-k", "3"), env)
    status = run_main("agentty_rag", root, ("status",), env)
    assert searched.returncode == 0, searched.stderr
    lines = searched.stdout.splitlines()
    assert lines[1] == BROKEN_NOTE
    assert lines[3] == "[1] mcp:wiki://Team/Runbook (server wiki) · relevance 1.00"
    assert "docs:docs/queues.md:3-5 · Queues > Backlog" in searched.stdout
    assert status.returncode == 0, status.stderr
    approved = "approved in Claude Code (.claude/settings.local.json); status starts no server, search_docs does"
    python = Path(sys.executable).name
    assert [line for line in status.stdout.splitlines() if "mcp:" in line or ".mcp.json)" in line] == [
        "mcp: 2 servers, 0 chunks kept in memory — .mcp.json",
        f"  wiki ({python} {SERVER} --docs, .mcp.json): not started — {approved}",
        f"  broken ({python} {SERVER} --crash, .mcp.json): not started — {approved}",
    ]


def test_without_the_setting_no_server_is_ever_started(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    spy = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}
    root = _workspace(tmp_path / "w", {"spy": spy})
    outputs = {}
    for args in (("search-docs", "release train"), ("search-docs", "queue", "--sources", "mcp"), ("status",)):
        result = run_main("agentty_rag", root, args, {})
        assert result.returncode == 0, result.stderr
        assert not marker.exists(), args
        outputs[args[-1]] = result.stdout
    assert "docs:docs/deploy.md:3-5" in outputs["release train"]
    assert outputs["mcp"].splitlines()[1] == (
        "no MCP resources — AGENTTY_RAG_MCP=1 searches the resources of the MCP servers the agent uses"
    )
    assert "mcp:" not in outputs["status"]
    on = {"AGENTTY_RAG_MCP": "1", "AGENTTY_RAG_MCP_APPROVED": "spy"}
    run_main("agentty_rag", root, ("search-docs", "release train"), on)
    assert marker.exists()  # the same configuration, with the setting on (and the server approved)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_search_docs_tool_returns_mcp_passages_with_their_server(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"wiki": _server("--docs")})
    script = Path(sys.executable).with_name("agentty-rag")
    command, args = (str(script), []) if script.exists() else (sys.executable, ["-m", "agentty_rag"])
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")}
    environment.update({**LEXICAL, "AGENTTY_RAG_MCP": "1", "AGENTTY_RAG_MCP_APPROVED": "wiki"})
    environment["AGENTTY_RAG_STRUCTURED"] = "1"
    params = StdioServerParameters(command=command, args=[*args, "--root", str(root), "serve"], env=environment)
    async with Client(params) as client:
        result = await client.call_tool("search_docs", {"query": QUESTION, "k": 3})
        resources = await client.call_tool("search_docs", {"query": "quasar token rotation", "sources": ["mcp"]})
    assert not result.is_error
    assert result.structured_content is not None and resources.structured_content is not None
    first = result.structured_content["results"][0]
    assert (first["provenance"], first["server"]) == ("mcp:wiki://Team/Runbook", "wiki")
    assert [r["provenance"] for r in resources.structured_content["results"]][0] == "mcp:file:///design/auth.md"


def test_a_broken_server_is_told_once_and_the_docs_still_answer(tmp_path: Path) -> None:
    root = _workspace(tmp_path, {"broken": _server("--crash")})
    settings = load_settings(
        {**LEXICAL, "AGENTTY_RAG_MCP": "1", "AGENTTY_RAG_MCP_APPROVED": "broken", "HOME": str(tmp_path / "home")}
    )
    workspace = Workspace(root, settings)
    try:
        first = workspace.search_docs("release train")
        second = workspace.search_docs("release train")
    finally:
        workspace.close()
    assert first.text.splitlines()[1] == BROKEN_NOTE
    assert first.structured["notes"] == [BROKEN_NOTE.removeprefix("note: ")]
    assert second.structured["notes"] == []
    assert [r["provenance"] for r in second.structured["results"]] == ["docs:docs/deploy.md:3-5"]
