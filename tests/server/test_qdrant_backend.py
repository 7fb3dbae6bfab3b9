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

from tests.conftest import FAKE_DENSE, FIXTURES
from tests.server.conftest import server

pytestmark = pytest.mark.anyio

QUERIES = [json.loads(line) for line in (FIXTURES / "queries" / "code.jsonl").read_text("utf-8").splitlines()]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def _answers(root: Path, backend: str, source: Path = FIXTURES / "code", **env: str) -> list[tuple[str, Any]]:
    shutil.copytree(source, root, ignore=shutil.ignore_patterns(".agentty") if source == FIXTURES / "code" else None)
    answers = []
    async with Client(server(root, AGENTTY_RAG_BACKEND=backend, AGENTTY_RAG_STRUCTURED="1", **env)) as client:
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


async def test_hybrid_search_code_on_qdrant_ranks_every_fixture_query_as_the_local_index(
    tmp_path: Path, indexed_code: Path
) -> None:
    """Both legs' candidates from Qdrant (the dense one through the Qdrant vector store): the same passages in
    the same order. The index was embedded with the fake embedder on the local backend; the Qdrant one is
    rebuilt from the same files and keeps every vector (the table is keyed by the embedded text)."""
    pytest.importorskip("qdrant_edge")
    hybrid = {**FAKE_DENSE, "AGENTTY_RAG_LEG_CHECK": "0"}
    local = await _answers(tmp_path / "local", "local", indexed_code, **hybrid)
    qdrant = await _answers(tmp_path / "qdrant", "qdrant", indexed_code, **hybrid)
    assert any(path.name.startswith("code-dense-") for path in (tmp_path / "qdrant" / ".agentty" / "qdrant").iterdir())
    for query, (_, structured), (_, want_structured) in zip(QUERIES, qdrant, local, strict=True):
        assert structured["mode"] == want_structured["mode"] == "hybrid", query["id"]
        ranked = [(hit["path"], hit["lines"]) for hit in structured["results"]]
        assert ranked == [(hit["path"], hit["lines"]) for hit in want_structured["results"]], query["id"]
