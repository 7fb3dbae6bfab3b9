"""How much each leg weighs for a query: the lean of its words, and the full lexical lean of a long query."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.retrieve.fusion import LEAN, leg_weights, lexical_lean, rrf

weights = st.floats(min_value=0.0, max_value=10.0, allow_nan=False, allow_subnormal=False)


def test_identifiers_lean_lexical_and_a_plain_question_leans_dense() -> None:
    assert lexical_lean("get_model `SHP-4031`") == 1.0
    assert lexical_lean("how often should my car get serviced") == 0.0
    plain = leg_weights("how often should my car get serviced", 1.0, 1.0)
    assert plain == {"lexical": 1.0 - LEAN, "dense": 1.0}
    named = leg_weights("get_model", 1.0, 1.0)
    assert named == {"lexical": 1.0, "dense": 1.0 - LEAN}


@given(st.text(max_size=200), weights, weights)
def test_a_long_query_leans_lexical_in_full_whatever_its_words(query: str, bm25: float, dense: float) -> None:
    # An issue in prose would lean dense by its words; the model reads only its first few hundred tokens.
    assert leg_weights(query, bm25, dense, long=True) == {"lexical": bm25, "dense": dense * (1.0 - LEAN)}


@given(st.text(max_size=200), weights, weights, st.booleans())
def test_a_weight_of_zero_stays_zero_and_no_leg_gains_over_its_setting(
    query: str, bm25: float, dense: float, long: bool
) -> None:
    scaled = leg_weights(query, bm25, dense, long=long)
    assert 0.0 <= scaled["lexical"] <= bm25 and 0.0 <= scaled["dense"] <= dense
    assert (scaled["lexical"] == 0.0) == (bm25 == 0.0) and (scaled["dense"] == 0.0) == (dense == 0.0)


def test_a_leg_of_weight_zero_has_no_influence_on_the_fused_order() -> None:
    legs = {"lexical": [(1, 9.0), (2, 5.0)], "dense": [(3, 0.9), (2, 0.8)]}
    assert [slot for slot, _ in rrf(legs, {"lexical": 1.0, "dense": 0.0})] == [1, 2]
    assert [slot for slot, _ in rrf(legs, {"lexical": 1.0, "dense": 1.0})][0] == 2  # in both lists
