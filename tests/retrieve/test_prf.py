"""Pseudo-relevance feedback: the relevance model, the expanded weights and the rank fusion by hand, and the
stage on the committed fixtures (what it adds, what it moves, when it stays out)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.pipeline import Filters, Plan, generate, search
from agentty_rag.retrieve.stages import build_stages
from agentty_rag.retrieve.stages.fuse import Fuse
from agentty_rag.retrieve.stages.prf import (
    ORIGINAL_WEIGHT,
    Feedback,
    expanded_weights,
    feedback_for,
    gains,
    rank_fused,
    relevance_model,
)
from agentty_rag.types import NOTE
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, fixture_env

NGINX = "shipyard sits behind nginx and following logs keeps disconnecting"


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The committed docs fixtures, indexed in a temporary workspace."""
    root = tmp_path_factory.mktemp("ws")
    workspace = Workspace(root, load_settings(fixture_env(root)))
    workspace.index("docs").refresh()
    return workspace


def test_the_relevance_model_weighs_a_term_by_its_share_in_each_passage_and_its_idf() -> None:
    passages = [("alpha alpha beta gamma".split(), 3.0), ("alpha delta".split(), 1.0)]
    idf = {"alpha": 2.0, "beta": 1.0, "gamma": 1.0, "delta": 3.0}
    # alpha: (3/4 x 2/4 + 1/4 x 1/2) x idf 2 = 1.0; the others are in one passage of two, so they are dropped
    assert relevance_model(passages, idf, exclude=set()) == {"alpha": 1.0}
    assert relevance_model(passages, idf, exclude={"alpha"}) == {}
    # one feedback passage: a term needs only that one
    assert relevance_model(passages[1:], idf, exclude={"alpha"}) == {"delta": 1.5}


def test_short_terms_numbers_and_unscored_passages_are_never_feedback() -> None:
    passages = [("io 2024 cache".split(), 1.0), ("io 2024 cache".split(), 0.0)]
    idf = {"io": 5.0, "2024": 5.0, "cache": 1.0}
    assert relevance_model(passages, idf, exclude=set()) == pytest.approx({"cache": 1 / 3})


def test_the_original_terms_keep_their_weight_and_share_of_the_expanded_query() -> None:
    weights = expanded_weights({"rotate": 1.0, "key": 1.0}, {"master": 3.0, "secret": 1.0})
    assert weights["rotate"] == weights["key"] == 1.0
    added = (1 - ORIGINAL_WEIGHT) / ORIGINAL_WEIGHT * 2.0
    assert weights["master"] == pytest.approx(added * 0.75)
    assert weights["secret"] == pytest.approx(added * 0.25)
    assert 2.0 / sum(weights.values()) == pytest.approx(ORIGINAL_WEIGHT)
    assert expanded_weights({"rotate": 1.0}, {}) == {"rotate": 1.0}


def test_the_expanded_search_is_fused_with_the_first_pass_by_rank_and_keeps_its_top_score() -> None:
    first = [(1, 10.0), (2, 5.0)]
    second = [(2, 8.0), (3, 4.0)]
    # rrf: slot 2 = 1/62 + 2/61, slot 3 = 2/62, slot 1 = 1/61
    fused = rank_fused(first, second, depth=3)
    assert [slot for slot, _ in fused] == [2, 3, 1]
    assert fused[0][1] == pytest.approx(10.0)
    assert fused[1][1] == pytest.approx(10.0 * (2 / 62) / (1 / 62 + 2 / 61))
    assert [slot for slot, _ in rank_fused(first, second, depth=1)] == [2]


def test_feedback_finds_the_reverse_proxy_section_for_a_question_about_nginx_disconnects(docs: Workspace) -> None:
    index = docs.index("docs")
    settings = load_settings({**fixture_env(docs.root), "AGENTTY_RAG_PRF": "1"})
    expansion = feedback_for(
        generate(index, parse_query(NGINX, index.tokenizer), 10, Filters(), Plan.from_settings(settings)), 8, 8
    )
    assert len(expansion.terms) == 8
    assert "proxi" in expansion.terms  # "proxy", stemmed: the word the question lacks
    assert not {"shipyard", "nginx", "log"} & set(expansion.terms)  # the query's own terms are not added
    without = search(index, parse_query(NGINX, index.tokenizer), 5, Filters(), docs.plan())
    expanded = search(index, parse_query(NGINX, index.tokenizer), 5, Filters(), Plan.from_settings(settings))
    # the changelog entry that shares the question's words ranks below the guide even without feedback
    assert "docs/releases/changelog.md" not in [h.chunk.ref for h in without.hits[:3]]
    assert without.hits[0].chunk.ref == "docs/operations/networking-tls.md"
    assert expanded.hits[0].chunk.ref == "docs/operations/networking-tls.md"
    assert expanded.hits[0].chunk.context.endswith("Behind a reverse proxy")
    assert ("prf +8 terms", NOTE) in expanded.funnel.stages


