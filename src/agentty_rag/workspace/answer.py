"""A search's answer from its indexes' attempts, in the form its request asks for.

A tool's answer (and rag-bench's) takes every index that ranked something, merged when there are several,
and its header names the first one's mode and empty reason. The proactive block takes only the indexes that
found something, always merged (each hit scored by its relevance times its result's confidence), and names
``hybrid`` when any of them searched both legs.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentty_rag.budget import BudgetConfig
from agentty_rag.retrieve.merge import merge_retrieved
from agentty_rag.retrieve.pipeline import Retrieved
from agentty_rag.types import Funnel, SearchResult
from agentty_rag.workspace.attempt import Attempt
from agentty_rag.workspace.outcome import Outcome, answer
from agentty_rag.workspace.request import SearchRequest


def outcome_of(
    request: SearchRequest,
    attempts: Sequence[Attempt],
    budget: BudgetConfig,
    workspace: str = "",
    notes: tuple[str, ...] = (),
) -> Outcome:
    """The answer to ``request`` from one attempt per index of ``request.indexes``.

    Args:
        request: what was asked (its form says how the attempts are merged and rendered).
        attempts: each index's attempt, in the request's order.
        budget: the output budget.
        workspace: the workspace as results name it ("" for the start folder).
        notes: more notes for the result, after the request's and the attempts' (the MCP resources').
    """
    if request.form == "context":
        return _block(request, attempts, budget, workspace)
    parts = [attempt.retrieved for attempt in attempts if attempt.retrieved is not None]
    retrieved = merge_retrieved(parts, request.k) if len(parts) > 1 else parts[0] if parts else None
    hits, funnel = (retrieved.hits, retrieved.funnel) if retrieved is not None else ((), Funnel())
    ranked = next((a for a in attempts if a.retrieved is not None), attempts[0])
    reason = "" if hits else ranked.empty_reason or f"no matches ({ranked.mode})"
    said = (*request.notes, *(note for a in attempts for note in a.notes), *notes)
    result = SearchResult(
        request.tool, request.query, ranked.mode, hits, funnel, reason, said, workspace, _partial(attempts)
    )
    return answer(attempts[0].index, result, retrieved, budget)


def _partial(attempts: Sequence[Attempt]) -> str:
    """How much of the indexes searched their first build has added so far ("" when they are whole)."""
    parts = [a.index.partial for a in attempts if a.index.partial is not None]
    if not parts:
        return ""
    return f"{sum(done for done, _ in parts):,} of {sum(total for _, total in parts):,} files"


def _block(request: SearchRequest, attempts: Sequence[Attempt], budget: BudgetConfig, workspace: str) -> Outcome:
    """The proactive block's answer: the rankings that found something, merged; extractive compression weighs
    the query's terms as the first of them with term weights read them."""
    found: list[tuple[Attempt, Retrieved]] = [
        (attempt, attempt.retrieved) for attempt in attempts if attempt.retrieved is not None and attempt.retrieved.hits
    ]
    merged = merge_retrieved([retrieved for _, retrieved in found], request.k)
    modes = [attempt.mode for attempt, _ in found]
    mode = "hybrid" if "hybrid" in modes else modes[0].split(" ")[0] if modes else ""
    weighed = next((attempt.index for attempt, r in found if r.profile is not None), attempts[0].index)
    reason = "" if merged.hits else "nothing relevant was found"
    result = SearchResult(request.tool, request.query, mode, merged.hits, merged.funnel, reason, (), workspace)
    return answer(weighed, result, merged, budget, block=True)


__all__ = ["outcome_of"]
