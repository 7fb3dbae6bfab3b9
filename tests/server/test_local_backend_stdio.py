"""Hybrid with one setting and no server: ``AGENTTY_EMBED_BACKEND=local`` (the ``local`` extra installed), a fresh
workspace, the real command over stdio with the official client. Nothing listens for embeddings anywhere: the
server loads the model in a job, embeds in the background, and both tools answer ``hybrid``; meanwhile BM25
answers and no search says the leg is unavailable."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mcp import Client

from agentty_rag.index.vectors.local_embedder import model_file
from tests.conftest import fenced_passages, stdio_server, write
from tests.server.test_server_stdio import _text

DOCS = {
    "docs/vehicles.md": "# Vehicles\n\nChange the engine oil of an automobile every ten thousand kilometres and "
    "rotate the tyres at the same visit.\n",
    "docs/kitchen.md": "# Kitchen\n\nBake the bread dough at two hundred degrees for forty minutes.\n",
    "docs/garden.md": "# Garden\n\nWater tomato seedlings every morning and stake them once they are knee high.\n",
}
CODE = {
    "src/loop.py": "def run_event_loop(handlers):\n    '''Run the event loop until it is stopped.'''\n"
    "    while handlers:\n        tick(handlers)\n",
    "src/text.py": "def shout(text):\n    return text.upper()\n",
    "src/money.py": "def total_invoice_amount(lines):\n    return sum(line.price for line in lines)\n",
}
QUERIES = {"search_docs": "how often should my car get serviced", "search_code": "add up what the bill costs"}
# How long a loaded machine may take to start the server, load the model and embed six chunks.
DEADLINE_S = 240


@pytest.mark.anyio
async def test_one_setting_and_no_server_makes_both_tools_hybrid(tmp_path: Path) -> None:
    model_file()  # the local extra is installed (a test dependency): otherwise this fails, naming the install
    write(tmp_path, {**DOCS, **CODE})
    headers: dict[str, list[str]] = {tool: [] for tool in QUERIES}
    params = stdio_server(tmp_path, AGENTTY_RAG_DENSE="1", AGENTTY_EMBED_BACKEND="local")
    async with Client(params) as client:
        deadline = time.monotonic() + DEADLINE_S
        asked = 0
        while time.monotonic() < deadline and not all(
            lines and lines[-1].startswith(f"{tool} · hybrid ·") for tool, lines in headers.items()
        ):
            asked += 1  # a new question each time: an embedded query is cached
            for tool, query in QUERIES.items():
                answer = _text(await client.call_tool(tool, {"query": f"{query} {asked}"}))
                headers[tool].append(answer.split("\n")[0])
        docs = _text(await client.call_tool("search_docs", {"query": QUERIES["search_docs"]}))
        code = _text(await client.call_tool("search_code", {"query": QUERIES["search_code"]}))
    for tool, lines in headers.items():
        assert lines[-1].startswith(f"{tool} · hybrid · funnel "), lines[-3:]
        assert not [line for line in lines if "unavailable" in line or "degraded" in line], lines
    # Found by meaning alone: the lexical leg has no candidate (no word of either question is in the answer).
    assert docs.startswith("search_docs · hybrid · funnel 0+") and code.startswith("search_code · hybrid · funnel 0+")
    assert fenced_passages(docs)[1][0].startswith("docs:docs/vehicles.md:")
    assert fenced_passages(code)[1][0].startswith("code:src/money.py:")
