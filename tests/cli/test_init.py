"""``agentty-rag init``: merged into the user's files (never a lost line), undone exactly by --uninstall,
shown as a diff, in each client's documented format."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from agentty_rag import jsonc
from agentty_rag.cli.clients import instruction_file
from tests.conftest import LEXICAL, run_main, write

MCP_JSON = """{
    "mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]},
        "postgres": {
            "command": "pg-mcp",
            "env": {"PGHOST": "db"}
        }
    }
}
"""
CLAUDE_SETTINGS = """{
  "permissions": {
    "allow": ["Bash(npm run test:*)"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "UserPromptSubmit": [
      {"hooks": [{"type": "command", "command": "./scripts/lint-prompt.sh"}]}
    ],
    "PostToolUse": [
      {"matcher": "Edit", "hooks": [{"type": "command", "command": "npx prettier --write"}]}
    ]
  }
}
"""
CODEX_TOML = """# personal Codex settings
model = "o4-mini"  # the fast one
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]

[profiles.review]
model = "o3"
"""


def _init(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_main("agentty_rag", root, ("init", *args), {})


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_claude_code_merges_into_existing_files_and_uninstall_restores_their_bytes(tmp_path: Path) -> None:
    write(tmp_path, {".mcp.json": MCP_JSON, ".claude/settings.json": CLAUDE_SETTINGS})
    out = _ok(_init(tmp_path, "claude-code", "--hook"))
    assert "--- a/.mcp.json\n+++ b/.mcp.json\n" in out and "wrote .mcp.json, .claude/settings.json" in out
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert list(servers) == ["agentty-rag", "github", "postgres"]
    assert servers["agentty-rag"]["args"] == ["serve"] and servers["postgres"]["env"] == {"PGHOST": "db"}
    merged = (tmp_path / ".mcp.json").read_text()
    assert all(line in merged.splitlines() for line in MCP_JSON.splitlines())  # not a line lost
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["permissions"]["deny"] == ["Read(./.env)"]
    prompt_hooks = settings["hooks"]["UserPromptSubmit"]
    assert [h["hooks"][0]["command"] for h in prompt_hooks][1] == "./scripts/lint-prompt.sh"
    assert prompt_hooks[0]["hooks"][0]["command"].endswith('inject --root "$CLAUDE_PROJECT_DIR" --format json')
    assert settings["hooks"]["PostToolUse"][0]["matcher"] == "Edit"
    again = _init(tmp_path, "claude-code", "--hook")
    assert "unchanged: .mcp.json" in _ok(again) and "nothing to change" in again.stdout
    out = _ok(_init(tmp_path, "claude-code", "--uninstall"))
    assert "removed agentty-rag from .mcp.json, .claude/settings.json" in out
    assert (tmp_path / ".mcp.json").read_text() == MCP_JSON
    assert (tmp_path / ".claude" / "settings.json").read_text() == CLAUDE_SETTINGS


def test_local_puts_the_hook_in_the_personal_settings_file(tmp_path: Path) -> None:
    _ok(_init(tmp_path, "claude-code", "--hook", "--local"))
    assert not (tmp_path / ".claude" / "settings.json").exists()
    local = json.loads((tmp_path / ".claude" / "settings.local.json").read_text())
    assert "inject" in local["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    _ok(_init(tmp_path, "claude-code", "--uninstall"))
    assert not (tmp_path / ".claude").exists() and not (tmp_path / ".mcp.json").exists()
    assert _init(tmp_path, "cursor", "--local").returncode == 2


def test_learn_adds_the_read_hook_beside_the_users_own_and_turns_learning_on_for_the_server(tmp_path: Path) -> None:
    write(tmp_path, {".mcp.json": MCP_JSON, ".claude/settings.json": CLAUDE_SETTINGS})
    out = _ok(_init(tmp_path, "claude-code", "--hook", "--learn"))
    assert "AGENTTY_RAG_LEARN=1" in out
    server = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["agentty-rag"]
    assert server["env"] == {"AGENTTY_RAG_LEARN": "1"}
    hooks = json.loads((tmp_path / ".claude" / "settings.json").read_text())["hooks"]
    on_read = hooks["PostToolUse"]
    assert [item["matcher"] for item in on_read] == ["Read", "Edit"]  # the user's Edit hook stays
    assert on_read[0]["hooks"][0]["command"].endswith('feedback --root "$CLAUDE_PROJECT_DIR"')
    assert "inject" in hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert "nothing to change" in _ok(_init(tmp_path, "claude-code", "--hook", "--learn"))
    _ok(_init(tmp_path, "claude-code", "--uninstall"))
    assert (tmp_path / ".mcp.json").read_text() == MCP_JSON
    assert (tmp_path / ".claude" / "settings.json").read_text() == CLAUDE_SETTINGS
    assert _init(tmp_path, "cursor", "--learn").returncode == 2


def test_the_written_hook_runs_from_any_folder_for_its_project(tmp_path: Path, repo: Path) -> None:
    _ok(_init(repo, "claude-code", "--hook"))
    command = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]["UserPromptSubmit"][0]
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")} | LEXICAL
    environment |= {"CLAUDE_PROJECT_DIR": str(repo), "AGENTTY_RAG_PROACTIVE": "1"}
    event = {"session_id": "s", "cwd": str(tmp_path), "prompt": "when does the release train leave?"}
    ran = subprocess.run(
        command["hooks"][0]["command"],
        shell=True,
        input=json.dumps(event),
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
    )
    assert ran.returncode == 0 and ran.stdout == ""
    assert "building it in the background" in ran.stderr  # it found the project by --root, not the cwd
    assert not (tmp_path / ".agentty").exists()


def test_dry_run_shows_a_diff_and_writes_nothing(tmp_path: Path) -> None:
    write(tmp_path, {".mcp.json": MCP_JSON})
    out = _ok(_init(tmp_path, "claude-code", "--dry-run"))
    assert "--- a/.mcp.json\n+++ b/.mcp.json\n@@ " in out
    assert '+        "agentty-rag": {\n' in out and "(dry run: nothing written)" in out
    assert (tmp_path / ".mcp.json").read_text() == MCP_JSON


def test_a_changed_entry_is_replaced_only_with_force(tmp_path: Path) -> None:
    _ok(_init(tmp_path, "cursor"))
    path = tmp_path / ".cursor" / "mcp.json"
    edited = path.read_text().replace('"serve"]', '"serve"],\n      "env": {"AGENTTY_DOCS_DIR": "handbook"}')
    path.write_text(edited)
    refused = _init(tmp_path, "cursor")
    assert refused.returncode == 1 and "differs from what init writes" in refused.stderr
    assert '-      "env": {"AGENTTY_DOCS_DIR": "handbook"}' in refused.stdout and path.read_text() == edited
    _ok(_init(tmp_path, "cursor", "--force"))
    assert "env" not in json.loads(path.read_text())["mcpServers"]["agentty-rag"]


def test_a_broken_file_is_never_overwritten(tmp_path: Path) -> None:
    write(tmp_path, {".mcp.json": '{\n  "mcpServers": {\n    "x": {"command": "y",}\n  \n'})
    before = (tmp_path / ".mcp.json").read_text()
    for args in (("claude-code",), ("claude-code", "--force"), ("claude-code", "--uninstall")):
        result = _init(tmp_path, *args)
        assert result.returncode == 1 and "is not valid JSON" in result.stderr and "line 5" in result.stderr
        assert "nothing written" in result.stderr and result.stderr.count("\n") == 1
    assert (tmp_path / ".mcp.json").read_text() == before


def test_codex_merges_into_toml_with_a_tool_timeout_above_the_build_wait(tmp_path: Path) -> None:
    write(tmp_path, {".codex/config.toml": CODEX_TOML})
    _ok(_init(tmp_path, "codex"))
    text = (tmp_path / ".codex" / "config.toml").read_text()
    assert text.startswith(CODEX_TOML.split("[profiles.review]")[0]) and "# the fast one" in text
    config = tomllib.loads(text)
    ours = config["mcp_servers"]["agentty-rag"]
    assert ours["args"] == ["serve"] and ours["tool_timeout_sec"] > 20 and config["mcp_servers"]["docs"]
    assert config["profiles"]["review"]["model"] == "o3"
    _ok(_init(tmp_path, "codex", "--uninstall"))
    assert (tmp_path / ".codex" / "config.toml").read_text() == CODEX_TOML


@pytest.mark.parametrize(
    ("client", "path", "keys", "shape"),
    [
        ("cursor", ".cursor/mcp.json", ("mcpServers",), {"args": ["--root", "${workspaceFolder}", "serve"]}),
        (
            "vscode",
            ".vscode/mcp.json",
            ("servers",),
            {"type": "stdio", "args": ["--root", "${workspaceFolder}", "serve"]},
        ),
        ("gemini", ".gemini/settings.json", ("mcpServers",), {"args": ["serve"]}),
        ("opencode", "opencode.json", ("mcp",), {"type": "local", "enabled": True}),
        ("windsurf", "~/.codeium/windsurf/mcp_config.json", ("mcpServers",), {"args": ["serve"]}),
    ],
)
def test_each_client_gets_its_documented_format(
    tmp_path: Path, client: str, path: str, keys: tuple[str, ...], shape: dict[str, object]
) -> None:
    file = Path(os.environ["HOME"]) / path[2:] if path.startswith("~/") else tmp_path / path
    _ok(_init(tmp_path, client))
    entry = jsonc.get(file.read_text(), (*keys, "agentty-rag"))
    assert isinstance(entry, dict) and shape.items() <= entry.items()
    command = entry["command"]
    assert (command[-1] if isinstance(command, list) else entry["args"][-1]) == "serve"
    _ok(_init(tmp_path, client, "--uninstall"))
    assert not file.exists()


def test_vscode_keeps_the_comments_of_a_jsonc_file(tmp_path: Path) -> None:
    original = '{\n\t// inputs for the GitHub server\n\t"inputs": [],\n\t"servers": {\n\t\t"gh": {"type": "http", "url": "https://example.invalid/mcp"},\n\t},\n}\n'
    write(tmp_path, {".vscode/mcp.json": original})
    _ok(_init(tmp_path, "vscode"))
    merged = (tmp_path / ".vscode" / "mcp.json").read_text()
    assert "// inputs for the GitHub server" in merged and '\t\t"agentty-rag": {\n\t\t\t"type": "stdio",' in merged
    servers = jsonc.get(merged, ("servers",))
    assert isinstance(servers, dict) and set(servers) == {"agentty-rag", "gh"}
    _ok(_init(tmp_path, "vscode", "--uninstall"))
    assert (tmp_path / ".vscode" / "mcp.json").read_text() == original


def test_opencode_writes_into_the_v2_servers_table_when_the_file_uses_it(tmp_path: Path) -> None:
    original = '{\n  "mcp": {\n    "servers": {\n      "web": {"type": "remote", "url": "https://example.invalid"}\n    }\n  }\n}\n'
    write(tmp_path, {"opencode.json": original})
    _ok(_init(tmp_path, "opencode"))
    servers = jsonc.get((tmp_path / "opencode.json").read_text(), ("mcp", "servers"))
    assert isinstance(servers, dict) and set(servers) == {"agentty-rag", "web"}
    _ok(_init(tmp_path, "opencode", "--uninstall"))
    assert (tmp_path / "opencode.json").read_text() == original


def test_instructions_are_one_marked_block_that_uninstall_takes_out(tmp_path: Path) -> None:
    write(tmp_path, {"AGENTS.md": "# Agents\n\nRun `make test` before committing.\n"})
    _ok(_init(tmp_path, "codex", "--instructions"))
    text = (tmp_path / "AGENTS.md").read_text()
    assert text.startswith("# Agents\n\nRun `make test` before committing.\n\n<!-- agentty-rag:start")
    assert "`search_docs`" in text and "`search_code`" in text and text.endswith("<!-- agentty-rag:end -->\n")
    _ok(_init(tmp_path, "claude-code", "--instructions"))
    assert "`search_docs`" in (tmp_path / "CLAUDE.md").read_text()
    _ok(_init(tmp_path, "codex", "--uninstall"))
    assert (tmp_path / "AGENTS.md").read_text() == "# Agents\n\nRun `make test` before committing.\n"
    assert not (tmp_path / ".codex").exists()


def test_init_from_a_subfolder_writes_at_the_repository_root(repo: Path) -> None:
    result = run_main("agentty_rag", None, ("init", "claude-code"), {}, cwd=repo / "src" / "app")
    assert result.returncode == 0, result.stderr
    assert (repo / ".mcp.json").exists() and not (repo / "src" / "app" / ".mcp.json").exists()


# -- the command a client is told to run: portable when agentty-rag is on PATH ---------------------------------

# Where each client's entry is, and how its command is read from it (opencode keeps command and arguments in one
# list); Windsurf's file is in the home folder.
ENTRIES = {
    "claude-code": (".mcp.json", ("mcpServers",)),
    "codex": (".codex/config.toml", ("mcp_servers",)),
    "cursor": (".cursor/mcp.json", ("mcpServers",)),
    "vscode": (".vscode/mcp.json", ("servers",)),
    "gemini": (".gemini/settings.json", ("mcpServers",)),
    "windsurf": ("~/.codeium/windsurf/mcp_config.json", ("mcpServers",)),
    "opencode": ("opencode.json", ("mcp",)),
}


def _written_command(root: Path, client: str) -> list[str]:
    """The command (and its arguments before ``serve``'s) that ``client`` was told to start."""
    rel, keys = ENTRIES[client]
    path = Path(os.environ["HOME"]) / rel[2:] if rel.startswith("~/") else root / rel
    text = path.read_text()
    entry = (
        tomllib.loads(text)[keys[0]]["agentty-rag"]
        if path.suffix == ".toml"
        else jsonc.get(text, (*keys, "agentty-rag"))
    )
    assert isinstance(entry, dict)
    command = entry["command"]
    return [str(c) for c in command] if isinstance(command, list) else [str(command), *entry["args"]]


def _launcher_script(folder: Path, python: str) -> Path:
    """An ``agentty-rag`` script as pip writes one: a ``#!`` line naming the Python it runs."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "agentty-rag"
    script.write_text(f"#!{python}\nimport sys\nfrom agentty_rag.cli.command import main\nsys.exit(main())\n")
    script.chmod(0o755)
    return script


def _init_with_path(root: Path, path: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_main("agentty_rag", root, ("init", *args), {"PATH": path})


@pytest.mark.parametrize("client", sorted(ENTRIES))
def test_init_writes_the_bare_command_when_path_runs_this_installation(tmp_path: Path, client: str) -> None:
    bin_dir = tmp_path / "bin"
    _launcher_script(bin_dir, sys.executable)
    path = f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin"
    root = tmp_path / "project"
    root.mkdir()
    result = _init_with_path(root, path, client, *(("--hook",) if client == "claude-code" else ()))
    assert result.returncode == 0, result.stderr
    command = _written_command(root, client)
    assert command[0] == "agentty-rag" and "only this machine" not in result.stderr
    ran = subprocess.run([command[0], "--version"], capture_output=True, text=True, env={"PATH": path}, timeout=60)
    assert ran.returncode == 0 and ran.stdout.startswith("agentty-rag ")
    if client == "claude-code":
        hook = json.loads((root / ".claude" / "settings.json").read_text())["hooks"]["UserPromptSubmit"][0]
        assert hook["hooks"][0]["command"].startswith("agentty-rag inject ")


@pytest.mark.parametrize("client", sorted(ENTRIES))
def test_init_without_agentty_rag_on_path_writes_this_machines_path_and_says_so(tmp_path: Path, client: str) -> None:
    path = f"/usr/bin{os.pathsep}/bin"
    result = _init_with_path(tmp_path, path, client)
    assert result.returncode == 0, result.stderr
    command = _written_command(tmp_path, client)
    assert os.path.isabs(command[0]) and Path(command[0]).exists()
    assert "agentty-rag is not on PATH" in result.stderr and "a path only this machine has" in result.stderr
    assert "uv tool install" in result.stderr and f"init {client} --force" in result.stderr
    serve_prefix = command[: command.index("serve")] if "serve" in command else command
    arguments = [a for a in serve_prefix[1:] if a not in ("--root", "${workspaceFolder}")]
    ran = subprocess.run([command[0], *arguments, "--version"], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0 and ran.stdout.startswith("agentty-rag ")


def test_another_installation_on_path_is_not_written_as_the_bare_command(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    _launcher_script(bin_dir, str(tmp_path / "elsewhere" / "bin" / "python"))
    result = _init_with_path(tmp_path, f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", "cursor")
    assert result.returncode == 0, result.stderr
    assert os.path.isabs(_written_command(tmp_path, "cursor")[0])
    assert f"the agentty-rag on PATH ({bin_dir / 'agentty-rag'}) is another installation" in result.stderr


def test_a_link_to_the_installations_script_counts_as_the_same_installation(tmp_path: Path) -> None:
    from agentty_rag.cli.clients import same_installation

    tool_bin = tmp_path / "tools" / "agentty-rag" / "bin"  # as uv tool and pipx lay out an installation
    python = tool_bin / "python"
    tool_bin.mkdir(parents=True)
    python.symlink_to(sys.executable)
    _launcher_script(tool_bin, "/usr/bin/python3")  # a #! line that does not tell: the link must
    link = tmp_path / "bin" / "agentty-rag"
    link.parent.mkdir()
    link.symlink_to(tool_bin / "agentty-rag")
    assert same_installation(str(link), str(python))
    assert not same_installation(str(link), sys.executable)


# -- a shared instructions block, and JSON with comments --------------------------------------------------------


def test_uninstall_keeps_a_shared_instructions_block_while_another_client_uses_it(tmp_path: Path) -> None:
    original = "# Agents\n\nRun `make test` before committing.\n"
    write(tmp_path, {"AGENTS.md": original})
    _ok(_init(tmp_path, "codex", "--instructions"))
    _ok(_init(tmp_path, "cursor", "--instructions"))
    with_block = (tmp_path / "AGENTS.md").read_text()
    assert with_block.count("<!-- agentty-rag:start") == 1
    removed = _init(tmp_path, "codex", "--uninstall")
    assert removed.returncode == 0, removed.stderr
    assert (tmp_path / "AGENTS.md").read_text() == with_block and not (tmp_path / ".codex").exists()
    assert "kept the agentty-rag block in AGENTS.md: cursor still run(s) agentty-rag here" in removed.stderr
    last = _init(tmp_path, "cursor", "--uninstall")
    assert last.returncode == 0 and "kept" not in last.stderr
    assert (tmp_path / "AGENTS.md").read_text() == original and not (tmp_path / ".cursor").exists()


def test_claude_codes_own_instructions_file_is_not_shared(tmp_path: Path) -> None:
    _ok(_init(tmp_path, "claude-code", "--instructions"))
    _ok(_init(tmp_path, "codex", "--instructions"))
    removed = _init(tmp_path, "claude-code", "--uninstall")
    assert removed.returncode == 0 and not (tmp_path / "CLAUDE.md").exists() and "kept" not in removed.stderr
    assert "<!-- agentty-rag:start" in (tmp_path / "AGENTS.md").read_text()


COMMENTED_MCP_JSON = """{
  // the project's servers
  "mcpServers": {
    /* GitHub, for issues */
    "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github",],},
  },
}
"""


def test_json_with_comments_and_trailing_commas_is_merged_keeping_every_byte_of_it(tmp_path: Path) -> None:
    write(tmp_path, {".mcp.json": COMMENTED_MCP_JSON})
    result = _init(tmp_path, "claude-code")
    assert result.returncode == 0, result.stderr
    merged = (tmp_path / ".mcp.json").read_text()
    assert all(line in merged.splitlines() for line in COMMENTED_MCP_JSON.splitlines())  # comments, commas
    servers = jsonc.get(merged, ("mcpServers",))
    assert isinstance(servers, dict) and list(servers) == ["agentty-rag", "github"]
    assert ".mcp.json holds comments or trailing commas (JSON with comments): init kept them" in result.stderr
    _ok(_init(tmp_path, "claude-code", "--uninstall"))
    assert (tmp_path / ".mcp.json").read_text() == COMMENTED_MCP_JSON


def test_a_file_that_is_not_even_json_with_comments_is_never_written(tmp_path: Path) -> None:
    broken = '{\n  // a comment is fine\n  "mcpServers": {"x": {"command": "y"}}\n  "extra": 1\n}\n'
    write(tmp_path, {".mcp.json": broken})
    result = _init(tmp_path, "claude-code")
    assert result.returncode == 1 and "is not valid JSON" in result.stderr and "line 4" in result.stderr
    assert (tmp_path / ".mcp.json").read_text() == broken


def _immutable(path: Path) -> bool:
    """Make ``path`` immutable (``chattr +i``, which stops root too); False where the file system or the
    machine cannot."""
    try:
        return subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode == 0
    except OSError:
        return False


def test_an_immutable_client_file_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    write(tmp_path, {".mcp.json": MCP_JSON})
    path = tmp_path / ".mcp.json"
    if not _immutable(path):
        pytest.skip("chattr +i is not available here")
    try:
        for args in (("claude-code",), ("claude-code", "--uninstall")):
            before = path.read_text()
            result = _init(tmp_path, *args)
            assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
            assert result.stderr.count("\n") == 1, result.stderr
            assert "cannot write .mcp.json (Operation not permitted)" in result.stderr
            assert "chattr -i" in result.stderr and "nothing written" in result.stderr
            assert path.read_text() == before
            subprocess.run(["chattr", "-i", str(path)], check=True)
            _ok(_init(tmp_path, "claude-code"))  # installed: the next round takes it out
            assert _immutable(path)
        subprocess.run(["chattr", "-i", str(path)], check=True)
        path.unlink()
        _ok(_init(tmp_path, "claude-code"))  # the file init made, which --uninstall deletes
        assert _immutable(path)
        removed = _init(tmp_path, "claude-code", "--uninstall")
        assert removed.returncode == 1 and removed.stderr.count("\n") == 1, removed.stderr
        assert "cannot remove .mcp.json (Operation not permitted)" in removed.stderr and path.exists()
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def _with_no_room_to_write() -> None:
    """In the child: every file it writes may hold 0 bytes (writing more fails with EFBIG), which no
    permission, root's included, lifts."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


