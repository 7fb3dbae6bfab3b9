"""``.agentty/`` in a git repository: its machine state never shows in ``git status``; what a team writes there
(knowledge, skills, memory, ignore rules) does, and is still searched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from agentty_rag.state.folder import RULES
from tests.conftest import run_main, write


def _git(root: Path, *args: str) -> str:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    environment |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=environment, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _repository(root: Path, files: dict[str, str]) -> None:
    write(root, files)
    _git(root, "init", "-q")


def _untracked(root: Path) -> list[str]:
    return sorted(line[3:] for line in _git(root, "status", "--porcelain", "--untracked-files=all").splitlines())


def test_after_a_search_git_status_shows_nothing_generated_under_agentty(tmp_path: Path) -> None:
    _repository(
        tmp_path,
        {
            "src/deploy.py": "def roll_back(release):\n    return release.previous\n",
            ".agentty/knowledge/runbook.md": "# Runbook\n\nRoll back with the release train's previous tag.\n",
            ".agentty/skills/release/SKILL.md": "---\nname: release\ndescription: Cut a release.\n---\n# Release\n",
            ".agentty/memory/port.md": "Staging serves HTTPS on port 8443.\n",
            ".agentty/ignore": "generated/\n",
        },
    )
    for command in (("search-docs", "roll back a release"), ("search-code", "roll back"), ("proactive", "on")):
        result = run_main("agentty_rag", tmp_path, command, {})
        assert result.returncode == 0, result.stderr
    assert (
        "docs:.agentty/knowledge/runbook.md"
        in run_main("agentty_rag", tmp_path, ("search-docs", "runbook roll back"), {}).stdout
    )
    generated = [p.name for p in (tmp_path / ".agentty").iterdir() if p.name.startswith("rag_")]
    assert any(name.endswith(".ragdb") for name in generated) and (tmp_path / ".agentty" / "settings.json").exists()
    assert _untracked(tmp_path) == [
        ".agentty/ignore",
        ".agentty/knowledge/runbook.md",
        ".agentty/memory/port.md",
        ".agentty/skills/release/SKILL.md",
        "src/deploy.py",
    ]
    assert (tmp_path / ".agentty" / ".gitignore").read_text() == RULES


def test_a_new_agentty_folder_holds_only_ignored_files(tmp_path: Path) -> None:
    _repository(tmp_path, {"docs/a.md": "# A\n\nThe release train leaves on Tuesdays.\n"})
    assert run_main("agentty_rag", tmp_path, ("index",), {}).returncode == 0
    assert (tmp_path / ".agentty").is_dir()
    assert _untracked(tmp_path) == ["docs/a.md"]


def test_a_users_own_gitignore_in_agentty_is_left_as_it_is(tmp_path: Path) -> None:
    own = "# ours\n*\n"
    _repository(tmp_path, {"docs/a.md": "# A\n\nText.\n", ".agentty/.gitignore": own})
    assert run_main("agentty_rag", tmp_path, ("search-docs", "text"), {}).returncode == 0
    assert (tmp_path / ".agentty" / ".gitignore").read_text() == own
    status = run_main("agentty_rag", tmp_path, ("status",), {}).stdout
    assert ".agentty/.gitignore is not the one agentty-rag writes" in status


def test_status_says_which_files_are_machine_state_and_which_to_commit(tmp_path: Path) -> None:
    _repository(tmp_path, {"docs/a.md": "# A\n\nText.\n", ".agentty/memory/port.md": "Port 8443.\n"})
    before = run_main("agentty_rag", tmp_path, ("status",), {}).stdout
    assert ".agentty/: no .gitignore yet" in before and not (tmp_path / ".agentty" / ".gitignore").exists()
    run_main("agentty_rag", tmp_path, ("search-docs", "port"), {})
    after = run_main("agentty_rag", tmp_path, ("status",), {}).stdout
    assert ".agentty/: indexes, locks and settings are machine state, kept out of git by .agentty/.gitignore" in after
    assert "yours to commit: ignore, knowledge/, skills/, memory/ (here: memory/)" in after
