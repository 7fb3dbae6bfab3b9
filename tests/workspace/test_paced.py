"""The turns of the server's embedding requests (``workspace/paced.py``): what a query waited behind, the
tiers' order, and the size of the background's requests. Real threads; the waits are on events."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.workspace.paced import MEASURED, REQUEST_S, Pace, QueryTurns


def _hold(turns: QueryTurns, tier: str, inside: threading.Event, release: threading.Event) -> threading.Thread:
    """A request of the background of ``tier``, in flight until ``release`` is set."""

    def request() -> None:
        with turns.background(tier):
            inside.set()
            assert release.wait(60)

    thread = threading.Thread(target=request)
    thread.start()
    return thread


def test_a_query_alone_overlapped_nothing() -> None:
    turns = QueryTurns()
    with turns.query() as turn:
        pass
    assert not turn.overlapped


def test_a_query_sent_behind_a_request_that_was_answered_before_it_failed_still_overlapped_it() -> None:
    """The request ahead of the query is answered and gone when the query's own time runs out: the query waited
    behind it, so its time-out is the server's business, not its failure."""
    turns = QueryTurns()
    inside, release = threading.Event(), threading.Event()
    request = _hold(turns, "rest", inside, release)
    assert inside.wait(60)
    with turns.query() as turn:
        release.set()
        request.join(60)
        assert not turns.busy  # nothing in flight any more when it fails
        assert turn.overlapped


def test_a_later_tier_waits_for_an_earlier_tier_with_work_left() -> None:
    turns = QueryTurns()
    order: list[str] = []
    with turns.working("definitions"):
        inside, release = threading.Event(), threading.Event()
        docs = threading.Thread(target=lambda: _send(turns, "docs", order))
        docs.start()
        assert turns.await_waiting(1, 60)  # the docs request waits for its turn
        request = _hold(turns, "definitions", inside, release)  # a definitions request goes at once
        assert inside.wait(60)
        order.append("definitions")
        release.set()
        request.join(60)
        assert docs.is_alive() and order == ["definitions"]
    docs.join(60)
    assert order == ["definitions", "docs"]


def _send(turns: QueryTurns, tier: str, order: list[str]) -> None:
    with turns.background(tier):
        order.append(tier)


@given(st.lists(st.tuples(st.integers(1, 64), st.floats(0.001, 30, allow_nan=False)), min_size=1, max_size=12))
def test_a_request_of_the_background_is_sized_by_the_last_requests_speed(timings: list[tuple[int, float]]) -> None:
    pace = Pace()
    for sent, took in timings:
        pace.took(sent, took)
    size = pace.size(32)
    recent = timings[-MEASURED:]
    per_text = sum(t for _, t in recent) / sum(n for n, _ in recent)
    assert 1 <= size <= 32
    if 1 < size < 32:
        assert size * per_text <= REQUEST_S + 1e-9  # no more than fits in the time at the speed measured
    if size == 1:
        assert 2 * per_text > REQUEST_S  # two texts would not fit


def test_the_first_request_is_small_and_the_rate_counts_what_was_embedded() -> None:
    pace = Pace()
    assert pace.size(32) == 4 and pace.rate() == 0.0
    pace.took(4, 0.1)
    assert pace.rate() > 0
