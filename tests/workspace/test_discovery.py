"""Which folder is the workspace: found from a subfolder, from MCP roots, and never /, the home folder or a
system folder — for the command line, the server and the hook alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentty_rag.workspace.discovery import from_roots, locate, path_of_uri, refusal
from tests.conftest import LEXICAL, write


def _home() -> Path:
    return Path(os.environ["HOME"])


def _agentty(cwd: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """``agentty-rag ARGS`` started in ``cwd`` with no --root, as an agent or a user starts it."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")} | LEXICAL
    return subprocess.run(
        [sys.executable, "-m", "agentty_rag", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def test_the_walk_up_finds_the_nearest_project_marker(repo: Path) -> None:
    found = locate(repo / "src" / "app", _home())
    assert (found.root, found.how, found.found_elsewhere) == (repo, "found .git", True)
    (repo / "src" / ".agentty").mkdir()
    assert locate(repo / "src" / "app", _home()).root == repo / "src"  # the nearer marker wins, as in git
    assert locate(repo, _home()).found_elsewhere is False


def test_a_git_worktree_file_counts_as_a_marker(tmp_path: Path) -> None:
    write(tmp_path / "wt", {".git": "gitdir: /elsewhere/.git/worktrees/wt\n", "pkg/a.py": "x = 1\n"})
    assert locate(tmp_path / "wt" / "pkg", _home()).root == tmp_path / "wt"


def test_without_a_marker_the_start_folder_is_the_workspace(tmp_path: Path) -> None:
    found = locate(tmp_path, _home())
    assert (found.root, found.how, found.marked) == (tmp_path, "start folder", False)


def test_the_file_system_root_home_and_system_folders_are_refused() -> None:
    home = _home()
    assert "root of the file system" in refusal(Path("/"), home)
    assert "home folder" in refusal(home, home)
    for folder in ("/etc", "/etc/ssh", "/usr", "/usr/lib", "/proc", "/tmp", "/var/log"):
        assert "system folder" in refusal(Path(folder), home), folder
    assert refusal(home / "projects" / "app", home) == ""
    assert refusal(Path("/srv/app"), home) == ""
    found = locate(Path("/etc"), home)
    assert found.root is None and "--root" in found.problem
    assert locate(Path("/"), home, explicit=Path("/")).root is None


def test_a_marker_in_the_home_folder_is_not_a_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".agentty" / "skills").mkdir(parents=True)  # user-level skills live there
    (home / "notes").mkdir()
    found = locate(home / "notes", home)
    assert (found.root, found.how) == (home / "notes", "start folder")
    assert locate(home, home).root is None


def test_mcp_roots_pick_the_first_folder_that_may_be_a_workspace(repo: Path, tmp_path: Path) -> None:
    uris = ["https://example.invalid/x", "file:///", (tmp_path / "missing").as_uri(), repo.as_uri()]
    chosen = from_roots(uris, tmp_path, _home())
    assert chosen is not None and (chosen.root, chosen.how) == (repo, "MCP roots")
    assert from_roots(["file:///", _home().as_uri()], tmp_path, _home()) is None
    assert path_of_uri("file:///tmp/a%20b") == Path("/tmp/a b")
    assert path_of_uri("file://otherhost/tmp") is None


def test_the_command_line_started_in_a_subfolder_searches_the_repository(repo: Path) -> None:
    found = _agentty(repo / "src" / "app", "search-docs", "when", "does", "the", "release", "train", "leave")
    assert found.returncode == 0, found.stderr
    assert "docs:docs/deploy.md:1-3" in found.stdout
    as_json = _agentty(repo / "src" / "app", "search-docs", "--json", "when", "does", "the", "release", "train")
    assert json.loads(as_json.stdout)["workspace"] == str(repo)
    assert (repo / ".agentty").is_dir() and not (repo / "src" / "app" / ".agentty").exists()
    status = _agentty(repo / "src", "status")
    assert f"workspace: {repo} (found .agentty above {repo / 'src'})" in status.stdout
    at_root = _agentty(repo, "search-docs", "--json", "release", "train")
    assert json.loads(at_root.stdout)["workspace"] == ""  # named only when it is not the start folder


@pytest.mark.parametrize("where", ["/", "home"])
def test_the_command_line_refuses_the_root_and_home_folders(where: str) -> None:
    cwd = _home() if where == "home" else Path("/")
    result = _agentty(cwd, "search-docs", "anything")
    assert result.returncode == 2
    assert "--root" in result.stderr and result.stderr.count("\n") == 1
    assert not (cwd / ".agentty").exists()


def test_the_hook_never_creates_agentty_outside_a_project(tmp_path: Path, repo: Path) -> None:
    plain = tmp_path / "scratch"
    plain.mkdir()
    event = {"session_id": "s", "prompt": "when does the release train leave?", "hook_event_name": "UserPromptSubmit"}
    for cwd, why in (("/etc", "system folder"), (str(_home()), "home folder"), (str(plain), "no project")):
        result = _agentty(tmp_path, "inject", stdin=json.dumps({**event, "cwd": cwd}))
        assert (result.returncode, result.stdout) == (0, ""), result.stderr
        assert why in result.stderr and "nothing injected" in result.stderr
    assert not (plain / ".agentty").exists() and not (_home() / ".agentty").exists()
    assert not Path("/etc/.agentty").exists()
    inside = _agentty(tmp_path, "inject", stdin=json.dumps({**event, "cwd": str(repo / "src")}))
    assert inside.returncode == 0 and "no project" not in inside.stderr
