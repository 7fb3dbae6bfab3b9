"""The resource hub against real MCP servers (written with the SDK in ``resource_server.py``): no client mocks."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest

import agentty_rag.mcp_resources.reader  # noqa: F401  the SDK, imported before anything is timed
from agentty_rag.mcp_resources.hub import ResourceHub
from agentty_rag.mcp_resources.model import ReaderOptions, Snapshot
from agentty_rag.mcp_resources.servers import ServerList, ServerSpec
from tests.mcp_resources.conftest import HttpServers, stdio

# Generous for a server that must start (the SDK takes a second or two to import on a busy machine).
STARTING = ReaderOptions(timeout_s=20.0)
TEXT_DOCS = {"db://schema/orders", "file:///design/auth.md", "wiki://Team/Runbook"}


@contextmanager
def running(*specs: ServerSpec, options: ReaderOptions = STARTING, protocol: str = "auto") -> Iterator[ResourceHub]:
    hub = ResourceHub(ServerList(specs), options, protocol=protocol).start()
    try:
        yield hub
    finally:
        hub.close()


def _changed(snapshot: Snapshot) -> bool:
    texts = {r.uri: r.text for r in snapshot.resources}
    return "second version" in texts.get("note://changing", "") and "note://added" in texts


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_a_stdio_server_is_listed_page_by_page_read_and_followed_through_its_notifications(
    protocol: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTTY_RAG_MCP", "1")  # a server started here never inherits agentty-rag's variables
    spec = replace(
        stdio("docs", "--docs", "--changing", "--many", "7", "--page-size", "3", "--env"), env=(("TEAM", "a"),)
    )
    with running(spec, protocol=protocol) as hub:
        first = hub.wait_loaded(30)
        snapshot = hub.wait_for(_changed, 30)
    report = snapshot.servers[0]
    notes = {f"note://many/{i:04d}" for i in range(7)}
    assert {r.uri for r in snapshot.resources} == TEXT_DOCS | notes | {
        "note://changing",
        "note://added",
        "env://variables",
    }
    assert {r.server for r in snapshot.resources} == {"docs"}
    assert (report.state, report.error, report.listed, report.skipped) == ("ready", "", 15, (("binary", 2),))
    assert report.freshness == "change notifications"
    assert not any("by-id" in r.uri for r in snapshot.resources)  # the template is not listed
    assert snapshot.version > first.version
    formats = {r.uri: r.format for r in snapshot.resources}
    assert formats["file:///design/auth.md"] == "markdown"
    assert formats["db://schema/orders"] == "config"
    assert formats["wiki://Team/Runbook"] == "text"
    variables = {r.uri: r.text for r in snapshot.resources}["env://variables"]
    assert "TEAM=a" in variables and "AGENTTY" not in variables and "PATH=" in variables


def test_an_http_server_is_followed_through_its_2026_listen_stream(http_servers: HttpServers) -> None:
    with running(http_servers.spec("notifying")) as hub:
        snapshot = hub.wait_for(_changed, 30)
    report = snapshot.servers[0]
    assert (report.state, report.listed, report.freshness) == ("ready", 11, "change notifications")
    assert len(snapshot.resources) == 9


def test_a_server_without_notifications_is_read_again_after_the_ttl(http_servers: HttpServers) -> None:
    options = ReaderOptions(timeout_s=20.0, ttl_s=0.3)
    with running(http_servers.spec("quiet"), options=options) as hub:
        first = hub.wait_loaded(30)
        later = hub.wait_for(_changed, 30)
    changing = {r.uri: r.text for r in first.resources}["note://changing"]
    assert "first version" in changing
    assert later.servers[0].freshness == "read again every 0.3 s"


def test_caps_and_a_hanging_read_leave_the_rest_readable(http_servers: HttpServers) -> None:
    options = ReaderOptions(timeout_s=1.0, max_resources=10, max_bytes=120)
    began = time.monotonic()
    with running(http_servers.spec("capped"), options=options) as hub:
        snapshot = hub.wait_loaded(30)
        waited = time.monotonic() - began
    report = snapshot.servers[0]
    assert report.state == "ready"
    assert (report.listed, report.capped) == (10, True)
    assert report.skipped == (("binary", 2), ("read timed out", 1), ("too large", 1))
    assert [r.uri for r in snapshot.resources] == [
        "db://schema/orders",
        "note://many/0000",
        "note://many/0002",
        "note://many/0003",
        "note://many/0004",
        "note://many/0005",
    ]
    assert waited < 1.0 + 3.0  # the one read that hangs costs its timeout, once


def test_servers_that_crash_hang_or_are_missing_are_reported_at_their_deadline(tmp_path: Path) -> None:
    pid_file = tmp_path / "hang.pid"
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen(8)  # accepts connections, never answers
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused = closed.getsockname()[1]
    closed.close()
    specs = (
        stdio("crashing", "--crash"),
        stdio("hanging", "--hang", "--pid-file", str(pid_file)),
        ServerSpec("missing", ".mcp.json", command="no-such-mcp-server-program"),
        ServerSpec("refused", ".mcp.json", url=f"http://127.0.0.1:{refused}/mcp"),
        ServerSpec("silent", ".mcp.json", url=f"http://127.0.0.1:{listening.getsockname()[1]}/mcp"),
    )
    began = time.monotonic()
    with running(*specs, options=ReaderOptions(timeout_s=1.0)) as hub:
        snapshot = hub.wait_loaded(30)
        waited = time.monotonic() - began
        pid = int(pid_file.read_text(encoding="utf-8"))
    listening.close()
    errors = {r.name: (r.state, r.error) for r in snapshot.servers}
    assert errors["crashing"] == (
        "failed",
        "closed the connection while starting — its stderr: resource server: the wiki database is unavailable",
    )
    assert errors["hanging"] == ("failed", "timed out after 1000 ms starting")
    assert errors["missing"] == ("failed", "cannot start no-such-mcp-server-program: no such program")
    assert errors["refused"][0] == "failed" and "connect" in errors["refused"][1].lower()
    assert errors["silent"] == ("failed", "timed out after 1000 ms starting")
    assert snapshot.resources == ()
    assert all(r.failures == 1 for r in snapshot.servers)
    assert waited < 1.0 + 1.5  # a hanging server costs its timeout, not its shutdown
    with pytest.raises(ProcessLookupError):  # closing the hub stopped the server it started
        os.kill(pid, 0)


def test_no_servers_means_no_thread_and_nothing_to_wait_for() -> None:
    hub = ResourceHub(ServerList(), STARTING).start()
    assert not hub.started
    assert hub.wait_loaded(0).loaded
    hub.close()
