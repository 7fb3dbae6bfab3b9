"""The server's background jobs over stdio with the official client: a build and a watcher that fail are run
again by the workspace's supervisor, the search still answers, and ``status`` (another process) shows what
failed and that it was run again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from tests.conftest import run_main, stdio_server
from tests.server.test_server_stdio import _text

pytestmark = pytest.mark.anyio


async def test_a_build_and_a_watcher_that_raise_are_run_again_and_shown_in_status(repo: Path) -> None:
    faults = {"AGENTTY_RAG_JOB_FAULTS": "build:code=1,watch=1", "AGENTTY_RAG_WATCH": "1"}
    async with Client(stdio_server(repo, **faults)) as client:
        found = _text(await client.call_tool("search_code", {"query": "start the server on a port"}))
        assert "code:src/app/server.py" in found, found  # the build failed once, ran again, and answered
        status = run_main("agentty_rag", repo, ("status",), {}).stdout
        while "watches the workspace" not in status:  # the watcher runs again after its back-off (1 s)
            status = run_main("agentty_rag", repo, ("status",), {}).stdout
        assert "server jobs:" in status, status
        build = next(line for line in status.splitlines() if "build:code" in line)
        assert "failed 1×: InjectedFault" in build and "restarted" in build, status
        watch = next(line for line in status.splitlines() if line.strip().startswith("watch "))
        assert watch.strip().startswith("watch running (failed 1×: InjectedFault"), status
        data = json.loads(run_main("agentty_rag", repo, ("status", "--json"), {}).stdout)
        jobs = {job["key"]: job for job in data["jobs"]}
        assert jobs["build:code"]["failures"] == 1 and jobs["watch"]["failures"] == 1, jobs
        verbose = run_main("agentty_rag", repo, ("status", "--verbose"), {}).stdout
        assert "warm-up" in verbose and "reconcile running" in verbose, verbose  # every job with --verbose
    after = run_main("agentty_rag", repo, ("status",), {}).stdout
    assert "server jobs:" not in after, after  # the server stopped: no record left
