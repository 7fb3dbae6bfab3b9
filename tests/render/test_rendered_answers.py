"""Rendered answers on the committed fixtures (BM25), checked whole against tests/snapshots/: a change of
wording, layout, order or excerpt shows as a diff (the fence key, drawn anew in each process, is stored as
``KEY``). After a deliberate change: ``pytest --update-snapshots``,
then review the snapshot files' diff."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator

import pytest

from agentty_rag.config import load_settings
from agentty_rag.render import render_explanation
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, fixture_env, unkeyed

Snapshot = Callable[[str, str], str]


@pytest.fixture(scope="module")
def docs_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = tmp_path_factory.mktemp("docs")
    workspace = Workspace(root, load_settings(fixture_env(root)))
    yield workspace
    workspace.close()


@pytest.fixture(scope="module")
def code_ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    root = tmp_path_factory.mktemp("code") / "repo"
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    workspace = Workspace(root, load_settings(LEXICAL))
    yield workspace
    workspace.close()


def test_search_docs_answers_a_question_with_cited_passages(docs_ws: Workspace, snapshot: Snapshot) -> None:
    text = unkeyed(
        docs_ws.search_docs("how can I make the server pick up config edits without restarting it?", k=3).text
    )
    assert text == snapshot("search_docs_config_reload.txt", text)


def test_search_docs_in_memory_and_skills(docs_ws: Workspace, snapshot: Snapshot) -> None:
    memory = unkeyed(docs_ws.search_docs("staging port", k=2, sources=["memory"]).text)
    assert memory == snapshot("search_docs_memory.txt", memory)
    skills = unkeyed(docs_ws.search_docs("release checklist tag changelog", k=2, sources=["skills"]).text)
    assert skills == snapshot("search_docs_skills.txt", skills)


def test_search_docs_structured_answer(docs_ws: Workspace, snapshot: Snapshot) -> None:
    outcome = docs_ws.search_docs("which bucket permissions does the artifact store need", k=2)
    structured = json.dumps(outcome.structured, indent=2, ensure_ascii=False) + "\n"
    assert structured == snapshot("search_docs_artifacts.json", structured)


def test_search_code_answers_with_excerpts_of_definitions(code_ws: Workspace, snapshot: Snapshot) -> None:
    keys = unkeyed(code_ws.search_code("rotate the signing keys before they expire", k=3).text)
    assert keys == snapshot("search_code_signing_keys.txt", keys)
    backoff = unkeyed(code_ws.search_code("retry with exponential backoff", k=3, language="go").text)
    assert backoff == snapshot("search_code_backoff_go.txt", backoff)


def test_search_code_explained(code_ws: Workspace, snapshot: Snapshot) -> None:
    outcome = code_ws.search_code("refresh an expired access token", k=3)
    explained = render_explanation(outcome.explanations, found_by=outcome.found_by, legs=outcome.legs)
    shown = unkeyed(outcome.text) + "\n\n" + explained + "\n"
    assert shown == snapshot("search_code_refresh_token_explained.txt", shown)
