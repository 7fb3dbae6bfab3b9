"""The server's background embedding on a slow embedding server, over stdio with the official client: the
searches made meanwhile get their own embedding in time (hybrid, partial while the rest is embedded), never
a fallback to BM25 because the server was busy with the background's batches."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from agentty_rag.workspace.paced import REQUEST_S, next_size
from tests.conftest import stdio_server, write
from tests.embedding_server import EmbeddingServer
from tests.server.test_server_stdio import _text


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    running = EmbeddingServer()
    yield running
    running.close()


def _tree(root: Path) -> None:
    """160 functions, one a file: 160 chunks to embed."""
    topics = ("invoice", "token", "lease", "webhook", "cache", "ledger", "upload", "backup")
    write(
        root,
        {
            f"src/{topics[n % 8]}/step_{n}.py": f'def {topics[n % 8]}_step_{n}(value):\n    """Run {topics[n % 8]} '
            f'step {n}."""\n    return value + {n}\n'
            for n in range(160)
        },
    )


@pytest.mark.anyio
async def test_searches_during_background_embedding_on_a_slow_server_stay_hybrid(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    _tree(tmp_path)
    # One request at a time, 0.08 s a text: a batch of 32 texts holds the server 2.6 s, longer than a query
    # may wait (1 s).
    server.seconds_per_text = 0.08
    settings = server.env(AGENTTY_RAG_EMBED_TIMEOUT_MS="1000", AGENTTY_RAG_LEG_CHECK="0", AGENTTY_RAG_WATCH="0")
    headers: list[str] = []
    async with Client(stdio_server(tmp_path, **settings)) as client:
        deadline = time.monotonic() + 300
        asked = 0
        while time.monotonic() < deadline:
            asked += 1  # a new question each time: an embedded query is cached
            answer = _text(await client.call_tool("search_code", {"query": f"rotate the ledger step {asked}"}))
            headers.append(answer.split("\n")[0])
            if headers[-1].startswith("search_code · hybrid ·"):
                break  # every chunk embedded
    assert headers[-1].startswith("search_code · hybrid ·"), headers[-1]
    assert any(h.startswith("search_code · hybrid (partial) ·") for h in headers), headers
    fallbacks = [h for h in headers if "degraded" in h or "unavailable" in h]
    assert not fallbacks, f"{len(fallbacks)} of {len(headers)} searches fell back: {fallbacks[:3]}"


@given(st.integers(1, 512), st.floats(0, 100, allow_nan=False), st.integers(1, 512))
def test_a_request_of_the_background_is_sized_to_take_about_its_share_of_time(
    sent: int, took_s: float, most: int
) -> None:
    size = next_size(sent, took_s, most)
    assert 1 <= size <= most
    if took_s > 0 and size < most and size > 1:
        assert size * took_s / sent <= REQUEST_S + 1e-9  # no larger than fits in the time at that speed
