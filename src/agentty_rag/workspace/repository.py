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


def current_branch(root: Path) -> str:
    """The branch checked out ("" on a detached head, or without git)."""
    return _git(root, "branch", "--show-current")


def uncommitted(root: Path) -> list[str]:
    """The files git reports as changed or untracked (not ignored) under ``root``."""
    listed = _git(root, "status", "--porcelain", "--untracked-files=normal", "--", ".")
    return [line[3:] for line in listed.splitlines() if line.strip()]


def publish_problem(root: Path, branch: str, collection_named: bool) -> str:
    """Why publishing ``root`` to the collection of ``branch`` would share what is not that branch ("" when
    nothing stops it): a checkout of another branch (unless the collection is named outright), or changes git
    does not hold."""
    checked_out = current_branch(root)
    if checked_out and checked_out != branch and not collection_named:
        return (
            f"the checkout is on branch {checked_out}, not {branch}: set AGENTTY_QDRANT_BRANCH={checked_out} to "
            f"publish its own collection, or publish from {branch}"
        )
    changed = uncommitted(root)
    if changed:
        shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        return (
            f"the working tree has changes git does not hold ({shown}): publishing would share them with every "
            "machine; commit or stash them first"
        )
    return ""


def collection_name(repository: str, branch: str) -> str:
    """A Qdrant collection name for a repository's branch: ``agentty_<repository>_<branch>``, characters a
    name cannot hold replaced by ``-``."""
    return "agentty_" + "_".join(_UNSAFE.sub("-", part).strip("-") or "-" for part in (repository, branch))


__all__ = [
    "collection_name",
    "current_branch",
    "current_commit",
    "publish_problem",
    "repository_name",
    "uncommitted",
]
