"""Corrective grading: the grades by hand, and the stage on the committed docs fixtures (refills keep k, a poor
retrieval gets one corrective try, the header and ``--explain`` say what was done)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentty_rag.config import load_settings
from agentty_rag.render.explain import render_explanation
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.pipeline import Filters, Plan, Retrieved, generate, search
from agentty_rag.retrieve.ranking import Ranking
from agentty_rag.retrieve.stages import build_stages
from agentty_rag.retrieve.stages.correct import (
    AMBIGUOUS,
    CORRECT,
    INCORRECT,
    Correct,
    dense_support,
    grade,
    grades,
)
from agentty_rag.retrieve.stages.fuse import Fuse
from agentty_rag.retrieve.stages.prf import Feedback
from agentty_rag.retrieve.stages.rerank import Rerank
from agentty_rag.retrieve.stages.stitch import Stitch
from agentty_rag.types import NOTE
from agentty_rag.workspace.service import Workspace
from tests.conftest import fixture_env

ADMIN = "where does the one-time admin credential come from right after a fresh Linux install?"
SPELLING = "fix the spelling in this sentence: teh quick brwon fox"


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The committed docs fixtures, indexed in a temporary workspace."""
    root = tmp_path_factory.mktemp("ws")
    workspace = Workspace(root, load_settings(fixture_env(root)))
    workspace.index("docs").refresh()
    return workspace


def ranked(workspace: Workspace, query: str, k: int = 10, filters: Filters | None = None) -> Ranking:
    """The ranking the grading stage sees: fused and reranked."""
    index = workspace.index("docs")
    ranking = generate(index, parse_query(query, index.tokenizer), k, filters or Filters(), workspace.plan())
    return Rerank().run(Fuse().run(ranking))


def found(workspace: Workspace, query: str, k: int, plan: Plan, filters: Filters | None = None) -> Retrieved:
    """The docs index searched for ``query`` through ``plan``."""
    index = workspace.index("docs")
    return search(index, parse_query(query, index.tokenizer), k, filters or Filters(), plan)


def notes(stages: tuple[tuple[str, int], ...]) -> list[str]:
    return [stage for stage, count in stages if count == NOTE]


def test_a_grade_weighs_retrieval_and_support_and_a_paraphrase_with_dense_support_is_correct() -> None:
    assert grade(1.0, 1.0) == (CORRECT, 1.0)
    assert grade(1.0, 0.5) == pytest.approx((CORRECT, 0.7))  # 0.4 + 0.6 x 0.5
    assert grade(1.0, 0.2) == pytest.approx((AMBIGUOUS, 0.52))
    assert grade(0.2, 0.1) == pytest.approx((INCORRECT, 0.14))
    # a passage that holds none of the query's words, ranked second by the dense leg: 0.4 x 0.5 + 0.6 x 0.95
    assert grade(0.5, max(0.0, 0.95)) == pytest.approx((CORRECT, 0.77))
    assert grade(3.0, -1.0)[1] == pytest.approx(0.4)  # both clamped to [0, 1]


def test_the_dense_leg_gives_its_first_ranks_support_and_nothing_beyond_its_depth(docs: Workspace) -> None:
    ranking = ranked(docs, ADMIN)
    assert dense_support(ranking) == {}  # lexical only
    request = replace(ranking.request, legs={**ranking.request.legs, "dense": [(7, 0.9), (3, 0.8), (5, 0.1)]})
    assert dense_support(replace(ranking, request=request)) == {7: 1.0, 3: 0.95, 5: 0.9}


def test_incorrect_candidates_give_way_to_the_next_ones_and_k_is_honoured(docs: Workspace) -> None:
    ranking = ranked(docs, ADMIN)
    before = grades(ranking)
    incorrect_in_top = [
        ranking.hits[i].chunk.chunk_id for i, (label, _) in enumerate(before[:10]) if label == INCORRECT
    ]
    assert len(incorrect_in_top) == 3
    graded = Correct().run(ranking)
    assert notes(graded.funnel.stages) == ["graded 10 → 7 + 3 refills"]
    top = [hit.chunk.chunk_id for hit in graded.hits[:10]]
    assert not set(incorrect_in_top) & set(top)
    assert [label for label, _ in grades(graded)[:10]].count(INCORRECT) == 0
    assert len(graded.hits) == len(ranking.hits)  # moved behind, never dropped
    result = found(docs, ADMIN, 10, Plan((Fuse(), Rerank(), Correct(), Stitch(False))))
    assert len(result.hits) == 10


def test_too_few_good_candidates_keep_the_incorrect_ones_rather_than_cut_k(docs: Workspace) -> None:
    plan = Plan((Fuse(), Rerank(), Correct(), Stitch(False)))
    result = found(docs, SPELLING, 10, plan)
    assert len(result.hits) == 10
    assert notes(result.funnel.stages) == [
        "corrective: none (feedback off or done, no filter to lift)",
        "graded 10 → 2 + 0 refills + 8 incorrect kept",
    ]


def test_a_poor_retrieval_tries_feedback_once_and_keeps_the_first_when_it_is_no_better(docs: Workspace) -> None:
    stages = (Fuse(), Rerank())
    plan = Plan((*stages, Correct(stages, Feedback()), Stitch(False)))
    result = found(docs, SPELLING, 10, plan)
    assert notes(result.funnel.stages)[0] == "corrective: prf +8 terms (no better, not kept)"
    first = found(docs, SPELLING, 10, Plan((*stages, Correct(), Stitch(False))))
    assert result.hits == first.hits


def test_a_poor_retrieval_in_a_narrow_scope_is_retried_on_the_whole_index(docs: Workspace) -> None:
    stages = (Fuse(), Rerank())
    plan = Plan((*stages, Correct(stages), Stitch(False)))
    query = "we store artifacts in MinIO and uploads fail with a signature error"
    result = found(docs, query, 5, plan, Filters(scope="docs/guide/auth"))
    assert notes(result.funnel.stages)[0] == "corrective: the whole index (filters lifted) (kept)"
    # the two passages the fixtures' labels name for it, both outside docs/guide/auth
    assert {(h.chunk.ref, h.chunk.context.rsplit(" > ", 1)[-1]) for h in result.hits[:2]} == {
        ("docs/troubleshooting/common-errors.md", "SignatureDoesNotMatch with MinIO"),
        ("docs/guide/artifacts.md", "Upload failures"),
    }


def test_the_grades_show_in_explain(docs: Workspace) -> None:
    graded = Correct().run(ranked(docs, ADMIN))
    text = render_explanation(graded.explanations)
    assert "correct +" in text
    assert "incorrect -" in text


def test_grading_is_off_by_default_and_runs_after_the_reranker_with_feedback_as_its_first_remedy() -> None:
    assert not any(isinstance(stage, Correct) for stage in build_stages(load_settings({})))
    stages = build_stages(load_settings({"AGENTTY_RAG_CORRECT": "1", "AGENTTY_RAG_PRF": "1"}))
    assert [type(stage).__name__ for stage in stages] == ["Feedback", "Fuse", "Rerank", "Correct", "Stitch"]
    correct = stages[3]
    assert isinstance(correct, Correct)
    assert correct.redo == (Fuse(), Rerank(files=True)) and correct.feedback == Feedback()


def test_grading_nothing_changes_nothing(docs: Workspace) -> None:
    ranking = ranked(docs, "zzzyqx qqqvvv")
    assert Correct().run(ranking) == ranking
