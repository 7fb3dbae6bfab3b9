"""search_code over the MCP server answers the same on the Qdrant backend as on the local index: the committed
code fixtures, every fixture query, the same text and the same structured results (their scores, given to six
decimals, to within one in the last: Qdrant's vectors are float32)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import FIXTURES
from tests.server.conftest import server

pytestmark = pytest.mark.anyio

QUERIES = [json.loads(line) for line in (FIXTURES / "queries" / "code.jsonl").read_text("utf-8").splitlines()]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def _answers(root: Path, backend: str) -> list[tuple[str, Any]]:
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    answers = []
    async with Client(server(root, AGENTTY_RAG_BACKEND=backend)) as client:
        for query in QUERIES:
            result = await client.call_tool("search_code", {"query": query["query"]})
            assert not result.is_error, _text(result)
            structured = dict(result.structured_content or {})
            structured.pop("workspace")  # the folder: each backend's copy has its own
            answers.append((_text(result), structured))
    return answers


async def test_search_code_on_qdrant_gives_the_local_index_answer_to_every_fixture_query(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_edge")
    local = await _answers(tmp_path / "local", "local")
    qdrant = await _answers(tmp_path / "qdrant", "qdrant")
    assert (tmp_path / "qdrant" / ".agentty" / "qdrant" / "code").is_dir()
    assert not (tmp_path / "local" / ".agentty" / "qdrant").exists()
    for query, (text, structured), (want_text, want_structured) in zip(QUERIES, qdrant, local, strict=True):
        assert text == want_text, query["id"]
        scores = [result.pop("score") for result in structured["results"]]
        want_scores = [result.pop("score") for result in want_structured["results"]]
        assert structured == want_structured, query["id"]
        assert scores == pytest.approx(want_scores, abs=1.5e-6), query["id"]
