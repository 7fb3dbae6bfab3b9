"""An embedding server that comes up after the agent, on a large index, over stdio with the official client: the
real command (``agentty-rag serve``) on a generated tree of more than 20,000 chunks, the real embedding model
(``ollama_compat_server.py``, all-MiniLM-L6-v2) down when the server starts and started about 20 s later on the
port the settings name. Once it answers, the searches turn ``hybrid (partial)`` within 30 s and none says
``dense unavailable`` while the background embeds the rest; ``status`` tells how far it got and how fast."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import CompatServer, free_port, stdio_server, write
from tests.server.test_server_stdio import _text

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(300)]

FILES = 2_100
FUNCTIONS = 10  # a definition chunk each: 21,000 chunks
TOPICS = ("invoice", "token", "lease", "webhook", "cache", "ledger", "upload", "backup", "refund", "quota")
VERBS = ("rotate", "settle", "renew", "verify", "flush", "audit", "split", "merge", "expire", "replay")
DOWN_FOR_S = 20.0  # the embedding server comes up this long after the server started
HYBRID_WITHIN_S = 30.0  # once it answers, a search is hybrid (partial) within this long
WATCHED_S = 20.0  # then the searches are watched this long while the background embeds the rest


def _tree(root: Path) -> None:
    """``FILES`` modules of ``FUNCTIONS`` small functions each, every name and docstring its own."""
    files: dict[str, str] = {}
    for n in range(FILES):
        topic = TOPICS[n % len(TOPICS)]
        body = []
        for f in range(FUNCTIONS):
            verb = VERBS[(n + f) % len(VERBS)]
            body.append(
                f"def {verb}_{topic}_{n}_{f}(value, limit={f}):\n"
                f'    """{verb.capitalize()} the {topic} record {n} in step {f}."""\n'
                f"    return min(value + {n * FUNCTIONS + f}, limit)\n"
            )
        files[f"src/{topic}/mod_{n}.py"] = "\n\n".join(body)
    write(root, files)


def _status(root: Path, env: dict[str, str]) -> dict[str, Any]:
    """``agentty-rag status --json`` in another process, as a user runs it beside the server."""
    command = [str(Path(sys.executable).with_name("agentty-rag")), "--root", str(root), "status", "--json"]
    environment = stdio_server(root, **env).env or {}
    done = subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


async def test_an_embedding_server_that_comes_up_late_makes_a_large_index_hybrid_partial_and_keeps_it(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    root = tmp_path / "repo"
    _tree(root)
    port = free_port()
    env = {
        "AGENTTY_RAG_DENSE": "1",
        "AGENTTY_OLLAMA_HOST": f"127.0.0.1:{port}",
        "AGENTTY_EMBED_MODEL": "all-minilm",
        "AGENTTY_RAG_WATCH": "0",
    }
    seen: list[tuple[float, str]] = []  # (when, header and notes) of every search
    up_at: float | None = None
    first_hybrid: float | None = None
    asked = 0
    async with Client(stdio_server(root, **env)) as client:

        async def search() -> str:
            nonlocal asked
            asked += 1  # a new question each time: an embedded query is cached
            words = f"{VERBS[asked % len(VERBS)]} the {TOPICS[asked % len(TOPICS)]} record {asked}"
            text = _text(await client.call_tool("search_code", {"query": words}))
            head = " | ".join(line for line in text.split("\n")[:3] if not line.startswith("[1]"))
            seen.append((time.monotonic(), head))
            return head

        started = time.monotonic()
        while time.monotonic() - started < DOWN_FOR_S:  # the agent searches while nothing embeds
            assert "hybrid" not in await search()
            await anyio.sleep(0.5)
        compat_server(port=port)  # returns once it listens
        up_at = time.monotonic()
        while time.monotonic() - up_at < HYBRID_WITHIN_S + 30:  # bounded: the assertion below says by how much
            if "· hybrid (partial) ·" in await search():
                first_hybrid = time.monotonic()
                break
            await anyio.sleep(0.5)
        assert first_hybrid is not None, f"never hybrid (partial); last: {seen[-3:]}"
        while time.monotonic() - first_hybrid < WATCHED_S:
            await search()
            await anyio.sleep(0.5)
        # status in another process while the background embeds: the vectors so far, their rate, time left
        report = await anyio.to_thread.run_sync(_status, root, env)
        for _ in range(10):  # the rate needs two of the server's reports (every 2 s)
            if report["indexes"]["code"]["dense"]["rate"] > 0:
                break
            await anyio.sleep(1)
            report = await anyio.to_thread.run_sync(_status, root, env)
        ended = await search()
    code = report["indexes"]["code"]
    assert code["chunks"] >= 20_000, code["chunks"]
    assert first_hybrid - up_at <= HYBRID_WITHIN_S, f"hybrid (partial) {first_hybrid - up_at:.1f} s after it answered"
    after = [head for when, head in seen if when >= first_hybrid]
    unavailable = [head for head in after if "dense unavailable" in head]
    assert not unavailable, f"{len(unavailable)} of {len(after)} searches: {unavailable[:3]}"
    assert "hybrid (partial)" in ended, ended
    dense, vectors = report["dense"], code["dense"]
    assert dense["server_state"] == "ready", dense
    assert dense["server"].startswith("the server (pid ") and "last answered it" in dense["server"], dense
    assert vectors["counted"] and 0 < vectors["embedded"] < vectors["chunks"], vectors
    assert vectors["rate"] > 0 and vectors["eta_s"] is not None and vectors["eta_s"] > 0, vectors
