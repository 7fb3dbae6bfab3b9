"""The shared index, end to end: a collection published by ``agentty-rag index --backend qdrant`` (qdrant-client's
local mode stands for the server), a machine whose working tree differs from it (a file edited, one added,
one deleted) answering over the real MCP server with the overlay winning over the collection, the vectors
coming from the collection (nothing embedded again but the overlay), a second publish sending only what
changed, and ``status`` naming the collection, its commit and the overlay's size. A Qdrant server that does
not answer never hangs a search nor takes the server down: a refused port and a server that accepts and never
answers both give the local index's answer, with one note in the header saying so."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from mcp import Client

from tests.conftest import answer_fence, free_port, run_main
from tests.index.qdrant.helpers import copied
from tests.server.conftest import server as _server

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from agentty_rag.server import AppState


def server(root: Path, **env: str) -> MCPServer[AppState]:
    """The server, with the structured content these tests read the answers' paths and notes from."""
    return _server(root, AGENTTY_RAG_STRUCTURED="1", **env)


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


def _shared(folder: Path) -> dict[str, str]:
    """The settings of a machine starting from the collection kept (local mode) in ``folder``."""
    return {
        "AGENTTY_RAG_BACKEND": "qdrant",
        "AGENTTY_QDRANT_URL": f"file:{folder}",
        "AGENTTY_QDRANT_COLLECTION": "agentty_fixtures_main",
        "AGENTTY_EMBED_BACKEND": "fake",
    }


def _lines(result: Any) -> str:
    return "\n".join(
        f"{hit['path']}:{hit['lines'][0]}-{hit['lines'][1]}" for hit in result.structured_content["results"]
    )


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


EDITED = "server/jobs/queue.py"
ADDED = "services/ledger_reconcile.py"
DELETED = "worker/lease/lease.go"


