"""Four ``agentty-rag serve`` processes on one workspace, each searching while the files change under them: no
search reports damage that is not there, and once the edits settle every server answers as a rebuild does.

Each server patches the shared index when its watcher reports an edit, under the update lock; the others
reload the new state. A reload that read the header of one state and the chunks of the next took a sound
index for a damaged one, and deleting the shared database without the lock took it from under the rest."""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from agentty_rag.config import load_settings
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

pytestmark = pytest.mark.anyio

SERVERS = 4
ROUNDS = 20
FILES = 40
QUESTIONS = ("rotate the signing keys", "retry with backoff", "parse the request body", "close the session")
DAMAGE_WORDS = ("damaged", "could not be read", "rebuilding", "not a readable index", "corrupt")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _module(i: int, version: int) -> str:
    topic = QUESTIONS[i % len(QUESTIONS)].split()
    return "\n\n".join(
        f'def {topic[0]}_{topic[-1]}_{i}_{j}(value):\n    """{" ".join(topic)} {version} number {j}."""\n'
        f"    return value + {version * 10 + j}\n"
        for j in range(3 + version % 3)
    )


def _server(root: Path) -> StdioServerParameters:
    script = Path(sys.executable).with_name("agentty-rag")
    command, args = (str(script), []) if script.exists() else (sys.executable, ["-m", "agentty_rag"])
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")}
    environment.update({**LEXICAL, "AGENTTY_RAG_BUILD_WAIT_MS": "60000", "AGENTTY_RAG_STRUCTURED": "1"})
    return StdioServerParameters(command=command, args=[*args, "--root", str(root), "serve"], env=environment)


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def _answer(structured: dict[str, Any] | None) -> list[str]:
    assert structured is not None
    return [r["provenance"] for r in structured["results"]]


async def test_four_servers_searching_while_files_change_report_no_damage_and_answer_as_a_rebuild(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    write(root, {f"src/mod_{i:02}.py": _module(i, 0) for i in range(FILES)})
    (root / ".git").mkdir()
    versions = dict.fromkeys(range(FILES), 0)
    shuffle = random.Random(7)
    damage: list[str] = []
    mismatches: list[str] = []
    async with Client(_server(root)) as first:
        await first.call_tool("search_code", {"query": QUESTIONS[0]})  # the index exists before the others start
        async with Client(_server(root)) as second, Client(_server(root)) as third, Client(_server(root)) as fourth:
            clients = (first, second, third, fourth)

            async def searches(client: Client, round_number: int) -> None:
                for question in QUESTIONS * 2:
                    result = await client.call_tool("search_code", {"query": question, "k": 5})
                    notes = " ".join((result.structured_content or {}).get("notes", ()))
                    if result.is_error or any(word in notes for word in DAMAGE_WORDS):
                        damage.append(f"round {round_number}: {_text(result)[:400]}")

            async def edits() -> None:
                for i in shuffle.sample(range(FILES), 10):
                    versions[i] += 1
                    write(root, {f"src/mod_{i:02}.py": _module(i, versions[i])})
                    await anyio.sleep(0.01)

            for round_number in range(ROUNDS):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(edits)
                    for client in clients:
                        tasks.start_soon(searches, client, round_number)
            # Settled: every server answers as a rebuild of the same files does.
            rebuilt_root = tmp_path / "rebuilt"
            shutil.copytree(root, rebuilt_root, ignore=shutil.ignore_patterns(".agentty"))
            rebuilt = Workspace(rebuilt_root, load_settings(LEXICAL))
            try:
                for question in QUESTIONS:
                    expected = _answer(rebuilt.search_code(question, k=5).structured)
                    for number, client in enumerate(clients):
                        result = await client.call_tool("search_code", {"query": question, "k": 5})
                        if _answer(result.structured_content) != expected:
                            mismatches.append(f"server {number}, {question!r}: {_text(result)[:300]}")
            finally:
                rebuilt.close()
    assert damage == []
    assert mismatches == []
