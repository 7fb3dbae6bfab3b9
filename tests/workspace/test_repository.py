"""What git says of a workspace names its shared index: the origin remote's last part, the commit checked out;
without git, the folder's name and no commit. Collection names hold only characters Qdrant accepts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agentty_rag.workspace.repository import collection_name, current_commit, repository_name


def test_collection_names_keep_safe_characters() -> None:
    assert collection_name("shop", "main") == "agentty_shop_main"
    assert collection_name("my shop", "feature/Ünïcode x") == "agentty_my-shop_feature-n-code-x"
    assert collection_name("", "/") == "agentty_-_-"


def test_a_folder_without_git_is_named_by_itself(tmp_path: Path) -> None:
    root = tmp_path / "plain-folder"
    root.mkdir()
    assert repository_name(root) == "plain-folder"
    assert current_commit(root) == ""


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize(
    "remote", ["git@github.com:acme/Billing.git", "https://github.com/acme/Billing", "/srv/git/Billing.git/"]
)
def test_the_origin_remote_names_the_repository(tmp_path: Path, remote: str) -> None:
    root = tmp_path / "checkout"
    root.mkdir()

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("remote", "add", "origin", remote)
    (root / "a.py").write_text("x = 1\n", "utf-8")
    git("add", "a.py")
    git("-c", "user.email=ci@example.invalid", "-c", "user.name=ci", "commit", "-q", "-m", "one")
    assert repository_name(root) == "Billing"
    assert current_commit(root) == git("rev-parse", "HEAD").strip()
