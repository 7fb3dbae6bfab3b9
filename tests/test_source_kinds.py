"""The source-kind registry: every layer reads a kind's facts from it, none names a kind."""

from __future__ import annotations

from typing import get_args

import pytest

from agentty_rag.config import VARIABLES
from agentty_rag.retrieve.pipeline import Filters
from agentty_rag.server import SearchDocsArgs, input_schema
from agentty_rag.source_kinds import (
    SOURCES,
    SourceKind,
    choice_names,
    chosen_kind,
    kinds_of,
    kinds_searched_by,
    learnable,
    source_spec,
    state_folders,
)
from agentty_rag.sources.watcher import relevant
from agentty_rag.state.feedback import LEARNABLE
from agentty_rag.state.folder import COMMITTED
from agentty_rag.types import Chunk
from agentty_rag.workspace.request import doc_sources


def test_the_registry_holds_exactly_the_kinds_chunks_may_carry() -> None:
    assert tuple(SOURCES) == get_args(SourceKind) == ("docs", "skill", "memory", "code", "mcp")
    assert all(name == spec.name for name, spec in SOURCES.items())


def test_an_unknown_kind_is_an_error_that_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="known: docs, skill, memory, code, mcp"):
        source_spec("wiki")


def test_each_index_holds_its_kinds() -> None:
    assert [spec.name for spec in kinds_of("docs")] == ["docs", "skill", "memory"]
    assert [spec.name for spec in kinds_of("code")] == ["code"]
    assert [spec.name for spec in kinds_of("mcp")] == ["mcp"]


def test_mcp_resources_live_in_memory_and_are_searched_by_search_docs() -> None:
    mcp = source_spec("mcp")
    assert (mcp.index, mcp.searched_by, mcp.kept, mcp.located) == ("mcp", "docs", False, False)
    assert [spec.name for spec in kinds_searched_by("docs")] == ["docs", "skill", "memory", "mcp"]
    assert all(spec.kept for spec in SOURCES.values() if spec.name != "mcp")


def test_provenance_names_lines_for_a_path_and_the_name_alone_otherwise() -> None:
    assert Chunk("docs", "guide/auth.md", 20, 44, "x").provenance == "docs:guide/auth.md:20-44"
    assert Chunk("skill", "release-checklist", 1, 9, "x").provenance == "skill:release-checklist"
    assert Chunk("memory", "MEM-PORTS", 3, 3, "x").provenance == "memory:MEM-PORTS"
    assert Chunk("code", "src/x.py", 80, 126, "x").provenance == "code:src/x.py:80-126"
    assert Chunk("mcp", "wiki://Team/Runbook", 1, 9, "x").provenance == "mcp:wiki://Team/Runbook"


def test_an_mcp_passage_names_its_server_and_no_other_kind_has_one() -> None:
    assert Chunk("mcp", "wiki://Team/Runbook", 1, 9, "x", title="wiki\tRunbook steps").origin == "wiki"
    assert Chunk("skill", "deploy", 1, 2, "x", title="wiki\tdescription").origin == ""


def test_a_passage_is_named_after_what_its_kind_says() -> None:
    assert Chunk("code", "a.py", 1, 2, "x", symbol="Store.refresh").own_name == "refresh"
    assert Chunk("docs", "a.md", 1, 2, "x", context="Guide > Auth > Tokens").own_name == "Tokens"
    assert Chunk("skill", "deploy", 1, 2, "x", context="Deploy").own_name == "deploy"
    assert Chunk("memory", "MEM-1", 1, 1, "x").own_name == "MEM-1"


def test_only_kinds_with_a_path_can_be_scoped() -> None:
    scoped = Filters(scope="guide")
    assert scoped.admits("docs", "guide/auth.md", "markdown")
    assert scoped.admits("code", "guide/x.py", "python")
    assert not scoped.admits("skill", "guide", "markdown")
    assert not scoped.admits("memory", "guide", "text")
    assert not scoped.admits("mcp", "guide/auth.md", "markdown")


def test_the_sources_argument_offers_and_accepts_what_the_registry_names() -> None:
    assert choice_names("docs") == ("docs", "skills", "memory", "mcp")
    assert choice_names("code") == ()
    assert [chosen_kind("docs", n).name for n in ("DOC", " skills ", "memories")] == ["docs", "skill", "memory"]  # type: ignore[union-attr]
    assert chosen_kind("docs", "code") is None
    assert chosen_kind("docs", "Resources").name == "mcp"  # type: ignore[union-attr]
    schema = input_schema(SearchDocsArgs)["properties"]["sources"]
    array = next(option for option in schema["anyOf"] if option.get("type") == "array")
    assert array["items"]["enum"] == ["docs", "skills", "memory", "mcp"]
    assert doc_sources(["skills", "doc", "skill"]) == ("skill", "docs")


def test_status_names_and_folder_settings_come_from_the_registry() -> None:
    assert [spec.shown_name for spec in SOURCES.values()] == [
        "docs",
        "skills",
        "memory",
        "code",
        "MCP resources",
    ]
    variables = {variable.attr: variable.name for variable in VARIABLES}
    assert [variables[spec.folder_setting] for spec in kinds_of("docs")] == [
        "AGENTTY_DOCS_DIR",
        "AGENTTY_SKILLS_DIRS",
        "AGENTTY_MEMORY_DIR",
    ]
    # rag-bench's corpus copy: docs at their workspace paths in its root, skills and memory beside them
    assert [spec.copy_folder for spec in kinds_of("docs")] == ["", ".skills", ".memory"]
    assert (source_spec("code").folder_setting, source_spec("code").copy_folder) == ("", "")


def test_feedback_the_state_folder_and_the_watcher_take_the_kinds_from_the_registry() -> None:
    assert LEARNABLE == learnable() == ("docs", "code")
    assert state_folders() == ("knowledge", "skills", "memory")
    assert COMMITTED == ("ignore", "knowledge/", "skills/", "memory/")
    assert all(relevant("/w", f"/w/.agentty/{folder}/a.md") for folder in state_folders())
    assert not relevant("/w", "/w/.agentty/rag_docs.ragdb")


def test_an_index_says_why_it_is_empty_in_its_first_kinds_words() -> None:
    assert [kinds_of(index)[0].words.empty != "" for index in ("docs", "code", "mcp")] == [True, True, True]
    assert [spec.status_key for spec in SOURCES.values()] == ["docs", "skills", "memory", "code", ""]