async def test_the_overlay_wins_over_the_shared_index(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_client")
    folder = tmp_path / "qdrant"
    env = _shared(folder)
    ci = copied(tmp_path / "ci")
    published = run_main("agentty_rag", ci, ("index", "code", "--backend", "qdrant"), env, lexical=False)
    assert published.returncode == 0, published.stderr
    assert "made anew (new collection) — 83 files sent" in published.stdout
    assert "with a dense vector" in published.stdout and " 0 with a dense vector" not in published.stdout

    dev = copied(tmp_path / "dev")
    edited = dev / EDITED
    edited.write_text(edited.read_text("utf-8") + "\n\ndef drain_poisoned_jobs_quarantine():\n    return []\n", "utf-8")
    (dev / ADDED).write_text("def reconcile_ledger_nightly_batches():\n    return 0\n", "utf-8")
    (dev / DELETED).unlink()
    indexed = run_main("agentty_rag", dev, ("index", "code"), env, lexical=False)
    assert indexed.returncode == 0, indexed.stderr
    # seeded from the collection: built from the working tree, only the edited and added files' chunks embedded
    assert "code: rebuilt — 83 files" in indexed.stdout and "83 re-chunked" in indexed.stdout, indexed.stdout
    embedded = next(line for line in indexed.stdout.splitlines() if "embedded" in line)
    new_chunks = int(embedded.split("embedded ")[1].split()[0])
    assert 0 < new_chunks < 20, embedded

    gone_query = {"query": "lease keeper marks itself lost when the job deadline passes"}
    async with Client(server(ci, **env)) as client:
        before = await client.call_tool("search_code", gone_query)
    assert _lines(before).startswith(f"{DELETED}:"), _text(before)  # the collection holds it
    async with Client(server(dev, **env)) as client:
        edit = await client.call_tool("search_code", {"query": "drain poisoned jobs quarantine"})
        added = await client.call_tool("search_code", {"query": "reconcile ledger nightly batches"})
        gone = await client.call_tool("search_code", gone_query)
    assert _lines(edit).startswith(f"{EDITED}:"), _text(edit)
    assert "drain_poisoned_jobs_quarantine" in _text(edit)
    assert _lines(added).startswith(f"{ADDED}:"), _text(added)
    assert DELETED not in _text(gone)

    status = run_main("agentty_rag", dev, ("status",), env, lexical=False).stdout
    line = next(line for line in status.splitlines() if line.startswith("backend: "))
    assert line.startswith(f"backend: qdrant shared index agentty_fixtures_main at file:{folder} — commit ")
    assert line.endswith("overlay: 3 files")

    # CI again after a merge: only the changed file is sent, the deleted one's points go
    (ci / EDITED).write_text(edited.read_text("utf-8"), "utf-8")
    (ci / DELETED).unlink()
    again = run_main("agentty_rag", ci, ("index", "code", "--backend", "qdrant"), env, lexical=False)
    assert again.returncode == 0, again.stderr
    assert "patched — 1 files sent" in again.stdout and "81 unchanged, 1 removed" in again.stdout
    # the machine starts from the new version: its overlay is now the added file only
    run_main("agentty_rag", dev, ("index", "code"), env, lexical=False)
    status = run_main("agentty_rag", dev, ("status",), env, lexical=False).stdout
    assert "overlay: 1 files" in status


async def test_nothing_published_gives_the_local_answer_and_says_so(tmp_path: Path) -> None:
    pytest.importorskip("qdrant_client")
    (local,) = await _searches(copied(tmp_path / "local"), 1)
    env = {**_shared(tmp_path / "qdrant"), "AGENTTY_RAG_DENSE": "0"}
    (result,) = await _searches(copied(tmp_path / "dev"), 1, **env)
    note = "nothing published to the Qdrant collection agentty_fixtures_main yet: answered from the local index"
    assert result.structured_content["notes"] == [note]
    assert _answer(result) == _answer(local)


async def test_a_refused_port_gives_the_local_answer_and_says_so(tmp_path: Path) -> None:
    (local,) = await _searches(copied(tmp_path / "local"), 1)
    port = free_port()
    env = {"AGENTTY_RAG_BACKEND": "qdrant", "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{port}"}
    first, second = await _searches(copied(tmp_path / "served"), 2, **env)
    note = f"qdrant unreachable (connection refused at 127.0.0.1:{port}): answered from the local index"
    # said once, in the header of the first answer (the server's start-up build asked); the answers are the
    # local index's
    assert note in _text(first).split(f"\n{answer_fence(_text(first))}\n", 1)[0]
    assert first.structured_content["notes"] == [note] and second.structured_content["notes"] == []
    assert _answer(first) == _answer(second) == _answer(local)


async def test_a_server_that_never_answers_costs_one_timeout_then_rests(tmp_path: Path, silent: SilentServer) -> None:
    env = {
        "AGENTTY_RAG_BACKEND": "qdrant",
        "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{silent.port}",
        "AGENTTY_QDRANT_TIMEOUT_MS": "1000",
    }
    root = copied(tmp_path / "served")
    async with Client(server(root, **env)) as client:
        with anyio.fail_after(HUNG_S):
            first = await client.call_tool("search_code", QUERY)
        asked = len(silent.accepted)
        with anyio.fail_after(HUNG_S):
            second = await client.call_tool("search_code", QUERY)
    note = f"qdrant unreachable (no answer within 1 s at 127.0.0.1:{silent.port}): answered from the local index"
    for result in (first, second):
        assert not result.is_error, _text(result)
        assert result.structured_content["results"]
    assert first.structured_content["notes"] == [note] and second.structured_content["notes"] == []
    # the start-up build asked once; a search never waits for the server
    assert asked >= 1 and len(silent.accepted) == asked


async def test_a_search_never_waits_for_the_server(tmp_path: Path, silent: SilentServer) -> None:
    """The server's start-up build asks a Qdrant that never answers (for up to a minute); searches meanwhile
    answer from the local index at once, and the server closes without waiting the minute out."""
    root = copied(tmp_path / "served")
    assert run_main("agentty_rag", root, ("index", "code"), {}).returncode == 0
    env = {
        "AGENTTY_RAG_BACKEND": "qdrant",
        "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{silent.port}",
        "AGENTTY_QDRANT_TIMEOUT_MS": "60000",
    }
    with anyio.fail_after(HUNG_S):  # half the server's timeout: the close does not wait it out either
        async with Client(server(root, **env)) as client:
            while not silent.accepted:  # the start-up build is asking it now, and will wait its minute
                await anyio.sleep(0.05)
            for _ in range(2):
                result = await client.call_tool("search_code", QUERY)
                assert not result.is_error, _text(result)
                assert result.structured_content["results"]


def test_status_names_the_backend_and_whether_it_answered(tmp_path: Path) -> None:
    local = copied(tmp_path / "local")
    assert run_main("agentty_rag", local, ("index",), {}).returncode == 0
    assert "\nbackend: local\n" in run_main("agentty_rag", local, ("status",), {}).stdout

    inprocess = copied(tmp_path / "inprocess")
    env = {"AGENTTY_RAG_BACKEND": "qdrant"}
    assert run_main("agentty_rag", inprocess, ("index",), env).returncode == 0
    shown = run_main("agentty_rag", inprocess, ("status",), env).stdout
    assert f"\nbackend: qdrant in-process in {inprocess / '.agentty' / 'qdrant' / 'code'}\n" in shown

    served = copied(tmp_path / "served")
    port = free_port()
    env = {"AGENTTY_RAG_BACKEND": "qdrant", "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{port}"}
    built = run_main("agentty_rag", served, ("index",), env)
    assert built.returncode == 0, built.stderr
    assert f"qdrant unreachable (connection refused at 127.0.0.1:{port}): answered from the local index" in built.stderr
    shown = run_main("agentty_rag", served, ("status",), env).stdout
    line = next(line for line in shown.splitlines() if line.startswith("backend: "))
    assert (
        line == f"backend: qdrant shared index agentty_served_main at http://127.0.0.1:{port} — not started from it yet"
    )


def test_publishing_needs_a_server(tmp_path: Path) -> None:
    root = copied(tmp_path / "ci")
    done = run_main("agentty_rag", root, ("index", "code", "--backend", "qdrant"), {})
    assert done.returncode == 1
    assert "publishing needs the Qdrant backend with a server: set AGENTTY_QDRANT_URL" in done.stderr


def test_the_proactive_hook_never_asks_the_shared_index(tmp_path: Path, silent: SilentServer) -> None:
    """The hook must answer fast: its search reads the index as it is, never a Qdrant that may not answer; a
    command-line search of the same workspace does ask (once, bounded)."""
    from agentty_rag.config import load_settings
    from agentty_rag.workspace.request import code_request, proactive_request
    from agentty_rag.workspace.service import Workspace

    root = copied(tmp_path / "served")
    assert run_main("agentty_rag", root, ("index", "code"), {}).returncode == 0
    env = {
        "AGENTTY_RAG_DENSE": "0",
        "AGENTTY_RAG_BACKEND": "qdrant",
        "AGENTTY_QDRANT_URL": f"http://127.0.0.1:{silent.port}",
        "AGENTTY_QDRANT_TIMEOUT_MS": "1000",
        "HOME": str(tmp_path),
    }
    hook = Workspace(root, load_settings(env))
    try:
        budget = hook.budget()
        outcome = hook.search(proactive_request(QUERY["query"], ("code",), 4, budget, 0.0))
        assert outcome.result.hits
        assert silent.accepted == []
    finally:
        hook.close()
    command_line = Workspace(root, load_settings(env))
    try:
        outcome = command_line.search(code_request(command_line.places, QUERY["query"], 5))
        assert outcome.result.hits
        assert silent.accepted  # asked, and answered from the local index after the timeout
    finally:
        command_line.close()
