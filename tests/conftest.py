"""Shared test set-up: a clean environment for every test, and paths to the committed fixtures."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No AGENTTY_* variable leaks in from the developer's shell, and ~ is an empty folder."""
    for name in list(os.environ):
        if name.startswith("AGENTTY_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    yield


def fixture_env() -> dict[str, str]:
    """Settings that point the docs index at the committed fixtures."""
    return {
        "AGENTTY_DOCS_DIR": str(FIXTURES / "docs"),
        "AGENTTY_SKILLS_DIRS": str(FIXTURES / "skills"),
        "AGENTTY_MEMORY_DIR": str(FIXTURES / "memory"),
    }


def write(root: Path, files: Mapping[str, str | bytes] | Mapping[str, str]) -> None:
    """Create files (and their folders) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
