"""The OpenAI-compatible backend's own ways (``AGENTTY_EMBED_BACKEND=openai``): nothing is sent without a URL, the
API key comes from the variable the user names and is never shown, a refused key says what to check.

Its end-to-end behaviour is the Ollama backend's, tested with both in tests/workspace/test_dense.py,
test_embedding_answers.py and tests/server/test_tools.py; the server here is a real HTTP server on loopback
(tests/embedding_server.py).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentty_rag.config import effective_values, load_settings
from agentty_rag.index.vectors.dense import probe
from agentty_rag.index.vectors.embedders import make_embedder
from agentty_rag.index.vectors.openai_embedder import UNSET, OpenAIEmbedder
from agentty_rag.workspace.service import Workspace
from tests.conftest import OPEN_WORKSPACES, write
from tests.embedding_server import DIMENSION, EmbeddingServer

KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    running = EmbeddingServer(api="openai")
    yield running
    running.close()


def test_without_a_url_nothing_is_sent_and_the_reason_says_so(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# Engines\n\nChange the engine oil.\n"})
    settings = load_settings({"AGENTTY_EMBED_BACKEND": "openai", "OPENAI_API_KEY": KEY})
    embedder = make_embedder(settings)
    assert isinstance(embedder, OpenAIEmbedder) and embedder.where == "nowhere (AGENTTY_OPENAI_BASE_URL unset)"
    assert probe(embedder).reason == UNSET
    workspace = Workspace(tmp_path, settings)
    OPEN_WORKSPACES.append(workspace)
    assert workspace.search_docs("engine oil").result.mode == f"bm25 (dense unavailable: {UNSET})"


def test_the_key_of_the_named_variable_is_sent_and_shown_nowhere(
    tmp_path: Path, server: EmbeddingServer, caplog: pytest.LogCaptureFixture
) -> None:
    write(tmp_path, {"docs/a.md": "# Engines\n\nChange the engine oil.\n"})
    server.key = KEY
    env = server.env(AGENTTY_OPENAI_API_KEY_ENV="MY_EMBEDDING_KEY", MY_EMBEDDING_KEY=KEY, OPENAI_API_KEY="other")
    settings = load_settings(env)
    with caplog.at_level(logging.DEBUG):
        workspace = Workspace(tmp_path, settings)
        OPEN_WORKSPACES.append(workspace)
        found = workspace.search_docs("engine oil")
        status = workspace.dense_status("docs")
    assert found.result.mode == "hybrid"
    assert set(server.authorizations) == {f"Bearer {KEY}"}
    shown = [repr(settings), str(effective_values(settings)), str(status), found.text, caplog.text]
    assert not [text for text in shown if KEY in text]


def test_a_refused_key_names_the_variable_to_check_never_the_key(server: EmbeddingServer) -> None:
    server.key = KEY
    refused = OpenAIEmbedder(f"http://{server.host}/v1", "test-embed", "sk-wrong", "MY_EMBEDDING_KEY")
    missing = OpenAIEmbedder(f"http://{server.host}/v1", "test-embed", None, "MY_EMBEDDING_KEY")
    wrong, none = probe(refused), probe(missing)
    assert wrong.reason == (
        "the server refused the request (401: Incorrect API key provided.) — check MY_EMBEDDING_KEY"
    )
    assert none.reason == (
        "the server refused the request (401: Incorrect API key provided.) — set MY_EMBEDDING_KEY to the "
        "server's API key"
    )
    assert server.authorizations == ["Bearer sk-wrong", ""]  # no header at all without a key
    refused.close()
    missing.close()


def test_rows_come_back_in_the_order_of_the_texts_whatever_order_the_server_lists_them(
    server: EmbeddingServer,
) -> None:
    embedder = OpenAIEmbedder(f"http://{server.host}/v1", "test-embed")
    rows = embedder.embed(["engine oil", "bread dough", "tax returns"], "document")  # the server lists them reversed
    alone = [embedder.embed([text], "query")[0] for text in ("engine oil", "bread dough", "tax returns")]
    assert rows.shape == (3, DIMENSION)
    assert all(float(rows[i] @ alone[i]) == pytest.approx(1.0, abs=1e-6) for i in range(3))
    embedder.close()


def test_a_key_sent_over_plain_http_beyond_loopback_is_warned_of(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        OpenAIEmbedder("http://embeddings.example:8080/v1", "m", KEY, "MY_EMBEDDING_KEY")
        OpenAIEmbedder("https://embeddings.example/v1", "m", KEY, "MY_EMBEDDING_KEY")
        OpenAIEmbedder("http://127.0.0.1:1234/v1", "m", KEY, "MY_EMBEDDING_KEY")
    assert [r.getMessage() for r in caplog.records] == [
        "the API key of MY_EMBEDDING_KEY goes over plain HTTP to http://embeddings.example:8080/v1: use https://"
    ]
