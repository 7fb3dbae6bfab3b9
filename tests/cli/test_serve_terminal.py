"""``agentty-rag serve`` started by a person in a terminal: one line on stderr says an MCP client is meant to
start it, and it still answers MCP on stdin/stdout. Started by a client (stdin a pipe), it says nothing."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from agentty_rag.cli.command import ON_A_TERMINAL
from tests.conftest import LEXICAL

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")} | LEXICAL


def _line(fd: int, timeout_s: float = 60) -> bytes:
    """One line from ``fd`` (a pipe), waiting at most ``timeout_s``."""
    data = b""
    while not data.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], timeout_s)
        assert ready, f"nothing within {timeout_s} s (so far {data!r})"
        chunk = os.read(fd, 1)
        assert chunk, f"closed after {data!r}"
        data += chunk
    return data


def test_serve_on_a_terminal_says_how_clients_start_it_and_still_serves(tmp_path: Path) -> None:
    controller, terminal = pty.openpty()
    attributes = termios.tcgetattr(terminal)
    attributes[3] &= ~termios.ECHO  # what the test types is not echoed back into the terminal
    termios.tcsetattr(terminal, termios.TCSANOW, attributes)
    with subprocess.Popen(
        [sys.executable, "-m", "agentty_rag", "--root", str(tmp_path), "serve"],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(),
    ) as server:
        os.close(terminal)
        try:
            assert server.stderr is not None and server.stdout is not None
            assert _line(server.stderr.fileno()).decode().rstrip("\n") == ON_A_TERMINAL
            os.write(controller, json.dumps(INITIALIZE).encode() + b"\n")
            answer = json.loads(_line(server.stdout.fileno()))
            assert answer["id"] == 1 and answer["result"]["serverInfo"]["name"]
        finally:
            server.terminate()
            server.wait(30)
            os.close(controller)
    assert "an MCP client starts it" in ON_A_TERMINAL and "agentty-rag init" in ON_A_TERMINAL


def test_serve_started_by_a_client_prints_nothing_for_people(tmp_path: Path) -> None:
    server = subprocess.run(
        [sys.executable, "-m", "agentty_rag", "--root", str(tmp_path), "serve"],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=120,
    )
    assert '"serverInfo"' in server.stdout
    assert ON_A_TERMINAL not in server.stderr
