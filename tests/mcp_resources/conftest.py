"""Real MCP resource servers for the tests: ``resource_server.py`` over stdio, or over HTTP on loopback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentty_rag.mcp_resources.servers import ServerSpec

SERVER = Path(__file__).resolve().parent / "resource_server.py"


def stdio(name: str, *flags: str) -> ServerSpec:
    """A stdio server the reader starts: ``python resource_server.py FLAGS``."""
    return ServerSpec(name, ".mcp.json", command=sys.executable, args=(str(SERVER), *flags))


class HttpServers:
    """Resource servers serving streamable HTTP on loopback, started together (each takes a second to start)."""

    def __init__(self, flags: dict[str, tuple[str, ...]]) -> None:
        self._processes = {
            name: subprocess.Popen(
                [sys.executable, str(SERVER), "--http", "--name", name, *server_flags],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for name, server_flags in flags.items()
        }
        self.urls: dict[str, str] = {}
        for name, process in self._processes.items():
            assert process.stdout is not None
            port = process.stdout.readline().strip()
            assert port, f"the {name} server did not start"
            self.urls[name] = f"http://127.0.0.1:{port}/mcp"

    def spec(self, name: str) -> ServerSpec:
        return ServerSpec(name, ".mcp.json", url=self.urls[name])

    def stop(self) -> None:
        for process in self._processes.values():
            process.terminate()
        for process in self._processes.values():
            process.wait(10)
            if process.stdout is not None:
                process.stdout.close()


@pytest.fixture(scope="module")
def http_servers() -> Iterator[HttpServers]:
    servers = HttpServers(
        {
            "notifying": ("--docs", "--changing", "--many", "4", "--page-size", "3"),
            "quiet": ("--docs", "--changing", "--no-subscribe"),
            "capped": ("--docs", "--many", "12", "--page-size", "5", "--hang-read", "note://many/0001"),
        }
    )
    yield servers
    servers.stop()
