"""Smoke tests of the real command: spawn ``agentty-rag serve`` and talk to it over stdio with the official
MCP client. Everything else about the server runs in memory (``tests/server/``)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, ClientSession, MCPError, StdioServerParameters, stdio_client

from tests.conftest import fixture_env, stdio_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


_server = stdio_server


def _started_in(cwd: Path) -> StdioServerParameters:
    """The server started by a client in ``cwd``, with no --root."""
    return _server(None).model_copy(update={"cwd": cwd})


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def test_the_command_serves_stdio_and_misuse_is_a_json_rpc_error_with_no_traceback(tmp_path: Path) -> None:
    errlog = tmp_path / "stderr.txt"
    codes: dict[str, int] = {}
    with errlog.open("w") as stderr:
        async with stdio_client(_server(tmp_path, **fixture_env(tmp_path)), errlog=stderr) as (read, write_stream):
            async with ClientSession(read, write_stream) as session:
                await session.initialize()
                tools = {tool.name for tool in (await session.list_tools()).tools}
                found = await session.call_tool("search_docs", {"query": "cut a release tag", "sources": ["skills"]})
                for name, call in (
                    ("no question", session.get_prompt("context_for", {})),
                    ("resources", session.list_resources()),
                ):
                    try:
                        await call
                    except MCPError as error:
                        codes[name] = error.error.code
    assert tools == {"search_docs", "search_code"}
    assert next(line for line in _text(found).split("\n") if line.startswith("[1] ")).startswith("[1] skill:rel")
    assert codes == {"no question": -32602, "resources": -32601}
    assert "Traceback" not in errlog.read_text()


async def test_a_server_started_in_a_subfolder_searches_the_repository(repo: Path) -> None:
    structured = _server(None, AGENTTY_RAG_STRUCTURED="1")  # the workspace is named in the structured content
    async with Client(structured.model_copy(update={"cwd": repo / "src" / "app"})) as client:
        result = await client.call_tool("search_docs", {"query": "when does the release train leave"})
    assert not result.is_error and "docs:docs/deploy.md" in _text(result)
    assert result.structured_content is not None and result.structured_content["workspace"] == str(repo)
    assert not (repo / "src" / "app" / ".agentty").exists()


async def test_a_server_started_in_the_home_folder_without_roots_says_to_pass_root() -> None:
    home = Path(os.environ["HOME"])
    async with Client(_started_in(home)) as client:
        result = await client.call_tool("search_docs", {"query": "anything"})
        prompt = await client.get_prompt("context_for", {"question": "how do we deploy?"})
    assert result.is_error and "is your home folder" in _text(result) and "--root DIR" in _text(result)
    assert prompt.messages[0].content.text.startswith("No project context: no workspace")  # type: ignore[union-attr]
    assert not (home / ".agentty" / "rag_docs.ragdb").exists()


def _spawned(root: Path) -> subprocess.Popen[bytes]:
    """``agentty-rag --root ROOT serve`` with raw pipes, for lines no SDK client would send."""
    params = _server(root)
    return subprocess.Popen(
        [params.command, *params.args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=params.env,
    )


def _raw_session(root: Path, lines: list[bytes], replies: int) -> list[dict[str, Any]]:
    """Send raw lines to ``agentty-rag serve`` and read ``replies`` lines back (at most 60 s in all)."""
    import json
    import queue
    import threading

    process = _spawned(root)
    assert process.stdin is not None and process.stdout is not None
    received: queue.Queue[bytes] = queue.Queue()
    output = process.stdout

    def read() -> None:
        for line in output:
            received.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        for line in lines:
            process.stdin.write(line + b"\n")
        process.stdin.flush()
        got = []
        for _ in range(replies):
            try:
                got.append(json.loads(received.get(timeout=60)))
            except queue.Empty:
                break
        return got
    finally:
        process.stdin.close()
        process.wait(30)
        process.stdout.close()


def test_a_malformed_message_gets_a_json_rpc_error_reply_and_the_session_goes_on(tmp_path: Path) -> None:
    initialize = (
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
    )
    lines = [
        initialize,
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b"not json at all",
        b"\xff\xfe{}",
        b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"\\ud800"}}',
        b'{"jsonrpc":"2.0","id":8}',
        b'{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}}",
        b'{"jsonrpc":"2.0","id":10,"method":"tools/list"}',
    ]
    replies = _raw_session(tmp_path, lines, 7)
    errors = sorted(((r["id"] if r["id"] is not None else 0), r["error"]["code"]) for r in replies if "error" in r)
    assert errors == [(0, -32700), (0, -32700), (0, -32600), (7, -32600), (8, -32600)]
    assert {r["id"] for r in replies if "result" in r} == {1, 10}  # answered before and after: it goes on


def test_the_server_answers_then_exits_promptly_when_the_client_closes_stdin(tmp_path: Path) -> None:
    """The SDK keeps a duplicate of its output pipe open after it is done: the last reply still goes out, and
    the process does not sit out a thread's timeout before it exits (a client restarting it waits for that)."""
    import json
    import time

    process = _spawned(tmp_path)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(
            b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
            b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}\n'
        )
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1  # the server is up
        process.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n')
        process.stdin.close()
        closed = time.monotonic()
        last = json.loads(process.stdout.readline())
        assert last["id"] == 2 and {tool["name"] for tool in last["result"]["tools"]} >= {"search_code"}
        process.wait(60)
        # the old shutdown sat out a 10 s join; leave a loaded machine the rest
        assert time.monotonic() - closed < 7.0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()
