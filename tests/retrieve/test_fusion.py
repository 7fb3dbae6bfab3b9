"""How much each leg weighs for a query: the lean of its words, the full lexical lean of a long query, the
corpus's lead; and the dense leg's similarities on the query's own scale."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.retrieve.fusion import (
    DENSE_LED,
    DENSE_LED_LEXICAL,
    LEAN,
    dense_share,
    leg_weights,
    relative_similarities,
    rrf,
)
from agentty_rag.retrieve.query import lexical_lean

weights = st.floats(min_value=0.0, max_value=10.0, allow_nan=False, allow_subnormal=False)


def test_identifiers_lean_lexical_and_a_plain_question_leans_dense() -> None:
    assert lexical_lean("get_model `SHP-4031`") == 1.0
    assert lexical_lean("how often should my car get serviced") == 0.0
    plain = leg_weights(lexical_lean("how often should my car get serviced"), 1.0, 1.0)
    assert plain == {"lexical": 1.0 - LEAN, "dense": 1.0}
    named = leg_weights(lexical_lean("get_model"), 1.0, 1.0)
    assert named == {"lexical": 1.0, "dense": 1.0 - LEAN}


@given(st.text(max_size=200), weights, weights)
def test_a_long_query_leans_lexical_in_full_whatever_its_words(query: str, bm25: float, dense: float) -> None:
    # An issue in prose would lean dense by its words; the model reads only its first few hundred tokens.
    assert leg_weights(lexical_lean(query), bm25, dense, long=True) == {"lexical": bm25, "dense": dense * (1.0 - LEAN)}


@given(st.text(max_size=200), weights, weights, st.booleans())
def test_a_weight_of_zero_stays_zero_and_no_leg_gains_over_its_setting(
    query: str, bm25: float, dense: float, long: bool
) -> None:
    scaled = leg_weights(lexical_lean(query), bm25, dense, long=long)
    assert 0.0 <= scaled["lexical"] <= bm25 and 0.0 <= scaled["dense"] <= dense
    assert (scaled["lexical"] == 0.0) == (bm25 == 0.0) and (scaled["dense"] == 0.0) == (dense == 0.0)


def test_a_leg_of_weight_zero_has_no_influence_on_the_fused_order() -> None:
    legs = {"lexical": [(1, 9.0), (2, 5.0)], "dense": [(3, 0.9), (2, 0.8)]}
    assert [slot for slot, _ in rrf(legs, {"lexical": 1.0, "dense": 0.0})] == [1, 2]
    assert [slot for slot, _ in rrf(legs, {"lexical": 1.0, "dense": 1.0})][0] == 2  # in both lists


def test_where_the_dense_leg_leads_the_lexical_leg_keeps_a_quarter_of_its_weight() -> None:
    lean = lexical_lean("how are sessions signed")
    hybrid = leg_weights(lean, 1.0, 1.0)
    led = leg_weights(lean, 1.0, 1.0, lead=DENSE_LED)
    assert led == {"lexical": hybrid["lexical"] * DENSE_LED_LEXICAL, "dense": hybrid["dense"]}
    assert dense_share(led) > dense_share(hybrid) > 0
    assert dense_share({"lexical": 1.0, "dense": 0.0}) == 0.0 and dense_share({}) == 0.0


SIMILARITIES = st.lists(st.one_of(st.floats(-1, 1), st.just(float("nan"))), max_size=200)


@given(SIMILARITIES, st.integers(1, 100))
def test_similarities_on_the_querys_scale_run_from_its_noise_level_to_its_best(
    values: list[float], noise_rank: int
) -> None:
    similarities = np.array(values, np.float32)
    relative = relative_similarities(similarities, noise_rank)
    assert relative.shape == similarities.shape and np.all((relative >= 0) & (relative <= 1))
    known = ~np.isnan(similarities)
    assert np.all(relative[~known] == 0)
    if known.any():
        assert relative[int(np.nanargmax(similarities))] == 1.0
        # The order of the known similarities is kept (ties and the clipped tail aside).
        order = np.argsort(-similarities[known], kind="stable")
        assert np.all(np.diff(relative[known][order]) <= 1e-12)
        # Below the noise rank's similarity, everything is noise.
        ranked = np.sort(similarities[known])[::-1]
        noise = ranked[min(noise_rank, len(ranked)) - 1]
        if ranked[0] - noise > 1e-9:
            assert np.all(relative[known][similarities[known] <= noise] == 0)


def test_a_similarity_at_the_noise_level_is_zero_and_halfway_to_the_best_is_half() -> None:
    similarities = np.array([0.8, 0.5, 0.2, float("nan"), 0.1], np.float32)
    relative = relative_similarities(similarities, noise_rank=3)
    assert relative.tolist() == pytest.approx([1.0, 0.5, 0.0, 0.0, 0.0])
