"""What a client receives from the real command over stdio: the header's token figure is the cost of the text
it heads, and the answer is that text alone unless structured content is asked for (and then it is small)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import fenced_passages, fixture_env, write
from tests.server.test_server_stdio import _server, _text

pytestmark = pytest.mark.anyio

QUESTIONS = (
    ("search_docs", {"query": "which bucket permissions does the artifact store need?"}),
    ("search_docs", {"query": "how do I roll back a deployment", "k": 3}),
    ("search_docs", {"query": "what changed in 3.2", "k": 12}),
    ("search_code", {"query": "retry a failed upload with backoff"}),
)


def _workspace(root: Path) -> dict[str, str]:
    write(
        root,
        {
            "src/upload.py": "def upload_with_retry(path, attempts=3):\n"
            '    """Retry a failed upload, doubling the wait each time."""\n'
            "    for attempt in range(attempts):\n"
            "        if send(path):\n"
            "            return True\n"
            "        sleep(2**attempt)\n"
            "    return False\n"
        },
    )
    return fixture_env(root)


def _stated(text: str) -> int:
    """The token figure the header states."""
    found = re.search(r" · ([\d,]+) tokens$", text.split("\n")[0])
    assert found, text.split("\n")[0]
    return int(found.group(1).replace(",", ""))


async def test_the_header_states_what_the_client_receives_and_nothing_else_comes(tmp_path: Path) -> None:
    async with Client(_server(tmp_path, **_workspace(tmp_path))) as client:
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(name, arguments) for name, arguments in QUESTIONS]
    assert [tool.output_schema for tool in tools] == [None, None]
    for result in results:
        assert not result.is_error and result.structured_content is None
        assert [block.type for block in result.content] == ["text"]
        text = _text(result)
        assert abs(_stated(text) - len(text) / 4) <= 0.05 * len(text) / 4, text.split("\n")[0]


async def test_structured_content_when_asked_for_is_compact_and_holds_no_passage_text(tmp_path: Path) -> None:
    env = {**_workspace(tmp_path), "AGENTTY_RAG_STRUCTURED": "1"}
    async with Client(_server(tmp_path, **env)) as client:
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(name, arguments) for name, arguments in QUESTIONS]
    for tool in tools:
        assert tool.output_schema is not None
        item = tool.output_schema["$defs"]["ResultItem"]["properties"]
        assert "provenance" in item and "text" not in item
    for result in results:
        text, data = _text(result), result.structured_content
        assert data is not None and data["results"] and data["tokens"] == _stated(text)
        assert all("text" not in item for item in data["results"])
        assert [item["provenance"] for item in data["results"]] == fenced_passages(text)[1]
        dumped = json.dumps(data, ensure_ascii=False)
        body = [
            line for line in text.split("\n")[1:] if len(line) > 40 and not line.startswith(("[", "also in:", "---"))
        ]
        assert body and not [line for line in body if line in dumped]  # no passage comes twice
