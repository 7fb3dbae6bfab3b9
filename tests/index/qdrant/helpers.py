"""The committed code fixtures on either backend, and the patch the Qdrant tests apply to them."""

from __future__ import annotations

import shutil
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, OPEN_WORKSPACES


def copied(root: Path) -> Path:
    """The code fixtures, copied to ``root`` (no index state)."""
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    return root


def built(root: Path, backend: str) -> CorpusIndex:
    """The code index of ``root`` on ``backend`` (``local`` or ``qdrant``), lexical only, brought up to date."""
    workspace = Workspace(root, load_settings({**LEXICAL, "AGENTTY_RAG_BACKEND": backend, "HOME": str(root.parent)}))
    OPEN_WORKSPACES.append(workspace)
    index = workspace.index("code")
    index.refresh()
    return index


def edited(root: Path) -> None:
    """Change one file, delete one, add one: a patch, not a rebuild."""
    tokens = root / "server" / "auth" / "tokens.py"
    tokens.write_text(tokens.read_text("utf-8") + "\n\ndef rotate_signing_key(key):\n    return key[::-1]\n", "utf-8")
    next(p for p in sorted(root.rglob("*.go"))).unlink()
    (root / "server" / "extra.py").write_text("def refresh_cache(token):\n    '''Expired tokens.'''\n", "utf-8")


__all__ = ["built", "copied", "edited"]
