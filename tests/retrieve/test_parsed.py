"""The query read once: what ``parse_query`` reads of it, that its terms are the tokenizer's, and that one
search through the workspace tokenizes the query's text exactly once."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.config import load_settings
from agentty_rag.index.lexical.tokenize import Tokenizer
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.query import LONG_QUERY_TERMS, OPENING_WORDS, opening_words
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL

TOKENIZER = Tokenizer()
ISSUE = (
    "Refreshing a revoked token fails with a KeyError instead of a 401. Traceback (most recent call last): "
    'File "server/auth/tokens.py", line 130, in TokenStore.refresh: the family was revoked by revoke_subject; '
    "steps: sign in on two devices, sign out everywhere, refresh the old token; expected a clean rejection, got "
    "a stack trace in the worker logs and the scheduler retries the job forever with exponential backoff."
)


def test_the_terms_are_the_tokenizers_and_the_opening_is_the_first_words() -> None:
    query = parse_query(ISSUE, TOKENIZER)
    assert list(query.terms) == TOKENIZER.tokenize(ISSUE)
    assert list(query.opening) == TOKENIZER.tokenize(opening_words(ISSUE))
    assert query.term_set == frozenset(query.terms) and query.distinct == tuple(dict.fromkeys(query.terms))
    assert len(query.term_set) > LONG_QUERY_TERMS and query.long
    assert not parse_query("where do we refresh an expired auth token?", TOKENIZER).long


def test_what_a_query_says_is_read_with_its_terms() -> None:
    bare = parse_query("Rails::Engine", TOKENIZER)
    assert (bare.names, bare.bare_name, bare.lean) == (("Engine", "Rails::Engine"), True, 1.0)
    question = parse_query('how do the tests call `get_model` when "the pool is closed"?', TOKENIZER)
    assert question.names == ("get_model",) and not question.bare_name
    assert question.identifiers == ("get_model",) and question.phrases == ("the pool is closed",)
    assert question.wants_tests and not question.wants_examples
    assert question.words == ("tests", "call", "pool", "closed")  # the name's own words left out
    assert "tests_call" in question.compounds and "poolclosed" not in question.compounds  # "is" breaks a run


def test_only_the_opening_words_say_a_query_wants_tests() -> None:
    later = " ".join(["word"] * OPENING_WORDS) + " and the tests"
    assert not parse_query(later, TOKENIZER).wants_tests
    assert parse_query("tests " + later, TOKENIZER).wants_tests


@given(st.text(alphabet=st.sampled_from("ab_C.-/: \n\t\u00a0\u2003é9"), max_size=80))
def test_reading_word_by_word_gives_the_same_terms(text: str) -> None:
    by_word = TOKENIZER.tokenize_words(text)
    assert [term for word in by_word for term in word] == TOKENIZER.tokenize(text)
    assert [term for word in by_word[:OPENING_WORDS] for term in word] == TOKENIZER.tokenize(opening_words(text))


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the tokenizer is asked to read (whole texts: both ways in)."""
    seen: list[str] = []
    for name in ("tokenize", "tokenize_words"):
        original: Callable[..., Any] = getattr(Tokenizer, name)

        def counting(self: Tokenizer, text: str, *args: Any, _original: Callable[..., Any] = original) -> Any:
            seen.append(text)
            return _original(self, text, *args)

        monkeypatch.setattr(Tokenizer, name, counting)
    return seen


@pytest.mark.parametrize(
    "query",
    ["where do we refresh an expired auth token?", "TokenStore.refresh", ISSUE],
    ids=["question", "name", "issue"],
)
def test_one_search_tokenizes_the_query_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, query: str) -> None:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "code", root)
    stages = dict.fromkeys(("AGENTTY_RAG_PRF", "AGENTTY_RAG_GRAPH", "AGENTTY_RAG_MMR", "AGENTTY_RAG_CORRECT"), "1")
    # The dense leg too (a deterministic in-process embedder, every chunk embedded, no leg check to keep it out).
    dense = {"AGENTTY_RAG_DENSE": "1", "AGENTTY_EMBED_BACKEND": "fake", "AGENTTY_RAG_LEG_CHECK": "0"}
    workspace = Workspace(root, load_settings({**LEXICAL, **stages, **dense, "AGENTTY_RAG_LEARN": "1"}))
    workspace.search_code("build the index first")
    workspace.embed_all("code")
    seen = _counting(monkeypatch)
    outcome = workspace.search_code(query)
    workspace.close()
    assert outcome.structured["results"]
    assert seen.count(query) == 1
    if query != ISSUE and query != "TokenStore.refresh":  # a long query and a bare name are searched lexically
        assert outcome.result.mode.startswith("hybrid")
