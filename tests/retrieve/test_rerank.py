"""Each reranker feature on a minimal hand-built case, and the reranker end to end on real files."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.index.lexical.tokenize import Tokenizer
from agentty_rag.retrieve.features import Candidate, QueryProfile, defines_identifier, is_test_path, link_heavy
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.rerank import rerank
from agentty_rag.types import Chunk
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write


def _profile(text: str, terms: tuple[str, ...]) -> QueryProfile:
    query = parse_query(text, Tokenizer())
    return QueryProfile(text, terms, dict.fromkeys(terms, 2.0), query.identifiers, query.phrases, query.wants_tests)


def _candidate(
    chunk: Chunk, score: float, terms: set[str], name: Iterable[str] = (), context: Iterable[str] = ()
) -> Candidate:
    return Candidate(chunk, score, frozenset(terms), frozenset(name), frozenset(context))


def test_the_definition_beats_a_call_site_with_the_same_words() -> None:
    profile = _profile("refresh_token", ("refresh_token", "refresh", "token"))
    call = Chunk(
        "code", "api/handlers.py", 10, 14, "def post(req):\n    return refresh_token(req)\n", "python", "block", "", ""
    )
    definition = Chunk(
        "code", "auth/tokens.py", 3, 9, "def refresh_token(raw):\n    ...\n", "python", "function", "", "refresh_token"
    )
    ranked = rerank(
        [
            _candidate(call, 1.0, {"refresh_token", "refresh", "token"}),
            _candidate(definition, 0.8, {"refresh_token", "refresh", "token"}, {"refresh_token", "refresh", "token"}),
        ],
        profile,
    )
    assert ranked[0].candidate.chunk is definition
    assert dict(ranked[0].contributions)["defines"] > 0


def test_a_heading_match_beats_a_body_only_match() -> None:
    profile = _profile("rotate secrets", ("rotat", "secret"))
    body_only = Chunk(
        "docs", "ops.md", 1, 20, "... we rotate secrets sometimes ...", "markdown", "section", "Operations > Backups"
    )
    heading = Chunk(
        "docs", "secrets.md", 1, 12, "# Rotating secrets\n...", "markdown", "section", "Secrets > Rotating secrets"
    )
    ranked = rerank(
        [
            _candidate(body_only, 1.0, {"rotat", "secret"}),
            _candidate(heading, 0.9, {"rotat", "secret"}, {"rotat", "secret"}, {"rotat", "secret"}),
        ],
        profile,
    )
    assert ranked[0].candidate.chunk is heading


def test_test_files_are_demoted_unless_the_query_asks_for_tests() -> None:
    code = Chunk("code", "src/cache.py", 1, 9, "def evict(): ...", "python", "function", "", "evict")
    test = Chunk("code", "tests/test_cache.py", 1, 9, "def test_evict(): ...", "python", "function", "", "test_evict")
    for query, expected in (("cache eviction", code), ("tests for cache eviction", test)):
        terms = tuple(w for w in query.split() if w != "for")
        profile = _profile(query, terms)
        ranked = rerank([_candidate(test, 1.0, set(terms)), _candidate(code, 0.85, set(terms))], profile)
        assert ranked[0].candidate.chunk is expected, query


def test_feature_helpers() -> None:
    assert [is_test_path(p) for p in ("tests/a.py", "src/test_a.py", "a_test.go", "x.spec.ts", "src/contest.py")] == [
        True,
        True,
        True,
        True,
        False,
    ]
    index = Chunk("docs", "index.md", 1, 4, "- [A](a.md)\n- [B](b.md)\n- [C](c.md)\n- intro", "markdown")
    assert link_heavy(index) == 0.75
    profile = _profile("what does `get_model` do", ("get_model",))
    named = Chunk("code", "apps.py", 1, 3, "def get_model(): ...", "python", "method", "", "Apps.get_model")
    assert defines_identifier(_candidate(named, 1.0, set()), profile) == 1.0


def test_reranking_on_real_files_puts_the_definition_first(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/auth/tokens.py": "class TokenStore:\n    def refresh(self, raw):\n        '''Exchange a refresh token.'''\n"
            "        return self.issue(raw)\n",
            "tests/test_tokens.py": "def test_refresh(store):\n    store.refresh('raw')\n    store.refresh('raw')\n"
            "    assert store.refresh('raw')\n",
            "src/api.py": "def post_refresh(request):\n    return store.refresh(request.token)\n",
        },
    )
    on = Workspace(tmp_path, load_settings(LEXICAL)).search_code("refresh token store", k=3)
    assert on.structured["results"][0]["path"] == "src/auth/tokens.py"
    assert "reranked" in [step["stage"] for step in on.structured["funnel"]]
    off = Workspace(tmp_path, load_settings({**LEXICAL, "AGENTTY_RAG_RERANK": "0"})).search_code(
        "refresh token store", k=3
    )
    assert "reranked" not in [step["stage"] for step in off.structured["funnel"]]
