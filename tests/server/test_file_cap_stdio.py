"""A search over a tree larger than the file cap says how much of it the index covers and which setting caps
it, over the real ``agentty-rag serve`` on stdio with the official MCP client (and so do the command line's
``index``, search and ``status``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import run_main, stdio_server, write

pytestmark = pytest.mark.anyio

COVERS = "code covers 50 of 301 files: the file cap AGENTTY_RAG_CODE_MAX_FILES=50 left out 251 changed less recently"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def capped_tree(root: Path) -> None:
    """300 tiny modules, and the one that holds the name asked for, changed longest ago (the cap leaves it
    out first)."""
    write(root, {f"pkg{i % 10}/mod{i:03d}.py": f"def handler_{i:03d}():\n    return {i}\n" for i in range(300)})
    write(root, {"pkg0/ledger.py": "def quokka_ledger_flush():\n    return 'flushed'\n"})
    os.utime(root / "pkg0" / "ledger.py", (1_000_000_000, 1_000_000_000))


def _text(result: Any) -> str:
    assert not result.is_error
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def test_a_search_over_a_capped_tree_says_how_much_the_index_covers_and_which_setting_caps_it(
    tmp_path: Path,
) -> None:
    capped_tree(tmp_path)
    async with Client(stdio_server(tmp_path, AGENTTY_RAG_CODE_MAX_FILES="50")) as client:
        capped = _text(await client.call_tool("search_code", {"query": "quokka_ledger_flush"}))
    async with Client(stdio_server(tmp_path, AGENTTY_RAG_BUILD_BATCH="1000")) as client:  # built in one part
        whole = _text(await client.call_tool("search_code", {"query": "quokka_ledger_flush"}))
    header = capped.split("\n\n")[0]
    assert f"note: {COVERS}; a file left out is not searched" in header.splitlines(), capped
    assert "pkg0/ledger.py" not in capped
    assert "code:pkg0/ledger.py:1-2" in whole and "covers" not in whole  # under the cap: no such note


def test_search_code_and_status_on_the_command_line_say_it_too(tmp_path: Path) -> None:
    capped_tree(tmp_path)
    env = {"AGENTTY_RAG_CODE_MAX_FILES": "50"}
    built = run_main("agentty_rag", tmp_path, ("index", "code"), env)
    found = run_main("agentty_rag", tmp_path, ("search-code", "quokka_ledger_flush"), env)
    status = run_main("agentty_rag", tmp_path, ("status",), env)
    assert built.returncode == found.returncode == status.returncode == 0, built.stderr + found.stderr
    assert COVERS in built.stdout.splitlines()
    assert found.stdout.splitlines()[1:3] == [f"note: {COVERS}; a file left out is not searched", "no matches (bm25)"]
    assert f"  {COVERS}" in status.stdout.splitlines()
