"""Graph expansion (``AGENTTY_RAG_GRAPH``, off by default): the neighbours of the best hits in the index's graph
join the candidates, fused with the base order by rank.

The graph (``index.graph``: links between files, similar passages, communities) is read from its file beside
the index, or built on the first search that needs it and whenever the index changed since (the header says
so, with the build time); an index over ``AGENTTY_RAG_GRAPH_MAX_CHUNKS`` passages gets no graph (skipped, and
the header says why). Expansion is local and bounded: the first ``AGENTTY_RAG_GRAPH_SEEDS`` hits each bring
their similar passages and, for each linked file, its passage that best matches the query (its first one when
none does: then at half weight). A neighbour scores the sum over the seeds that reach it of

    1 / seed rank x edge weight x (1 in the seed's community, ``OTHER_COMMUNITY`` outside it)

and the best ``MAX_ADDED`` follow the seeds in the graph list. Raw scores of the two lists do not compare, so
the base fused list and the graph list are fused by weighted reciprocal rank, the base weighing most: a
neighbour among the candidates rises toward the seeds (never above them), one new to them may enter the
pool. As in ``requery``, the i-th candidate of the new order takes the score the i-th had before, so later
stages read the usual scale. The funnel says ``graph +N`` (new to the pool); ``--explain``, which seed
brought a hit (``graph via security.md (link)``).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from agentty_rag.config import Settings
from agentty_rag.errors import AgenttyError
from agentty_rag.index.graph.model import Graph
from agentty_rag.index.graph.store import graph_of
from agentty_rag.retrieve.ranking import Ranking, Request
from agentty_rag.retrieve.stages.kind import Rung, StageKind
from agentty_rag.retrieve.stages.requery import fused_by_rank, skipped

MAX_ADDED = 10
BASE_WEIGHT = 1.0
GRAPH_WEIGHT = 0.5
OTHER_COMMUNITY = 0.5
UNMATCHED = 0.5  # a linked file none of whose passages holds a query term


@dataclass(frozen=True)
class Neighbour:
    slot: int
    score: float
    via: str  # the seed's file, and how it reaches this passage: ``docs/auth.md (link)``


def _passage_of(request: Request, ref: str) -> tuple[int, float] | None:
    """The linked file's passage that best matches the query (ties: the first), with its weight factor."""
    groups = request.lexical.groups
    i = bisect.bisect_left(groups.refs, ref)
    if i == len(groups.refs) or groups.refs[i] != ref:
        return None
    slots = groups.slots_of(i)
    if request.allowed is not None:
        slots = slots[request.allowed[slots]] if len(request.allowed) else slots[:0]
    if not len(slots):
        return None
    scores = request.lexical.at(slots)
    best = int(np.argmax(scores))
    return int(slots[best]), (1.0 if scores[best] > 0 else UNMATCHED)


def neighbours(graph: Graph, ranking: Ranking, seeds: int) -> list[Neighbour]:
    """The graph list: the best ``MAX_ADDED`` neighbours of the first ``seeds`` hits, best first."""
    request = ranking.request
    allowed = request.allowed
    seed_slots = set(ranking.slots[:seeds])
    score: dict[int, float] = {}
    via: dict[int, str] = {}

    def reach(slot: int, weight: float, label: str) -> None:
        if slot in seed_slots or (allowed is not None and not (slot < len(allowed) and allowed[slot])):
            return
        score[slot] = score.get(slot, 0.0) + weight
        if slot not in via:
            via[slot] = label  # the strongest seed's reason: seeds come best first

    for rank, (hit, slot) in enumerate(zip(ranking.hits[:seeds], ranking.slots[:seeds], strict=True), start=1):
        ref = hit.chunk.ref
        home = graph.community.get(ref)
        groups = request.lexical.groups
        for other, weight in graph.similar.get(slot, ()):
            other_ref = groups.refs[int(groups.of_slot[other])] if other < len(groups.of_slot) else ""
            near = 1.0 if home is not None and graph.community.get(other_ref) == home else OTHER_COMMUNITY
            reach(other, weight * near / rank, f"{ref} (similar)")
        for target, kind, weight in graph.links.get(ref, ()):
            found = _passage_of(request, target)
            if found is not None:
                near = 1.0 if home is not None and graph.community.get(target) == home else OTHER_COMMUNITY
                reach(found[0], weight * found[1] * near / rank, f"{ref} ({kind})")
    chunks = request.index.chunks(list(score))
    order = sorted((s for s in score if s in chunks), key=lambda s: (-round(score[s], 9), chunks[s].chunk_id))
    return [Neighbour(slot, score[slot], via[slot]) for slot in order[:MAX_ADDED]]


def fused(ranking: Ranking, found: Sequence[Neighbour], seeds: int) -> Ranking:
    """The pool re-made from the base fused list and the graph list (the first ``seeds`` hits, then ``found``),
    fused by rank; ``found_by`` says which seed brought each graph candidate."""
    # The seeds lead the graph list, in their order: the expansion lifts their neighbours toward them and
    # never above them.
    leading = [(slot, 0.0) for slot in ranking.slots[:seeds]]
    graph_list = leading + [(n.slot, n.score) for n in found]
    lists = {"base": list(ranking.fused), "graph": graph_list}
    refused, chunks = fused_by_rank(ranking, lists, {"base": BASE_WEIGHT, "graph": GRAPH_WEIGHT})
    before = set(ranking.slots)
    via = {n.slot: n.via for n in found}
    found_by = dict(ranking.found_by)
    for slot in refused.slots:
        if slot in via:
            label = f"graph via {via[slot]}" + ("" if slot in before else ", new to the pool")
            chunk_id = chunks[slot].chunk_id
            found_by[chunk_id] = (*found_by.get(chunk_id, ()), label)
    return replace(refused, found_by=found_by)


@dataclass(frozen=True)
class GraphExpansion:
    """The graph stage: ``seeds`` hits expanded; an index over ``max_chunks`` passages gets no graph."""

    seeds: int = 3
    max_chunks: int = 100_000

    @property
    def scores_files(self) -> bool:
        return False

    def run(self, ranking: Ranking) -> Ranking:
        if not ranking.hits:
            return ranking
        try:
            loaded = graph_of(ranking.request.index, self.max_chunks)
        except AgenttyError as error:  # the index could not be read whole: search on without the graph
            return skipped(ranking, "graph", f"the graph could not be built: {error}")
        if loaded.graph is None:
            return skipped(ranking, "graph", f"{loaded.too_large}: AGENTTY_RAG_GRAPH_MAX_CHUNKS")
        notes = (*ranking.notes, f"graph: {loaded.done}") if loaded.done else ranking.notes
        found = neighbours(loaded.graph, ranking, self.seeds)
        before = set(ranking.slots)
        ranking = fused(ranking, found, self.seeds) if found else ranking
        added = sum(1 for slot in ranking.slots if slot not in before)
        return replace(ranking, funnel=ranking.funnel.then(f"graph +{added}", len(ranking.fused)), notes=notes)


def configured(settings: Settings) -> GraphExpansion | None:
    return GraphExpansion(settings.graph_seeds, settings.graph_max_chunks) if settings.graph else None


KIND = StageKind(configured, (Rung("+graph", "AGENTTY_RAG_GRAPH"),))

__all__ = ["KIND", "MAX_ADDED", "GraphExpansion", "Neighbour", "fused", "neighbours"]
