"""What an embedding server hands back is checked where it enters: a batch of zeros, NaN, ragged rows, strings,
empty rows or another dimension than the probe's fails that batch (nothing kept, nothing counted, embedded
later once the server is mended); an answer dripped a byte at a time gives up within the timeout; vectors an
earlier version kept unchecked are embedded again. Against a real HTTP server on loopback (``embedding_server``),
through ``agentty-rag`` and, once, the MCP server over stdio."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import numpy as np
import pytest
from mcp import Client

from agentty_rag.config import load_settings
from agentty_rag.index.storage.store import Store
from agentty_rag.index.vectors.sqlite import seal_vector
from agentty_rag.state.machine_key import machine_key
from agentty_rag.workspace.service import Workspace
from tests.conftest import OPEN_WORKSPACES, run_main, run_module, stdio_server, write
from tests.embedding_server import DIMENSION, EmbeddingServer

CODE = {
    "src/billing/invoice.py": "def total_invoice_amount(lines):\n    return sum(line.price for line in lines)\n",
    "src/auth/tokens.py": "def refresh_access_token(token):\n    return token.renew()\n",
    "src/deploy/lease.py": "def acquire_deploy_lease(name):\n    return name + ' lease'\n",
    "src/ui/theme.py": "def dark_theme_colours():\n    return {'background': 'black'}\n",
}
BAD = ["zeros", "nan", "one nan", "one inf", "ragged", "strings", "empty", "other dimension"]
# A note or a log line about a failed batch is one short line, whatever the server sent.
LONGEST_LINE = 300


@pytest.fixture
def server() -> Iterator[EmbeddingServer]:
    running = EmbeddingServer()
    yield running
    running.close()


def _run(root: Path, server: EmbeddingServer, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_main("agentty_rag", root, args, server.env(**env), lexical=False)


def _index(root: Path, server: EmbeddingServer, **env: str) -> subprocess.CompletedProcess[str]:
    built = _run(root, server, "index", "code", **env)
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr
    return built


def _search(root: Path, server: EmbeddingServer, query: str, *, process: bool = False, **env: str) -> dict[str, object]:
    """``search-code --json`` (in a process of its own with ``process``: nothing this process holds open)."""
    args = ("search-code", query, "--json")
    found = run_module("agentty_rag", root, args, server.env(**env)) if process else _run(root, server, *args, **env)
    assert found.returncode == 0 and "Traceback" not in found.stderr, found.stderr
    data: dict[str, object] = json.loads(found.stdout)
    return data


def _stored_vectors(root: Path) -> np.ndarray:
    with sqlite3.connect(root / ".agentty" / "rag_code.ragdb") as db:
        blobs = [blob for (blob,) in db.execute("SELECT vector FROM vectors")]
    return np.stack([np.frombuffer(blob[:-8], np.float16).astype(np.float32) for blob in blobs])


@pytest.mark.parametrize("answer", BAD)
def test_a_bad_batch_is_kept_nowhere_counted_nowhere_and_embedded_once_the_server_is_mended(
    tmp_path: Path, server: EmbeddingServer, answer: str
) -> None:
    write(tmp_path, CODE)
    server.answer = answer
    bad = _index(tmp_path, server)
    assert "code: embedded 0 chunks" in bad.stdout and "0 of 4 have vectors" in bad.stdout, bad.stdout
    assert max(len(line) for line in (bad.stdout + bad.stderr).splitlines()) <= LONGEST_LINE
    assert "embedding the code index stopped: the server" in bad.stderr, bad.stderr
    server.answer = "good"
    mended = _index(tmp_path, server)
    assert "code: embedded 4 chunks" in mended.stdout and "4 of 4 have vectors" in mended.stdout, mended.stdout
    vectors = _stored_vectors(tmp_path)
    assert vectors.shape == (4, DIMENSION) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=0.01)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("strings", "the server's answer is not in the expected form (64 bad values)"),
        ("huge error", "server error 500: "),
    ],
)
def test_a_long_failure_gives_a_one_line_reason_not_the_servers_report(
    tmp_path: Path, server: EmbeddingServer, answer: str, reason: str
) -> None:
    """Strings for numbers (pydantic's report of every bad value is 90 KB), or a server's 90 KB error message."""
    write(tmp_path, CODE)
    _index(tmp_path, server)
    server.answer = answer  # queries now (the probe still answers)
    found = _search(tmp_path, server, "refresh the access token")
    mode = str(found["mode"])
    assert mode.startswith(f"bm25 (degraded: dense — {reason}"), mode
    assert len(mode) <= LONGEST_LINE and "\n" not in mode


def test_a_probe_answered_with_empty_vectors_is_a_failure_not_a_zero_dimension_model(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    write(tmp_path, CODE)
    server.probe = "empty"
    built = _index(tmp_path, server)
    assert "dense: unavailable: the server returned empty vectors" in built.stdout, built.stdout
    status = _run(tmp_path, server, "status")
    assert "0-d" not in status.stdout and "the server returned empty vectors" in status.stdout, status.stdout


def test_an_answer_dripped_a_byte_at_a_time_gives_up_within_the_query_timeout(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    write(tmp_path, CODE)
    _index(tmp_path, server)
    server.answer = "drip"  # the probe answers at once; the query's answer would take minutes
    started = time.monotonic()
    found = _search(tmp_path, server, "refresh the access token", AGENTTY_RAG_EMBED_TIMEOUT_MS="1000")
    elapsed = time.monotonic() - started
    # 0.5 s to connect and 1 s for the whole answer, then the lexical search; generous for a loaded machine
    assert elapsed < 8, f"the search took {elapsed:.1f} s"
    assert found["mode"] == "bm25 (degraded: dense — timeout)", found["mode"]


def test_the_probe_of_a_dripping_server_gives_up_within_its_bound(tmp_path: Path, server: EmbeddingServer) -> None:
    write(tmp_path, CODE)
    server.probe = "drip"
    started = time.monotonic()
    found = _search(tmp_path, server, "refresh the access token")
    assert time.monotonic() - started < 8
    assert found["mode"] == "bm25 (dense unavailable: timeout)", found["mode"]


POISONS = {
    "zeros": np.zeros(DIMENSION, np.float16),
    "nan": np.full(DIMENSION, np.nan, np.float16),
    "another length": np.full(2 * DIMENSION, 1 / np.sqrt(2 * DIMENSION), np.float16),  # a unit vector, of 128
}


@pytest.mark.parametrize("backend", ["local", "qdrant"])
@pytest.mark.parametrize("poison", sorted(POISONS))
def test_vectors_an_earlier_version_kept_unchecked_are_embedded_again(
    tmp_path: Path, server: EmbeddingServer, poison: str, backend: str
) -> None:
    """An index an earlier version filled with the zero, NaN or other-length vectors a server sent: its searches
    rank as a clean index's once a healthy server answers, and the bad vectors are stored no more."""
    write(tmp_path, CODE)
    _index(tmp_path, server, AGENTTY_RAG_BACKEND=backend)
    query = "refresh the access token"
    clean = _search(tmp_path, server, query, AGENTTY_RAG_BACKEND=backend)
    sealed_here = Store(Path(":memory:"), machine_key(Path(os.environ["XDG_STATE_HOME"])))  # built on this machine
    poisoned = seal_vector(sealed_here, POISONS[poison].tobytes())
    with sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb") as db:
        db.execute("UPDATE vectors SET vector = ?", (poisoned,))
    for shard in (tmp_path / ".agentty" / "qdrant").glob("code-dense-*"):  # Qdrant's copy, as they held then
        shutil.rmtree(shard)
    again = _search(tmp_path, server, query, process=True, AGENTTY_RAG_BACKEND=backend)
    assert again["mode"] == clean["mode"] == "hybrid"
    assert again["results"] == clean["results"]
    vectors = _stored_vectors(tmp_path)
    assert vectors.shape == (4, DIMENSION) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=0.01)