def test_prf_terms_and_docs_bound_what_feedback_reads_and_adds(docs: Workspace) -> None:
    ranking = generate(docs.index("docs"), parse_query(NGINX, docs.index("docs").tokenizer), 10, Filters(), docs.plan())
    assert len(feedback_for(ranking, 8, 3).terms) == 3
    # one passage of feedback: its own terms, the heaviest of which is not the two passages' shared one
    assert feedback_for(ranking, 1, 8).terms != feedback_for(ranking, 8, 8).terms


def test_feedback_stays_out_of_a_confident_search(docs: Workspace) -> None:
    plan = Plan.from_settings(load_settings({**fixture_env(docs.root), "AGENTTY_RAG_PRF": "1"}))
    query = "does shipyard deploy --dry-run take the deploy lock?"  # first-pass confidence 0.84
    result = search(docs.index("docs"), parse_query(query, docs.index("docs").tokenizer), 5, Filters(), plan)
    assert ("prf: skipped (confident first pass)", NOTE) in result.funnel.stages
    assert (
        result.hits
        == search(docs.index("docs"), parse_query(query, docs.index("docs").tokenizer), 5, Filters(), docs.plan()).hits
    )


def test_feedback_stays_out_of_a_code_query_that_names_a_definition_and_runs_for_a_question(tmp_path: Path) -> None:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "code", root)
    workspace = Workspace(root, load_settings({**LEXICAL, "AGENTTY_RAG_PRF": "1"}))
    index = workspace.index("code")
    index.refresh()
    named = search(index, parse_query("TokenStore.refresh", index.tokenizer), 5, Filters(), workspace.plan())
    assert ("prf: skipped (the query names what it wants)", NOTE) in named.funnel.stages
    question = search(
        index,
        parse_query("where do we refresh an expired auth token?", index.tokenizer),
        5,
        Filters(),
        workspace.plan(),
    )
    assert [stage for stage, count in question.funnel.stages if count == NOTE] == ["prf +8 terms"]
    # feedback from code leaves out the language's keywords, which every passage of it holds
    expansion = feedback_for(
        generate(
            index,
            parse_query("where do we refresh an expired auth token?", index.tokenizer),
            5,
            Filters(),
            workspace.plan(),
        ),
        8,
        8,
    )
    assert not {"def", "self", "return", "class"} & set(expansion.terms)
    assert "tokenexpired" in expansion.terms
    workspace.close()


def test_feedback_with_no_lexical_candidates_says_so_and_changes_nothing(docs: Workspace) -> None:
    index = docs.index("docs")
    plan = Plan((Feedback(), Fuse()))
    result = search(index, parse_query("zzzyqx qqqvvv", index.tokenizer), 5, Filters(), plan)
    assert result.hits == ()
    assert ("prf: skipped (no lexical candidates)", NOTE) in result.funnel.stages


def test_feedback_is_off_by_default_runs_first_and_ranks_the_same_twice(docs: Workspace) -> None:
    assert not any(isinstance(stage, Feedback) for stage in build_stages(load_settings({})))
    stages = build_stages(
        load_settings({"AGENTTY_RAG_PRF": "1", "AGENTTY_RAG_PRF_DOCS": "5", "AGENTTY_RAG_PRF_TERMS": "4"})
    )
    assert stages[0] == Feedback(docs=5, terms=4)
    plan = Plan(stages)
    index = docs.index("docs")
    first, second = (search(index, parse_query(NGINX, index.tokenizer), 8, Filters(), plan) for _ in range(2))
    assert [h.chunk.chunk_id for h in first.hits] == [h.chunk.chunk_id for h in second.hits]
    assert first.funnel == second.funnel


def test_explain_shows_how_many_places_feedback_moved_each_hit() -> None:
    first = [(1, 9.0), (2, 8.0), (3, 7.0)]
    leg = [(2, 9.0), (1, 8.5), (4, 8.0)]
    # slot 4 was not in the first pass: it counts from just below it (rank 3) up to rank 2
    assert gains(first, leg) == {2: (("prf rank", 1.0),), 1: (("prf rank", -1.0),), 4: (("prf rank", 1.0),)}


def test_the_reverse_proxy_section_says_in_explain_that_feedback_lifted_it(docs: Workspace) -> None:
    plan = Plan.from_settings(load_settings({**fixture_env(docs.root), "AGENTTY_RAG_PRF": "1"}))
    result = search(docs.index("docs"), parse_query(NGINX, docs.index("docs").tokenizer), 5, Filters(), plan)
    top = result.explanations[0]
    assert top.candidate.chunk.context.endswith("Behind a reverse proxy")
    assert ("prf rank", 1.0) in top.contributions
