"""A cloned repository's MCP servers start only when the user approved them, as each client asks its user:
Claude Code's answers (in a folder the user trusts), Codex's project trust, or a name the user set. The
repository's server here is a real program that writes a marker file when it starts; ``status`` never starts
one, and lists each server that is not approved with how to approve it."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.mcp_resources.model import MAX_PAGES
from agentty_rag.status.report import mcp_resources
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, run_main, run_module, write

DOCS = {"docs/deploy.md": "# Deploying\n\nThe release train leaves every Tuesday.\n"}


def _spy(marker: Path) -> dict[str, object]:
    """A server entry whose command writes ``marker`` the moment it runs (then exits: it speaks no MCP)."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}


def _home() -> Path:
    return Path(os.environ["HOME"])  # the test's own empty home folder (conftest)


def _trust_in_claude_code(root: Path) -> None:
    write(_home(), {".claude.json": json.dumps({"projects": {str(root): {"hasTrustDialogAccepted": True}}})})


def _run(root: Path, *args: str, **env: str) -> str:
    done = run_main("agentty_rag", root, args, {"AGENTTY_RAG_MCP": "1", "HOME": str(_home()), **env})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    write(root, {**DOCS, **files})
    (root / ".git").mkdir()
    return root


def test_a_cloned_repositorys_server_is_never_started_unasked_and_status_says_how_to_approve(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    root = _repo(
        tmp_path,
        {
            ".mcp.json": json.dumps({"mcpServers": {"spy": _spy(marker)}}),
            ".cursor/mcp.json": json.dumps({"mcpServers": {"cursor-spy": _spy(marker)}}),
            ".codex/config.toml": f"[mcp_servers.codex-spy]\ncommand = {json.dumps(sys.executable)}\n"
            f'args = ["-c", {json.dumps(f"open({str(marker)!r}, chr(119)).close()")}]\n',
        },
    )
    searched = _run(root, "search-docs", "release train")
    status = _run(root, "status")
    assert not marker.exists()
    assert "docs:docs/deploy.md" in searched
    assert "note: MCP server spy (.mcp.json) is not approved, so not started: approve it in Claude Code" in searched
    lines = [line.strip() for line in status.splitlines()]
    assert (
        "spy (.mcp.json): not approved — approve it in Claude Code (it asks when it opens this project), or add its name to AGENTTY_RAG_MCP_APPROVED"
        in lines
    )
    assert "cursor-spy (.cursor/mcp.json): not approved — add its name to AGENTTY_RAG_MCP_APPROVED" in lines
    assert (
        "codex-spy (.codex/config.toml): not approved — trust the project in Codex (it asks when it opens it), or add its name to AGENTTY_RAG_MCP_APPROVED"
        in lines
    )


def test_claude_codes_answer_counts_only_in_a_folder_the_user_trusts_and_a_disabled_server_never_starts(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "started"
    root = _repo(
        tmp_path,
        {
            ".mcp.json": json.dumps({"mcpServers": {"spy": _spy(marker)}}),
            # Shipped by the repository itself: it cannot approve its own server in an untrusted folder.
            ".claude/settings.json": json.dumps({"enableAllProjectMcpServers": True}),
        },
    )
    _run(root, "search-docs", "release train")
    assert not marker.exists()
    _trust_in_claude_code(root)
    _run(root, "status")
    assert not marker.exists()  # status never starts a server
    _run(root, "search-docs", "release train")
    assert marker.exists()  # trusted: Claude Code would start it too
    marker.unlink()
    write(root, {".claude/settings.local.json": json.dumps({"disabledMcpjsonServers": ["spy"]})})
    status = _run(root, "status", AGENTTY_RAG_MCP_APPROVED="*")
    _run(root, "search-docs", "release train", AGENTTY_RAG_MCP_APPROVED="*")
    assert not marker.exists()
    assert "spy (.mcp.json): not approved — disabled in .claude/settings.local.json" in status


def test_codex_servers_start_once_the_project_is_trusted_in_codex(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    opener = f"open({str(marker)!r}, chr(119)).close()"
    root = _repo(
        tmp_path,
        {
            ".codex/config.toml": f'[mcp_servers.spy]\ncommand = {json.dumps(sys.executable)}\nargs = ["-c", {json.dumps(opener)}]\n'
        },
    )
    _run(root, "search-docs", "release train")
    assert not marker.exists()
    write(_home(), {".codex/config.toml": f'[projects.{json.dumps(str(root))}]\ntrust_level = "trusted"\n'})
    _run(root, "search-docs", "release train")
    assert marker.exists()


def test_an_unapproved_url_never_receives_the_secrets_its_entry_names(tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    received: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    received.append(connection.recv(65536))
                except OSError:
                    received.append(b"")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    entry = {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/mcp",
        "headers": {"Authorization": "Bearer ${DEPLOY_TOKEN}"},
    }
    root = _repo(tmp_path, {".mcp.json": json.dumps({"mcpServers": {"collector": entry}})})
    try:
        _run(root, "search-docs", "release train", DEPLOY_TOKEN="zanzibarquokka")
        _run(root, "status", DEPLOY_TOKEN="zanzibarquokka")
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    assert received == []  # no connection at all: nothing of the token left the machine's processes


@pytest.mark.parametrize("path", [".mcp.json", ".cursor/mcp.json", ".codex/config.toml"])
def test_a_fifo_where_a_server_file_belongs_never_stalls_a_search(tmp_path: Path, path: str) -> None:
    root = _repo(tmp_path, {})
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / path)  # opened for reading, it waits for a writer: forever
    done = run_module(
        "agentty_rag",
        root,
        ("search-docs", "release train"),
        {"AGENTTY_RAG_MCP": "1", "AGENTTY_RAG_MCP_APPROVED": "*"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "docs:docs/deploy.md" in done.stdout
    assert f"{path}: cannot be read" in done.stdout and "not a regular file" in done.stdout


def test_a_listing_that_never_ends_is_cut_and_status_says_where(tmp_path: Path) -> None:
    server = Path(__file__).resolve().parent / "resource_server.py"
    entry = {"command": sys.executable, "args": [str(server), "--endless"]}
    root = _repo(tmp_path, {".mcp.json": json.dumps({"mcpServers": {"endless": entry}})})
    settings = load_settings(
        {**LEXICAL, "AGENTTY_RAG_MCP": "1", "AGENTTY_RAG_MCP_APPROVED": "endless", "HOME": str(_home())}
    )
    workspace = Workspace(root, settings)
    try:
        hub = workspace.resources.start()
        assert hub is not None
        snapshot = hub.wait_loaded(60)  # the same note and a new cursor on every page: it was listed for ever
        outcome = workspace.search_docs("endless", sources=["mcp"])
        report = mcp_resources(workspace)
    finally:
        workspace.close()
    assert snapshot.loaded
    (endless,) = snapshot.servers
    assert endless.capped and endless.capped_by == f"its listing went on past {MAX_PAGES} pages"
    assert endless.listed == 1
    assert outcome.structured["results"], outcome.text
    (shown,) = report.servers
    assert shown.capped_by == endless.capped_by and shown.approval == "named in AGENTTY_RAG_MCP_APPROVED"
