"""The real command with its real watcher: ``agentty-rag serve`` over stdio with the official MCP client. An
edit made while it runs reaches the next searches; with the watcher off, the very next one."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.conftest import write
from tests.server.test_server_stdio import _server, _text

pytestmark = pytest.mark.anyio

FILES = {
    "src/billing/invoice.py": "def total_amount(lines):\n    return sum(line.price for line in lines)\n",
    "src/auth/tokens.py": "def refresh_token(token):\n    return token\n",
}


async def _search(client: Client, query: str) -> str:
    result = await client.call_tool("search_code", {"query": query})
    assert not result.is_error, _text(result)
    return _text(result)


async def test_an_edit_while_the_server_watches_reaches_the_searches(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    async with Client(_server(tmp_path)) as client:
        assert "code:src/billing/invoice.py" in await _search(client, "total amount")
        write(tmp_path, {"src/billing/invoice.py": "def grand_total_with_vat(lines):\n    return 1\n"})
        # The watcher reports within milliseconds; a search in between still scans nothing. No clock is
        # asserted: the searches go on until the edit shows (or the test's own timeout ends them).
        seen = False
        while not seen:
            seen = "code:src/billing/invoice.py" in await _search(client, "grand total with vat")
            if not seen:
                await anyio.sleep(0.05)
    assert (tmp_path / ".agentty" / "rag_code.ragdb.meta.json").exists()
    assert not (tmp_path / ".agentty" / "rag_watch.json").exists()  # removed when the server stops


async def test_with_the_watcher_off_the_next_search_sees_an_edit(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    async with Client(_server(tmp_path, AGENTTY_RAG_WATCH="0")) as client:
        assert "code:src/billing/invoice.py" in await _search(client, "total amount")
        write(tmp_path, {"src/auth/keys.py": "def rotate_signing_keys():\n    pass\n"})
        assert "code:src/auth/keys.py" in await _search(client, "rotate signing keys")
