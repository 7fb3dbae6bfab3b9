"""A new source kind is its ``Source`` plus an entry in the registry and one in ``places.PLACES``: nothing else
changes. A throwaway ``wiki`` kind, read from ``./wiki`` into the docs index, shows in ``status`` (text and
JSON), is searched by ``search_docs`` and explains an empty index, without any other module naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.render import render_status, status_json
from agentty_rag.source_kinds import SOURCES, SourceSpec, Wording, kinds_of
from agentty_rag.sources.base import LoadResult
from agentty_rag.sources.text import decode
from agentty_rag.sources.walker import ListingCache, ScanResult, SkipReport, WalkRules, scan_tree
from agentty_rag.status.report import gather
from agentty_rag.status.types import OneFolder, SourceFolders
from agentty_rag.types import Document, FileStamp
from agentty_rag.workspace import places
from agentty_rag.workspace.discovery import Located
from agentty_rag.workspace.places import KindPlaces, Opened, Places, nothing_indexed
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write


class WikiSource:
    """The new module: every ``.md`` page of ``./wiki``."""

    name = "wiki"

    def __init__(self, root: Path, workspace: Path, max_bytes: int) -> None:
        self.root, self.workspace, self.max_bytes = root, workspace, max_bytes
        self._listings = ListingCache()

    def scan(self) -> ScanResult:
        if not self.root.is_dir():
            return ScanResult([], SkipReport())
        rules = WalkRules(accept=lambda n: n.endswith(".md"), key_prefix="wiki:", max_bytes=self.max_bytes)
        return scan_tree(self.root, self.workspace, rules, self._listings)

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        text = decode(data).text or ""
        # a kind added for good is a member of ``SourceKind`` too, beside its registry entry
        return LoadResult((Document("wiki", stamp.key.removeprefix("wiki:"), text, language="markdown"),))  # type: ignore[arg-type]

    def describe(self) -> str:
        return f"wiki {self.root}"


def _open(where: Places) -> Opened:
    folder = where.root / "wiki"
    return Opened(WikiSource(folder, where.boundary(folder), where.settings.docs_max_bytes), {"wiki": str(folder)})


def _status(where: Places) -> SourceFolders:
    return OneFolder(True, where.status_folder(where.root / "wiki"))


@pytest.fixture
def wiki(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two registry lines: the kind's entry, and how it is read and shown in a workspace."""
    spec = SourceSpec("wiki", "docs", status_key="wiki", shown="wiki", words=Wording(missing="pages go there"))  # type: ignore[arg-type]
    monkeypatch.setitem(SOURCES, "wiki", spec)
    monkeypatch.setitem(places.PLACES, "wiki", KindPlaces(_open, _status))


@pytest.mark.usefixtures("wiki")
def test_a_new_kind_shows_in_status_and_is_searched(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# A\n\nText.\n", "wiki/runbook.md": "# Runbook\n\nRestart the quokka daemon.\n"})
    workspace = Workspace(tmp_path, load_settings({**LEXICAL, "HOME": str(tmp_path / "home")}))
    assert [spec.name for spec in kinds_of("docs")] == ["docs", "skill", "memory", "wiki"]
    found = workspace.search_docs("quokka daemon")
    assert "wiki:runbook.md:1-3" in found.text
    report = gather(workspace, Located(tmp_path, tmp_path, "--root"))
    assert "  wiki: ./wiki — 1 file" in render_status(report).splitlines()
    data = json.loads(json.dumps(status_json(report)))
    assert list(data["sources"]) == ["docs", "skills", "memory", "code", "wiki"]
    assert data["sources"]["wiki"] == {
        "enabled": True,
        "folder": {"path": str(tmp_path / "wiki"), "shown": "./wiki", "exists": True},
    }


@pytest.mark.usefixtures("wiki")
def test_a_new_kind_says_in_its_words_that_its_folder_is_missing(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, load_settings({**LEXICAL, "HOME": str(tmp_path / "home")}))
    report = gather(workspace, Located(tmp_path, tmp_path, "--root"))
    assert "  wiki: ./wiki does not exist (pages go there)" in render_status(report).splitlines()
    assert nothing_indexed("docs", workspace.places).startswith("no docs indexed")
