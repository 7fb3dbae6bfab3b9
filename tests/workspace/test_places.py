"""Where a workspace's things are, and each index defined from the source-kind registry and the settings."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.mcp_resources.model import Snapshot
from agentty_rag.mcp_resources.source import McpSource
from agentty_rag.source_kinds import SOURCES, kinds_of
from agentty_rag.sources.code import CodeSource
from agentty_rag.sources.docs import DocsSource
from agentty_rag.sources.memory import MemorySource
from agentty_rag.sources.skills import SkillsSource
from agentty_rag.workspace.places import PLACES, Places, docs_source, index_config, index_names
from tests.conftest import write


def _places(root: Path, **env: str) -> Places:
    return Places(Path(os.path.realpath(root)), load_settings({"HOME": os.environ["HOME"], **env}))


def test_every_kind_of_the_registry_says_how_it_is_read() -> None:
    assert list(PLACES) == list(SOURCES)
    assert index_names() == ("docs", "code", "mcp")


def test_mcp_resources_are_read_only_when_on_and_their_index_stays_in_memory(tmp_path: Path) -> None:
    off = index_config("mcp", _places(tmp_path))
    on = index_config("mcp", replace(_places(tmp_path, AGENTTY_RAG_MCP="1"), resources=Snapshot))
    assert (off.sources, off.persist) == ((), False)
    assert ([type(s) for s in on.sources], on.persist) == ([McpSource], False)
    assert on.field_names == ("body", "title", "path")
    assert (index_config("docs", _places(tmp_path)).persist, index_config("code", _places(tmp_path)).persist) == (
        True,
        True,
    )


def test_the_qdrant_backend_keeps_only_the_code_index_in_a_collection(tmp_path: Path) -> None:
    local = _places(tmp_path)
    assert [(index_config(n, local).lexical, index_config(n, local).qdrant) for n in ("docs", "code")] == [
        ("sqlite", None),
        ("sqlite", None),
    ]
    places = _places(tmp_path, AGENTTY_RAG_BACKEND="qdrant")
    docs, code = index_config("docs", places), index_config("code", places)
    assert (docs.lexical, docs.qdrant) == ("sqlite", None)
    assert code.lexical == "qdrant" and code.qdrant is not None
    assert (code.qdrant.url, code.qdrant.path) == (None, places.state_dir / "qdrant" / "code")
    shared = index_config(
        "code",
        _places(
            tmp_path,
            AGENTTY_RAG_BACKEND="qdrant",
            AGENTTY_QDRANT_URL="http://qdrant:6333",
            AGENTTY_QDRANT_API_KEY="k",
            AGENTTY_QDRANT_TIMEOUT_MS="2500",
        ),
    )
    # with a server, the code index starts from the shared index and keeps its postings locally
    assert (shared.lexical, shared.qdrant) == ("sqlite", None)
    target = shared.shared
    assert target is not None and (target.url, target.api_key, target.timeout_s) == ("http://qdrant:6333", "k", 2.5)
    assert target.collection == f"agentty_{tmp_path.name}_main"  # no git remote: the folder names the repository
    named = index_config(
        "code",
        _places(
            tmp_path,
            AGENTTY_RAG_BACKEND="qdrant",
            AGENTTY_QDRANT_URL="http://qdrant:6333",
            AGENTTY_QDRANT_BRANCH="release/2.x",
        ),
    ).shared
    assert named is not None and named.collection == f"agentty_{tmp_path.name}_release-2.x"
    chosen = index_config(
        "code",
        _places(tmp_path, AGENTTY_RAG_BACKEND="qdrant", AGENTTY_QDRANT_URL="file:q", AGENTTY_QDRANT_COLLECTION="team"),
    ).shared
    assert chosen is not None and chosen.collection == "team"
    assert (
        index_config("docs", _places(tmp_path, AGENTTY_RAG_BACKEND="qdrant", AGENTTY_QDRANT_URL="file:q")).shared
        is None
    )


def test_each_index_reads_the_kinds_the_registry_puts_in_it(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# A\n"})
    places = _places(tmp_path)
    docs, code = index_config("docs", places), index_config("code", places)
    assert [type(s) for s in docs.sources] == [DocsSource, SkillsSource, MemorySource]
    assert [type(s) for s in code.sources] == [CodeSource]
    assert [spec.name for spec in kinds_of("docs")] == ["docs", "skill", "memory"]
    assert docs.field_names == ("body", "title", "path")
    assert code.field_names == ("body", "symbol", "path", "name")
    assert (docs.scoring.rank_files, code.scoring.rank_files) == (False, True)


def test_the_manifest_records_the_folders_of_the_sources_read(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# A\n"})
    home = Path(os.environ["HOME"])
    places = _places(tmp_path)
    root = places.root
    assert index_config("docs", places).roots == {
        "workspace": str(root),
        "docs": str(root),
        "skills": os.pathsep.join([str(root / ".agentty" / "skills"), str(home / ".agentty" / "skills")]),
        "memory": str(root / ".agentty" / "memory"),
    }
    assert index_config("code", places).roots == {"workspace": str(root)}


def test_a_kind_the_settings_turn_off_is_not_read(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# A\n"})
    places = _places(tmp_path, AGENTTY_RAG_SKILLS="0", AGENTTY_RAG_CODE="0")
    docs = index_config("docs", places)
    assert [type(s) for s in docs.sources] == [DocsSource, MemorySource]
    assert "skills" not in docs.roots
    assert index_config("code", places).sources == ()


def test_the_docs_are_read_from_the_workspace_root_unless_a_folder_is_named(tmp_path: Path) -> None:
    places = _places(tmp_path)
    assert [type(s) for s in index_config("docs", places).sources] == [DocsSource, SkillsSource, MemorySource]
    assert (places.docs_folder(), places.docs_root()) == (None, places.root)
    write(tmp_path, {".agentty/knowledge/a.md": "# A\n", "README.md": "# R\n", "notes/b.md": "# B\n"})
    source = docs_source(places)
    assert [f.key for f in source.scan().files] == ["docs:.agentty/knowledge/a.md", "docs:README.md", "docs:notes/b.md"]
    named = _places(tmp_path, AGENTTY_DOCS_DIR="notes")
    assert named.docs_root() == named.root / "notes"
    assert [f.key for f in docs_source(named).scan().files] == ["docs:notes/b.md"]


def test_how_an_index_is_kept_comes_from_the_settings(tmp_path: Path) -> None:
    defaults = load_settings({})
    config = index_config("code", _places(tmp_path))
    assert (config.rebuild_fraction, config.lock_timeout_s) == (
        defaults.rebuild_fraction,
        defaults.lock_timeout_ms / 1000,
    )
    tuned = index_config(
        "docs", _places(tmp_path, AGENTTY_RAG_REBUILD_FRACTION="0.5", AGENTTY_RAG_LOCK_TIMEOUT_MS="1234")
    )
    assert (tuned.rebuild_fraction, tuned.lock_timeout_s) == (0.5, 1.234)


def test_an_unknown_index_is_an_error_that_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown index 'wiki'; use docs or code"):
        index_config("wiki", _places(tmp_path))
