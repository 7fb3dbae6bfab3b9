"""What a command loads before it answers on a built index: the terminal commands never load the MCP SDK,
and with no embedding server listening they never load the HTTP client either (a raw connect answers the
probe); neither do they load what only a build needs (secret scanning, worker processes).

Each case runs in a fresh interpreter, as a user's command does, and lists the packages it ended up with.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agentty_rag.ollama_api.client import port_of, unreachable
from tests.conftest import free_port, write

# Runs one command in-process, then prints which of the watched packages were imported.
_PROBE = """
import json, sys
from agentty_rag.cli.command import main
status = main(sys.argv[1:])
watched = ("mcp", "ollama", "httpx", "anyio", "tomlkit", "detect_secrets", "concurrent.futures.process", "filelock",
           "numpy", "agentty_rag.workspace.service")
print(json.dumps({"status": status, "loaded": sorted(m for m in watched if m in sys.modules)}), file=sys.stderr)
"""


def _loaded(root: Path, *args: str, stdin: str = "", **env: str) -> tuple[int, list[str], str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")} | env
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "--root", str(root), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["status"], report["loaded"], done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(
        tmp_path,
        {
            "src/auth/tokens.py": "def refresh_access_token(session):\n    return session.renew()\n",
            "docs/auth.md": "# Tokens\n\nAccess tokens are refreshed before they expire.\n",
        },
    )
    (tmp_path / ".git").mkdir()
    return tmp_path


def test_search_code_with_the_dense_leg_on_and_nothing_listening_loads_neither_mcp_nor_ollama(
    project: Path,
) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    _loaded(project, "index", "all", AGENTTY_OLLAMA_HOST=nobody)
    status, loaded, out = _loaded(project, "search-code", "refresh token", AGENTTY_OLLAMA_HOST=nobody)
    assert status == 0 and "src/auth/tokens.py" in out
    # the probe found the port closed without the HTTP client; no build, no MCP servers, no writer's lock
    assert loaded == ["agentty_rag.workspace.service", "numpy"]


def test_status_says_why_the_dense_leg_is_unavailable_without_loading_the_client(project: Path) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    _loaded(project, "index", "all", AGENTTY_OLLAMA_HOST=nobody)
    status, loaded, out = _loaded(project, "status", AGENTTY_OLLAMA_HOST=nobody)
    assert status == 0 and f"connection refused at http://{nobody}" in out
    assert "ollama" not in loaded and "mcp" not in loaded


def test_the_inject_hook_loads_neither_mcp_nor_ollama(project: Path) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    event = json.dumps({"prompt": "how are access tokens refreshed", "cwd": str(project)})
    _loaded(project, "index", "all", AGENTTY_OLLAMA_HOST=nobody)
    status, loaded, out = _loaded(project, "inject", stdin=event, AGENTTY_OLLAMA_HOST=nobody, AGENTTY_RAG_PROACTIVE="1")
    assert status == 0 and "tokens" in out
    assert set(loaded) <= {
        "filelock",
        "agentty_rag.workspace.service",
        "numpy",
    }  # it asks whether a build holds the index


def test_an_inject_hook_that_is_off_says_so_without_loading_the_retrieval_stack(project: Path) -> None:
    event = json.dumps({"prompt": "how are access tokens refreshed", "cwd": str(project)})
    status, loaded, out = _loaded(project, "inject", stdin=event, AGENTTY_RAG_PROACTIVE="0")
    assert status == 0 and out == ""
    assert loaded == []


def test_the_raw_probe_tells_a_listening_port_from_a_closed_one() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        listening = f"http://127.0.0.1:{server.getsockname()[1]}"
        assert unreachable(listening, 0.5) == ""
    closed = f"http://127.0.0.1:{free_port()}"
    assert unreachable(closed, 0.5) == f"connection refused at {closed}"
    assert unreachable("http://no-such-host.invalid:11434", 0.5).startswith("host not found: no-such-host.invalid")


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("http://127.0.0.1:11434", ("127.0.0.1", 11434)),
        ("http://example.com", ("example.com", 80)),
        ("https://example.com", ("example.com", 443)),
        ("http://[::1]:8080", ("::1", 8080)),
    ],
)
def test_the_probe_connects_where_the_http_client_would(host: str, expected: tuple[str, int]) -> None:
    assert port_of(host) == expected
