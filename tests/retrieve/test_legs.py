"""The leg check's math: reciprocal ranks, the paired gain, and the rule that turns probes into a verdict."""

from __future__ import annotations

import math
import random

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.retrieve.fusion import DENSE_LED, HYBRID
from agentty_rag.retrieve.legs import (
    LEXICAL,
    MIN_GAIN,
    MIN_PROBES,
    Verdict,
    answer_rank,
    decide,
    paired_gain,
    reciprocal_rank,
)
from agentty_rag.types import Chunk, Hit

RANKS = st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 0.25, 0.2, 0.1, 0.05])
TRIPLES = st.lists(st.tuples(RANKS, RANKS, RANKS), max_size=80)


def test_the_reciprocal_rank_is_that_of_the_first_answer_found() -> None:
    assert reciprocal_rank([7, 3, 9, 4], frozenset({9, 4})) == 1 / 3
    assert reciprocal_rank([7, 3], frozenset({5})) == 0.0
    assert reciprocal_rank([], frozenset({5})) == 0.0


@given(st.lists(st.integers(0, 30), unique=True), st.frozensets(st.integers(0, 30)))
def test_a_reciprocal_rank_is_one_over_a_position_or_zero(ranked: list[int], answer: frozenset[int]) -> None:
    rr = reciprocal_rank(ranked, answer)
    positions = [i for i, slot in enumerate(ranked, start=1) if slot in answer]
    assert rr == (1 / positions[0] if positions else 0.0)


def _chunk(ref: str, start: int, end: int) -> Chunk:
    return Chunk("code", ref, start, end, "x = 1", "python", "function", "", "f")


def test_an_answer_counts_where_a_shown_passage_holds_part_of_its_lines() -> None:
    answer = [_chunk("a.py", 10, 20)]
    other, overlapping = _chunk("b.py", 10, 20), _chunk("a.py", 18, 40)
    assert answer_rank([Hit(other, 1.0), Hit(overlapping, 0.5)], answer) == 0.5
    assert answer_rank([Hit(_chunk("a.py", 21, 30), 1.0)], answer) == 0.0  # the next definition is not the answer
    stitched = Hit(_chunk("a.py", 1, 30), 1.0, parts=(_chunk("a.py", 1, 9), _chunk("a.py", 10, 30)))
    assert answer_rank([stitched], answer) == 1.0


def test_the_paired_gain_is_the_mean_difference_and_its_standard_error() -> None:
    gain, stderr = paired_gain([(0.5, 1.0), (0.5, 0.5), (1.0, 0.5)])
    assert gain == 0.0 and math.isclose(stderr, math.sqrt(0.25 / 3))
    assert paired_gain([]) == (0.0, 0.0)


def test_too_few_probes_keep_the_hybrid_search_however_it_loses() -> None:
    verdict = decide([(1.0, 0.0, 1.0)] * (MIN_PROBES - 1))
    assert verdict.lead == HYBRID and not verdict.lexical
    assert verdict.mrr_lexical == 1.0 and verdict.mrr_hybrid == 0.0 and verdict.mrr_dense == 1.0
    assert "too few" in verdict.describe()


def test_a_steady_lexical_gain_makes_the_searches_lexical_and_says_so_with_its_numbers() -> None:
    verdict = decide([(1.0, 0.5, 0.25)] * 30 + [(0.5, 0.5, 0.5)] * 18)
    assert verdict.lexical and verdict.lead == LEXICAL and verdict.probes == 48
    assert verdict.describe() == (
        "dense leg not used for this corpus: self-check MRR lexical 0.81, hybrid 0.50, dense-led 0.34 (48 probes)"
    )


def test_a_steady_dense_led_gain_lets_the_dense_leg_lead() -> None:
    verdict = decide([(0.25, 0.5, 1.0)] * 30 + [(0.5, 0.5, 0.5)] * 18)
    assert verdict.lead == DENSE_LED and not verdict.lexical
    assert verdict.describe().startswith("dense leg leads for this corpus: self-check MRR lexical 0.34")


def test_when_both_others_beat_the_hybrid_search_the_larger_gain_wins() -> None:
    assert decide([(0.75, 0.25, 1.0)] * 48).lead == DENSE_LED
    assert decide([(1.0, 0.25, 0.75)] * 48).lead == LEXICAL


def test_a_gain_within_its_own_noise_keeps_the_hybrid_search() -> None:
    # Lexical wins by 0.02 on average, but the probes disagree widely: one standard error is about 0.11.
    verdict = decide([(1.0, 0.0, 0.0)] * 13 + [(0.0, 1.0, 0.0)] * 12 + [(0.5, 0.5, 0.5)] * 23)
    assert verdict.mrr_lexical > verdict.mrr_hybrid
    assert verdict.lead == HYBRID and verdict.describe().startswith("hybrid kept: self-check")
    assert "within its standard error 0.11" in verdict.describe()


def test_no_probes_keep_the_hybrid_search() -> None:
    assert decide([]) == Verdict(0, 0.0, 0.0, 0.0, 0.0, HYBRID)


@given(TRIPLES)
def test_another_way_is_taken_only_with_enough_probes_and_a_real_gain(
    triples: list[tuple[float, float, float]],
) -> None:
    verdict = decide(triples)
    assert verdict.lead in (LEXICAL, HYBRID, DENSE_LED)
    if verdict.lead != HYBRID:
        assert len(triples) >= MIN_PROBES
        chosen = verdict.mrr_lexical if verdict.lead == LEXICAL else verdict.mrr_dense
        assert chosen - verdict.mrr_hybrid > max(verdict.stderr, MIN_GAIN) - 1e-9


@given(TRIPLES, st.randoms())
def test_the_verdict_does_not_depend_on_the_order_of_the_probes(
    triples: list[tuple[float, float, float]], rng: random.Random
) -> None:
    shuffled = list(triples)
    rng.shuffle(shuffled)
    assert decide(shuffled).lead == decide(triples).lead


def test_a_gain_exactly_at_its_standard_error_gives_one_verdict_in_every_order() -> None:
    """The lexical gain here equals its standard error: summed in another order, the last bit of either moved
    and the verdict with it."""
    third = 1 / 3
    triples = [(0.0, 0.0, 0.0)] * 5 + [
        (0.0, 0.25, 0.0),
        (1.0, third, 0.0),
        (1.0, 0.1, 0.0),
        (third, 0.5, 0.0),
        (third, 0.1, 0.0),
        (third, 0.05, 0.0),
        (0.25, 0.0, 0.0),
        (0.25, 0.1, 0.0),
        (0.2, 0.0, 0.0),
        (0.2, 0.0, 0.0),
        (0.1, 1.0, 0.0),
    ]
    leads = set()
    for seed in range(200):
        shuffled = list(triples)
        random.Random(seed).shuffle(shuffled)
        leads.add(decide(shuffled).lead)
    assert len(leads) == 1


@given(TRIPLES)
def test_a_hybrid_search_never_worse_on_any_probe_is_kept(triples: list[tuple[float, float, float]]) -> None:
    assert decide([(lex, max(lex, hyb, dense), dense) for lex, hyb, dense in triples]).lead == HYBRID
