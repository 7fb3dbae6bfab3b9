"""A server's first build of a large tree, over stdio with the official client: the first search answers from
the part built so far and says so in its header; once the build ends, every answer is the one a build at once
gives."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import stdio_server, unkeyed, write
from tests.server.test_server_stdio import _text

pytestmark = pytest.mark.anyio

_QUERIES = (
    "rotate the signing key of a session token",
    "parse a shipping manifest and validate its weight",
    "retry a webhook delivery with back-off",
)
_TOPICS = ("token", "manifest", "webhook", "invoice", "cache", "ledger", "upload", "schedule")


def _module(number: int) -> str:
    topic, other = _TOPICS[number % len(_TOPICS)], _TOPICS[(number * 3 + 1) % len(_TOPICS)]
    return "".join(
        f'def {topic}_step_{number}_{part}(value):\n    """Handle the {topic} {other} step {part} of module {number}."""\n'
        f"    return value + {part}\n\n"
        for part in range(3)
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """1,600 source files (and 100 test files) with the three answers among them: a build takes seconds."""
    root = tmp_path / "big"
    files = {f"src/pkg{n % 40}/module_{n}.py": _module(n) for n in range(1600)}
    files.update({f"tests/test_module_{n}.py": f"def test_module_{n}():\n    assert True\n" for n in range(100)})
    files["src/auth/keys.py"] = (
        'def rotate_signing_key(session):\n    """Rotate the signing key of a session token."""\n    return session\n'
    )
    files["src/shipping/manifest.py"] = (
        'def parse_manifest(text):\n    """Parse a shipping manifest and validate its weight."""\n    return text\n'
    )
    files["src/hooks/deliver.py"] = (
        'def retry_delivery(hook):\n    """Retry a webhook delivery with exponential back-off."""\n    return hook\n'
    )
    write(root, files)
    return root


async def _answers(client: Client) -> list[str]:
    """The answers to the three questions, each fence key written ``KEY`` (a key is drawn in each process)."""
    return [unkeyed(_text(await client.call_tool("search_code", {"query": query}))) for query in _QUERIES]


async def test_the_first_search_answers_from_the_part_built_so_far_and_then_as_a_whole_build(
    tree: Path, tmp_path: Path
) -> None:
    settings = {"AGENTTY_RAG_BUILD_BATCH": "16", "AGENTTY_RAG_WATCH": "0"}
    async with Client(stdio_server(tree, **settings)) as client:
        first = _text(await client.call_tool("search_code", {"query": _QUERIES[0]}))
        header = first.splitlines()[0]
        assert "partial: " in header and " of 1,703 files" in header, first
        assert "\n[1] code:" in first, first  # passages, not "still being built"
        # Each search goes between two parts of the build: search until the header no longer says partial.
        answers = await _answers(client)
        while any("partial: " in answer.splitlines()[0] for answer in answers):
            answers = await _answers(client)
    assert "[1] code:src/auth/keys.py:1-3 · rotate_signing_key" in answers[0], answers[0]

    # The same tree built at once from the command line answers every question the same.
    again = tmp_path / "again" / "big"
    shutil.copytree(tree, again, ignore=shutil.ignore_patterns(".agentty"))
    script = Path(sys.executable).with_name("agentty-rag")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "agentty_rag"]
    subprocess.run([*command, "--root", str(again), "index", "code"], check=True, capture_output=True, timeout=600)
    async with Client(stdio_server(again, **settings)) as client:
        whole = await _answers(client)
    assert whole == answers


def test_a_first_build_stopped_halfway_is_said_in_status_and_finished_by_the_next_build(tree: Path) -> None:
    from agentty_rag.config import load_settings
    from agentty_rag.index.storage.ingest import PartPool
    from agentty_rag.index.storage.refresh import Parts
    from agentty_rag.workspace.service import Workspace
    from tests.conftest import LEXICAL, run_main

    workspace = Workspace(tree, load_settings(dict(LEXICAL)))  # this machine's key, as the commands below
    index = workspace.index("code")
    index.refresh(parts=Parts(64, PartPool()))  # the first part only: the server stopped after it
    assert index.partial == (64, 1703)
    workspace.close()

    status = run_main("agentty_rag", tree, ("status",), {})
    assert "the first build is not finished: 64 of 1,703 files indexed" in status.stdout, status.stdout
    found = run_main("agentty_rag", tree, ("search-code", _QUERIES[0]), {})
    assert "partial" not in found.stdout.splitlines()[0], found.stdout
    assert "code:src/auth/keys.py:1-3" in found.stdout, found.stdout
    again = run_main("agentty_rag", tree, ("status",), {})
    assert "not finished" not in again.stdout and "1,703 files" in again.stdout, again.stdout
