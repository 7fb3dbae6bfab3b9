"""A search request, checked before anything is read: each problem is one ``BadRequest`` saying what to give."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.errors import BadRequest
from agentty_rag.retrieve.pipeline import Filters
from agentty_rag.workspace.places import Places
from agentty_rag.workspace.request import (
    MAX_QUERY_CHARS,
    code_request,
    code_scope,
    doc_sources,
    docs_indexes,
    docs_request,
    languages,
    query_text,
    whole_k,
)
from tests.conftest import write


def _places(root: Path, **env: str) -> Places:
    return Places(Path(os.path.realpath(root)), load_settings(env))


def test_a_query_is_put_on_one_line_and_a_huge_one_is_cut_with_a_note() -> None:
    assert query_text("  where are\n tokens   refreshed? ") == ("where are tokens refreshed?", ())
    text, notes = query_text("word " * 2000)
    assert len(text) == MAX_QUERY_CHARS and notes == (f"query cut to its first {MAX_QUERY_CHARS} characters",)


@pytest.mark.parametrize("k", [0, 51, True, 2.0, "5"])
def test_k_is_a_whole_number_from_1_to_50(k: object) -> None:
    with pytest.raises(BadRequest, match=re.escape(f"k must be a whole number from 1 to 50 (got {k!r})")):
        whole_k(k)  # type: ignore[arg-type]


def test_the_arguments_are_checked_in_the_order_they_are_read(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# A\n"})
    places = _places(tmp_path)
    problems = []
    for query, scope, sources in (("", "../..", ["wiki"]), ("x", "../..", ["wiki"]), ("x", None, ["wiki"])):
        with pytest.raises(BadRequest) as error:
            docs_request(places, query, 0, scope, sources)
        problems.append(str(error.value).split(" ")[0])
    with pytest.raises(BadRequest) as error:
        docs_request(places, "x", 0)
    assert [*problems, str(error.value).split(" ")[0]] == ["query", "scope", "unknown", "k"]


def test_a_docs_scope_is_read_from_the_docs_folder_or_the_workspace(tmp_path: Path) -> None:
    write(tmp_path, {"docs/guide/auth.md": "# Auth\n"})
    write(tmp_path, {"guide/README.md": "# Guide\n"})
    places = _places(tmp_path)
    scoped = [docs_request(places, "x", 3, scope).filters.scope for scope in ("guide", "docs/guide", ".", "")]
    assert scoped == ["guide", "docs/guide", None, None]  # every document: paths from the workspace root
    named = _places(tmp_path, AGENTTY_DOCS_DIR="docs")
    scoped = [docs_request(named, "x", 3, scope).filters.scope for scope in ("docs/guide", "guide/auth.md")]
    assert scoped == ["docs/guide", "docs/guide/auth.md"]  # read from the docs folder when not from the root
    with pytest.raises(BadRequest, match="is not inside the docs folder"):
        docs_request(named, "x", 3, "guide/README.md")
    # a path the root holds too, but outside the docs folder, is read from the docs folder
    write(tmp_path, {"auth.md": "# Root\n", "docs/auth.md": "# Docs\n"})
    assert docs_request(named, "x", 3, "auth.md").filters.scope == "docs/auth.md"
    with pytest.raises(BadRequest, match="does not exist under the workspace root"):
        docs_request(places, "x", 3, "nowhere")


def test_a_code_scope_is_a_path_under_the_workspace_root(tmp_path: Path) -> None:
    write(tmp_path, {"src/app/main.py": "x = 1\n"})
    root = Path(os.path.realpath(tmp_path))
    assert [code_scope(s, root) for s in ("src/app", str(root / "src"), ".", None)] == ["src/app", "src", None, None]
    request = code_request(_places(tmp_path), "main", 5, "src", "py")
    assert (request.k, request.filters.scope, request.filters.languages) == (5, "src", ("python",))


def test_sources_are_named_by_any_of_their_choices_once_each() -> None:
    assert doc_sources(["Memory", "skill", "skills"]) == ("memory", "skill")
    assert doc_sources("docs") == ("docs",)
    assert doc_sources(None) is None
    with pytest.raises(BadRequest, match="sources is empty; leave it out to search docs, skills, memory and mcp"):
        doc_sources([])


def test_a_docs_search_reads_the_mcp_resources_when_on_or_asked_for_and_not_scoped() -> None:
    assert docs_indexes(Filters(), mcp_enabled=False) == ("docs",)
    assert docs_indexes(Filters(), mcp_enabled=True) == ("docs", "mcp")
    assert docs_indexes(Filters(sources=("mcp",)), mcp_enabled=False) == ("mcp",)  # says how to turn them on
    assert docs_indexes(Filters(sources=("docs", "mcp")), mcp_enabled=True) == ("docs", "mcp")
    assert docs_indexes(Filters(sources=("skill",)), mcp_enabled=True) == ("docs",)
    assert docs_indexes(Filters(scope="guide"), mcp_enabled=True) == ("docs",)


def test_a_language_is_named_or_left_out() -> None:
    assert languages(" ") is None and languages(None) is None
    assert languages("c++") == ("cpp",)
    with pytest.raises(BadRequest, match="unknown language 'klingon'; known: bash, c,"):
        languages("klingon")