def _header(result: object) -> str:
    content = getattr(result, "content", [])
    return str(getattr(content[0], "text", "")).split("\n")[0] if content else ""


def test_a_server_that_fails_every_batch_is_sent_one_per_back_off_not_one_per_search(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    """Queries embed; every batch comes back all zeros. The server's background embedding fails its batch,
    then waits (2 s first) before it sends another: searches meanwhile send none."""
    write(tmp_path, CODE)
    server.batch = "zeros"
    workspace = Workspace(tmp_path, load_settings(server.env()))
    OPEN_WORKSPACES.append(workspace)
    workspace.dense.background = True  # as the server: embedding in a thread
    workspace.index("code").refresh()
    modes = []
    for _ in range(5):
        modes.append(workspace.search_code("refresh the access token").result.mode)
        embedding = workspace.jobs.job("embed:code")
        if embedding is not None:
            embedding.join()
    assert server.batches == 1
    assert modes[-1] == "bm25 (dense: 0% embedded, embedding the rest in the background)", modes
    assert workspace.index("code").vector_coverage() == (0, 4)


@pytest.mark.anyio
async def test_the_server_keeps_embedding_after_batches_unlike_the_probe_once_the_embedding_server_is_mended(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    """The probe answers 64-d, every batch 128-d: the background embedding fails each batch (the searches answer
    meanwhile), and once the server answers like its probe the index is embedded and searched hybrid."""
    write(tmp_path, CODE)
    server.answer = "other dimension"
    params = stdio_server(tmp_path, **server.env(AGENTTY_RAG_DENSE_RETRY_S="1", AGENTTY_RAG_LEG_CHECK="0"))
    async with Client(params) as client:
        first = await client.call_tool("search_code", {"query": "refresh the access token"})
        assert not first.is_error and "hybrid" not in _header(first), _header(first)
        server.answer = "good"
        deadline = time.monotonic() + 60
        header = _header(first)
        while not header.startswith("search_code · hybrid") and time.monotonic() < deadline:
            await anyio.sleep(0.1)  # a poll of the server's background work, not a wait for it
            header = _header(await client.call_tool("search_code", {"query": "refresh the access token"}))
    assert header.startswith("search_code · hybrid"), header
    vectors = _stored_vectors(tmp_path)
    assert vectors.shape == (4, DIMENSION)


@pytest.mark.anyio
async def test_a_search_of_the_server_is_not_held_by_a_query_answer_dripped_a_byte_at_a_time(
    tmp_path: Path, server: EmbeddingServer
) -> None:
    write(tmp_path, CODE)
    server.answer, server.batch = "drip", "good"  # the probe and the batches answer at once, queries drip
    params = stdio_server(tmp_path, **server.env(AGENTTY_RAG_EMBED_TIMEOUT_MS="1000"))
    async with Client(params) as client:
        started = time.monotonic()
        found = await client.call_tool("search_code", {"query": "refresh the access token"})
        elapsed = time.monotonic() - started
    text = str(getattr(found.content[0], "text", ""))
    assert not found.is_error and _header(found).startswith("search_code · bm25 (degraded)"), text
    assert "dense — timeout" in text, text
    assert elapsed < 8, f"the search took {elapsed:.1f} s"  # 1.5 s for the query, then the lexical search


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
