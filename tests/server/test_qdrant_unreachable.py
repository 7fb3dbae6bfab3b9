"""A Qdrant server that does not answer never hangs a search nor takes the server down: over the real MCP
server, a refused port and a server that accepts and never answers both give the local index's answer, with
one note in the header saying so; a second search inside the cool-down does not ask the server again; and
``status`` names the backend, its server and collection, and whether it answered."""

from __future__ import annotations

import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.conftest import FIXTURES, free_port, run_main
from tests.server.conftest import server

pytestmark = pytest.mark.anyio

QUERY = {"query": "refresh an expired access token"}
# The longest a test waits for an answer before it calls the search hung: a few of the 1 s timeouts below.
HUNG_S = 30


class SilentServer:
    """A TCP server on loopback that accepts every connection and never answers (a hung Qdrant)."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._socket.getsockname()[1])
        self.accepted: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:  # closed
                return
            self.accepted.append(connection)

    def close(self) -> None:
        self._socket.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone does not, on Linux)
        self._socket.close()
        self._thread.join()
        for connection in self.accepted:
            connection.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    held = SilentServer()
    yield held
    held.close()


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def _copy(root: Path) -> Path:
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    return root


async def _searches(root: Path, count: int, **env: str) -> list[Any]:
    """``count`` searches of QUERY over one connection to the server, none allowed to hang."""
    results = []
    async with Client(server(root, **env)) as client:
        for _ in range(count):
            with anyio.fail_after(HUNG_S):
                result = await client.call_tool("search_code", QUERY)
            assert not result.is_error, _text(result)
            results.append(result)
    return results


def _answer(result: Any) -> list[tuple[str, list[int]]]:
    """What the result found: each hit's path and lines."""
    return [(hit["path"], hit["lines"]) for hit in result.structured_content["results"]]


async def test_a_refused_port_gives_the_local_answer_and_says_so(tmp_path: Path) -> None:
    (local,) = await _searches(_copy(tmp_path / "local"), 1)
    port = free_port()
    env = {"AGENTTY_RAG_BACKEND": "qdrant", "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{port}"}
    first, second = await _searches(_copy(tmp_path / "served"), 2, **env)
    note = f"qdrant unreachable (connection refused at 127.0.0.1:{port}): answered from the local index"
    for result in (first, second):
        assert note in _text(result).split("\n\n", 1)[0]
        assert result.structured_content["notes"] == [note]
        assert _answer(result) == _answer(local)
    assert not (tmp_path / "local" / ".agentty" / "qdrant").exists()


async def test_a_server_that_never_answers_costs_one_timeout_then_rests(tmp_path: Path, silent: SilentServer) -> None:
    env = {
        "AGENTTY_RAG_BACKEND": "qdrant",
        "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{silent.port}",
        "AGENTTY_QDRANT_TIMEOUT_MS": "1000",
    }
    root = _copy(tmp_path / "served")
    async with Client(server(root, **env)) as client:
        with anyio.fail_after(HUNG_S):
            first = await client.call_tool("search_code", QUERY)
        asked = len(silent.accepted)
        with anyio.fail_after(HUNG_S):
            second = await client.call_tool("search_code", QUERY)
    note = f"qdrant unreachable (no answer within 1 s at 127.0.0.1:{silent.port}): answered from the local index"
    for result in (first, second):
        assert not result.is_error, _text(result)
        assert result.structured_content["notes"] == [note]
        assert result.structured_content["results"]
    # the first timeout sent the server to rest: the second search asked it nothing
    assert asked >= 1 and len(silent.accepted) == asked


def test_status_names_the_backend_and_whether_it_answered(tmp_path: Path) -> None:
    local = _copy(tmp_path / "local")
    assert run_main("agentty_rag", local, ("index",), {}).returncode == 0
    assert "\nbackend: local\n" in run_main("agentty_rag", local, ("status",), {}).stdout

    inprocess = _copy(tmp_path / "inprocess")
    env = {"AGENTTY_RAG_BACKEND": "qdrant"}
    assert run_main("agentty_rag", inprocess, ("index",), env).returncode == 0
    shown = run_main("agentty_rag", inprocess, ("status",), env).stdout
    assert f"\nbackend: qdrant in-process in {inprocess / '.agentty' / 'qdrant' / 'code'}\n" in shown

    served = _copy(tmp_path / "served")
    port = free_port()
    env = {"AGENTTY_RAG_BACKEND": "qdrant", "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{port}"}
    built = run_main("agentty_rag", served, ("index",), env)
    assert built.returncode == 0, built.stderr
    shown = run_main("agentty_rag", served, ("status",), env).stdout
    line = next(line for line in shown.splitlines() if line.startswith("backend: "))
    assert line.startswith(f"backend: qdrant server http://127.0.0.1:{port}, collection agentty_code_")
    assert line.endswith(
        f" — unreachable (connection refused at 127.0.0.1:{port}); searches answer from the local index"
    )
