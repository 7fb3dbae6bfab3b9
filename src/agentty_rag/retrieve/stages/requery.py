"""What the generation stages share (multi-query, HyDE): searching again with a generated text, and fusing
the new lists with the original ranking by rank.

A generated text is searched like a query: the lexical leg always, the dense leg too when it ran for this
search (through ``Request.embed``). The lists are fused with the original fused list by weighted reciprocal
rank (``retrieve.fusion.rrf``), the original weighted highest. Raw scores of different searches do not
compare, so only the order comes from the fusion: the i-th candidate of the fused order takes the score the
i-th candidate of the original order had (a newcomer beyond its length the original's lowest), and every
later stage — the reranker's normalised fused feature, the relevance floor, the budget — reads scores on the
scale it always has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from agentty_rag.retrieve.candidates import analyse_query
from agentty_rag.retrieve.fusion import rrf
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.ranking import Ranking, Request
from agentty_rag.retrieve.rerank import rerank_pool
from agentty_rag.source_kinds import kinds_of
from agentty_rag.types import Chunk, Hit

ORIGINAL_WEIGHT = 1.0  # the user's own query weighs most
EXTRA_WEIGHT = 0.5  # each generated text's list
Ranked = Sequence[tuple[int, float]]


def searched(request: Request, text: str) -> dict[str, list[tuple[int, float]]]:
    """``text``'s candidates from the lexical leg and, when it ran for this search, the dense leg (empty lists
    left out)."""
    index = request.index
    analysis = analyse_query(index, parse_query(text, index.tokenizer), code=index.config.scoring.rank_files)
    found: dict[str, list[tuple[int, float]]] = {}
    if analysis.weights:
        found["lexical"] = index.lexical_scores(analysis.weights, request.allowed).leg(request.pool)
    vector = request.embed(text) if request.embed is not None else None
    if vector is not None:
        found["dense"] = index.dense_search(vector, request.pool, request.allowed, request.hubness)
    return {leg: ranked for leg, ranked in found.items() if ranked}


def fused_with(ranking: Ranking, extra: Mapping[str, Ranked], texts: int, stage: str) -> Ranking:
    """The ranking's pool re-made from its fused list and ``extra`` lists, fused by rank.

    Args:
        ranking: after fusion (its ``fused`` list is the original order).
        extra: the generated texts' lists (``extra_lists``); a text weighs ``EXTRA_WEIGHT``, shared by its legs.
        texts: how many texts were searched (for ``found_by``: ``expand 2/3`` when two of three found a hit).
        stage: the stage's name, for ``found_by``.

    Returns:
        The ranking with the new pool, ``fused`` and ``found_by``; the caller adds the funnel and the note.
    """
    if not extra:
        return ranking
    before = ranking
    legs_of: dict[str, int] = {}
    for name in extra:
        legs_of[_text(name)] = legs_of.get(_text(name), 0) + 1
    weights = {"original": ORIGINAL_WEIGHT, **{name: EXTRA_WEIGHT / legs_of[_text(name)] for name in extra}}
    ranking, chunks = fused_by_rank(ranking, {"original": list(ranking.fused), **extra}, weights)
    pool = [(slot, chunks[slot].chunk_id) for slot in ranking.slots]
    return replace(ranking, found_by=contributions(before, extra, texts, stage, pool))


def fused_by_rank(
    ranking: Ranking, lists: Mapping[str, Ranked], weights: Mapping[str, float]
) -> tuple[Ranking, dict[int, Chunk]]:
    """The pool re-made from ``lists`` (the ranking's own fused list among them) fused by weighted rank, and
    the chunks of the fused candidates.

    Only the order comes from the fusion: the i-th candidate takes the score the i-th of the ranking's fused
    list had (the lowest beyond its length), so later stages read the usual scale.
    """
    merged = rrf(lists, weights)
    chunks = ranking.request.index.chunks([slot for slot, _ in merged])
    order = sorted(
        ((slot, fused) for slot, fused in merged if slot in chunks),
        key=lambda pair: (-round(pair[1], 12), chunks[pair[0]].chunk_id),
    )
    # Nothing matched the query itself: the other lists' fused scores are the only ones there are.
    standing = sorted((score for _, score in ranking.fused), reverse=True) or [fused for _, fused in order]
    rescored = [(slot, standing[min(i, len(standing) - 1)]) for i, (slot, _) in enumerate(order)]
    pool = rescored[: rerank_pool(ranking.request.k)]
    refused = replace(
        ranking,
        fused=tuple(rescored),
        hits=tuple(Hit(chunks[slot], score) for slot, score in pool),
        slots=tuple(slot for slot, _ in pool),
        candidates=None,
    )
    return refused, chunks


def contributions(
    ranking: Ranking, extra: Mapping[str, Ranked], texts: int, stage: str, pool: Sequence[tuple[int, str]]
) -> dict[str, tuple[str, ...]]:
    """``found_by`` with this stage's part in each pooled hit: how many texts found it, and whether the
    original pool lacked it."""
    finders: dict[int, set[str]] = {}
    for name, ranked in extra.items():
        for slot, _ in ranked:
            finders.setdefault(slot, set()).add(_text(name))
    before = set(ranking.slots)
    found_by = dict(ranking.found_by)
    for slot, chunk_id in pool:
        if slot in finders:
            label = f"{stage} {len(finders[slot])}/{texts}" + ("" if slot in before else ", new to the pool")
            found_by[chunk_id] = (*found_by.get(chunk_id, ()), label)
    return found_by


def skipped(ranking: Ranking, stage: str, reason: str) -> Ranking:
    """The ranking unchanged, with a note that says why ``stage`` did nothing."""
    return replace(ranking, notes=(*ranking.notes, f"{stage}: skipped ({reason})"))


def one_line(text: str) -> str:
    """``text`` with its whitespace runs made single spaces (a prompt is one line)."""
    return " ".join(text.split())


def _text(name: str) -> str:
    return name.split(":", 1)[0]


def extra_lists(request: Request, texts: Sequence[str]) -> dict[str, list[tuple[int, float]]]:
    """Each text's lists, named ``text<i>:<leg>``."""
    lists: dict[str, list[tuple[int, float]]] = {}
    for i, text in enumerate(texts, start=1):
        for leg, ranked in searched(request, text).items():
            lists[f"text{i}:{leg}"] = ranked
    return lists


def searches_code(ranking: Ranking) -> bool:
    """Whether the searched index holds source code: the prompts then ask for code rather than prose."""
    return any(spec.code for spec in kinds_of(ranking.request.index.config.name))


__all__ = [
    "searches_code",
    "EXTRA_WEIGHT",
    "ORIGINAL_WEIGHT",
    "contributions",
    "extra_lists",
    "fused_with",
    "one_line",
    "searched",
    "skipped",
]