def test_a_client_file_that_cannot_be_written_says_which_and_what_was_written_before_it(tmp_path: Path) -> None:
    write(tmp_path, {".mcp.json": MCP_JSON})
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")}
    result = subprocess.run(
        [sys.executable, "-m", "agentty_rag", "--root", str(tmp_path), "init", "claude-code", "--hook"],
        capture_output=True,
        text=True,
        env={**environment, **LEXICAL, "PYTHONDONTWRITEBYTECODE": "1"},
        preexec_fn=_with_no_room_to_write,
        timeout=60,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and "cannot write .mcp.json (File too large)" in result.stderr
    assert "nothing written" in result.stderr
    assert (tmp_path / ".mcp.json").read_text() == MCP_JSON and not (tmp_path / ".claude").exists()
    assert [p.name for p in tmp_path.iterdir()] == [".mcp.json"]  # no temporary file left behind


@pytest.mark.parametrize("client", ["claude-code", "cursor", "codex", "opencode"])
def test_uninstall_keeps_an_entry_a_user_edited_and_says_so(tmp_path: Path, client: str) -> None:
    _ok(_init(tmp_path, client, "--instructions"))
    path = tmp_path / ENTRIES[client][0]
    text = path.read_text()
    if client == "codex":
        edited = text.replace('args = ["serve"]', 'args = ["serve"]\nenv = { AGENTTY_DOCS_DIR = "handbook" }')
    else:
        edited = text.replace('"serve"]', '"serve"],\n      "env": {"AGENTTY_DOCS_DIR": "handbook"}')
    assert edited != text
    path.write_text(edited)
    kept = _init(tmp_path, client, "--uninstall")
    assert kept.returncode == 0, kept.stderr
    assert path.read_text() == edited  # the user's env is still there, with the entry it belongs to
    shown = ENTRIES[client][0]
    assert kept.stderr.count(f"kept the agentty-rag entry in {shown}: it holds changes init did not write (env)") == 1
    assert f"`agentty-rag init {client} --uninstall --force` removes it" in kept.stderr
    assert not (tmp_path / instruction_file(client)).exists()  # the rest of what init wrote goes
    _ok(_init(tmp_path, client, "--uninstall", "--force"))
    assert not path.exists()


def test_uninstall_takes_out_an_entry_init_wrote_with_learning_or_with_another_launcher(tmp_path: Path) -> None:
    bare = {"command": "agentty-rag", "args": ["serve"]}
    module = {"command": "/opt/python3", "args": ["-m", "agentty_rag", "serve"], "env": {"AGENTTY_RAG_LEARN": "1"}}
    for entry in (bare, module):
        write(tmp_path, {".mcp.json": json.dumps({"mcpServers": {"agentty-rag": entry}}, indent=2) + "\n"})
        result = _ok_result(_init(tmp_path, "claude-code", "--uninstall"))
        assert "kept" not in result.stderr and not (tmp_path / ".mcp.json").exists()


def _ok_result(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def test_init_offers_the_one_line_way_to_hybrid_until_an_embedding_backend_is_configured(tmp_path: Path) -> None:
    from agentty_rag.cli.init import HYBRID_STEP

    offered = run_main("agentty_rag", tmp_path, ("init", "claude-code"), {}, lexical=False)
    configured = run_main(
        "agentty_rag", tmp_path, ("init", "claude-code", "--force"), {"AGENTTY_EMBED_BACKEND": "local"}, lexical=False
    )
    assert offered.returncode == 0 and HYBRID_STEP in offered.stdout.splitlines()
    assert "pip install 'agentty-rag[local]'" in HYBRID_STEP and "AGENTTY_EMBED_BACKEND=local" in HYBRID_STEP
    assert configured.returncode == 0 and HYBRID_STEP not in configured.stdout
