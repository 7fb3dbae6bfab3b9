"""What git says of the workspace: its repository's name, the commit checked out, for naming and labelling a
shared index. Asked of ``git`` itself (bounded); a workspace without git, or a machine without it, gets the
folder's name and no commit."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

_GIT_TIMEOUT_S = 10.0
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _git(root: Path, *args: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def repository_name(root: Path) -> str:
    """The repository's name: the last part of its ``origin`` remote (``.git`` dropped), else the folder's."""
    remote = _git(root, "config", "--get", "remote.origin.url").rstrip("/")
    name = re.split(r"[/:]", remote)[-1].removesuffix(".git") if remote else ""
    return name or root.name


def current_commit(root: Path) -> str:
    """The commit checked out ("" without git)."""
    return _git(root, "rev-parse", "HEAD")


def collection_name(repository: str, branch: str) -> str:
    """A Qdrant collection name for a repository's branch: ``agentty_<repository>_<branch>``, characters a
    name cannot hold replaced by ``-``."""
    return "agentty_" + "_".join(_UNSAFE.sub("-", part).strip("-") or "-" for part in (repository, branch))


__all__ = ["collection_name", "current_commit", "repository_name"]
