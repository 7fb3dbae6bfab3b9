"""The token estimate of a text that states its own cost: the figure counts the text it is part of."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.budget.tokens import self_counted, text_tokens


def test_text_tokens_is_the_characters_over_four_rounded_up() -> None:
    assert [text_tokens("x" * n) for n in (0, 1, 4, 5, 8)] == [0, 1, 1, 2, 2]
    assert text_tokens("é" * 8) == 2  # characters, not bytes


@given(st.integers(min_value=0, max_value=200_000), st.integers(min_value=0, max_value=64))
def test_a_self_counted_text_states_its_own_estimate(body: int, head: int) -> None:
    text, figure = self_counted(lambda n: "h" * head + f" · {n:,} tokens\n" + "b" * body)
    assert text_tokens(text) == figure
    assert f" {figure:,} tokens" in text


@given(st.integers(min_value=3_960, max_value=4_040))
def test_the_figure_holds_where_it_gains_a_digit(body: int) -> None:
    """Around 999 → 1,000 tokens the figure grows by two characters; the count still agrees with itself."""
    text, figure = self_counted(lambda n: f"{n:,} tokens " + "b" * body)
    assert text_tokens(text) == figure


def test_a_text_that_ignores_the_figure_is_counted_as_it_is() -> None:
    text, figure = self_counted(lambda n: "a fixed text")
    assert (text, figure) == ("a fixed text", 3)
