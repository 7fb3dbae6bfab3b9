"""The leg check's math: reciprocal ranks, the verdict rule, and the dense list with masked vectors."""

from __future__ import annotations

import random

import numpy as np
import numpy.typing as npt
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.retrieve.legs import MIN_LOSS, MIN_PROBES, Verdict, decide, masked_dense, reciprocal_rank

RANKS = st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 0.25, 0.2, 0.1, 0.05])
PAIRS = st.lists(st.tuples(RANKS, RANKS), max_size=80)


def test_the_reciprocal_rank_is_that_of_the_first_answer_found() -> None:
    assert reciprocal_rank([7, 3, 9, 4], frozenset({9, 4})) == 1 / 3
    assert reciprocal_rank([7, 3], frozenset({5})) == 0.0
    assert reciprocal_rank([], frozenset({5})) == 0.0


@given(st.lists(st.integers(0, 30), unique=True), st.frozensets(st.integers(0, 30)))
def test_a_reciprocal_rank_is_one_over_a_position_or_zero(ranked: list[int], answer: frozenset[int]) -> None:
    rr = reciprocal_rank(ranked, answer)
    positions = [i for i, slot in enumerate(ranked, start=1) if slot in answer]
    assert rr == (1 / positions[0] if positions else 0.0)


def test_too_few_probes_keep_the_hybrid_search_however_it_loses() -> None:
    verdict = decide([(1.0, 0.0)] * (MIN_PROBES - 1))
    assert not verdict.lexical and verdict.mrr_lexical == 1.0 and verdict.mrr_hybrid == 0.0
    assert "too few" in verdict.describe()


def test_a_steady_loss_makes_the_searches_lexical_and_says_so_with_its_numbers() -> None:
    pairs = [(1.0, 0.5)] * 30 + [(0.5, 0.5)] * 18
    verdict = decide(pairs)
    assert verdict.lexical and verdict.probes == 48
    assert (
        verdict.describe() == "dense leg not used for this corpus: self-check MRR lexical 0.81, hybrid 0.50 (48 probes)"
    )


def test_a_loss_within_its_own_noise_keeps_the_hybrid_search() -> None:
    # Lexical wins by 0.02 on average, but the probes disagree widely: one standard error is about 0.06.
    pairs = [(1.0, 0.0)] * 13 + [(0.0, 1.0)] * 12 + [(0.5, 0.5)] * 23
    verdict = decide(pairs)
    assert verdict.mrr_lexical > verdict.mrr_hybrid
    assert not verdict.lexical and verdict.describe().startswith("hybrid kept: self-check")


def test_no_probes_keep_the_hybrid_search() -> None:
    assert decide([]) == Verdict(0, 0.0, 0.0, 0.0, False)


@given(PAIRS)
def test_the_verdict_needs_enough_probes_and_a_real_loss(pairs: list[tuple[float, float]]) -> None:
    verdict = decide(pairs)
    if verdict.lexical:
        assert len(pairs) >= MIN_PROBES
        assert verdict.mrr_lexical - verdict.mrr_hybrid > max(verdict.stderr, MIN_LOSS)


@given(PAIRS, st.randoms())
def test_the_verdict_does_not_depend_on_the_order_of_the_probes(
    pairs: list[tuple[float, float]], rng: random.Random
) -> None:
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    assert decide(shuffled).lexical == decide(pairs).lexical


@given(PAIRS)
def test_a_fusion_never_worse_on_any_probe_is_kept(pairs: list[tuple[float, float]]) -> None:
    assert not decide([(lex, max(lex, hyb)) for lex, hyb in pairs]).lexical


def _unit(rows: npt.NDArray[np.float64]) -> npt.NDArray[np.float32]:
    unit: npt.NDArray[np.float32] = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    return unit


@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.sets(st.integers(0, 39), max_size=5))
def test_the_masked_dense_list_is_the_ranking_with_the_masked_vectors_in_place(
    seed: int, pool: int, masked_slots: set[int]
) -> None:
    rng = np.random.default_rng(seed)
    stored = _unit(rng.normal(size=(40, 8)))
    replaced = _unit(rng.normal(size=(40, 8)))
    query = _unit(rng.normal(size=(1, 8)))[0]
    scores = stored @ query
    order = sorted(range(40), key=lambda s: (-float(scores[s]), s))
    found = [(s, float(scores[s])) for s in order[: pool + len(masked_slots)]]
    masked = {s: replaced[s] for s in sorted(masked_slots)}
    expected_scores = {s: float(masked[s] @ query) if s in masked else float(scores[s]) for s in range(40)}
    expected = sorted(range(40), key=lambda s: (-expected_scores[s], s))[:pool]
    assert [s for s, _ in masked_dense(found, query, masked, pool)] == expected
