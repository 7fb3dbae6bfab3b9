"""Which leg to trust on a corpus: one probe ranked by the lexical leg alone and by the fusion, with the
probe's answer unable to give itself away, and the rule that turns many probes into a verdict.

A probe is a documented definition of the index: its first doc sentence is the question, its chunks are the
answer, and its doc text is hidden from every chunk that holds it, on both legs — the lexical leg scores the
masked text against the index's statistics (``CorpusIndex.score_outside``), the dense leg uses the masked
text's embedding in place of the stored vector. Both rankings come from the search's own fusion stage: with
the lexical leg alone it is the identity, with both it fuses them as a hybrid search would. The reranker and
the file order come after and are not part of the comparison: they read the stored terms of a chunk, which
the mask cannot reach.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from agentty_rag.index.dense import Vector
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.retrieve.candidates import analyse_query
from agentty_rag.retrieve.files import top_indices
from agentty_rag.retrieve.pipeline import candidate_pool
from agentty_rag.retrieve.ranking import Ranking, Request, Stage
from agentty_rag.types import Chunk, Funnel

# Fewer usable probes than this say too little about a corpus: the hybrid search is kept.
MIN_PROBES = 16
# The smallest loss in MRR that counts, however steady: below it the two rankings are the same.
MIN_LOSS = 0.01


@dataclass(frozen=True)
class Probe:
    """One documented definition as a question.

    Args:
        query: the first sentence of its docs.
        answer: the slots of the definition's chunks (any of them answers).
        masked: each chunk that held the doc text, by slot, with that text hidden.
        held: (slot, embed hash) of each chunk as it is stored: a later index that no longer holds them has
            changed under the probe.
    """

    query: str
    answer: frozenset[int]
    masked: Mapping[int, Chunk]
    held: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class Verdict:
    """What the probes said: the MRR of each ranking, the standard error of their paired difference, and
    whether the index's searches stay lexical."""

    probes: int
    mrr_lexical: float
    mrr_hybrid: float
    stderr: float
    lexical: bool

    def describe(self) -> str:
        """The verdict in a sentence, with its numbers."""
        numbers = f"MRR lexical {self.mrr_lexical:.2f}, hybrid {self.mrr_hybrid:.2f} ({self.probes} probes)"
        if self.lexical:
            return f"dense leg not used for this corpus: self-check {numbers}"
        if self.probes < MIN_PROBES:
            return f"hybrid kept: too few documented definitions to check ({self.probes} probes)"
        if self.mrr_lexical > self.mrr_hybrid:
            return f"hybrid kept: self-check {numbers}, a loss within its standard error {self.stderr:.2f}"
        return f"hybrid kept: self-check {numbers}"


def reciprocal_rank(ranked: Iterable[int], answer: frozenset[int]) -> float:
    """1 / the position of the first slot of ``answer`` in ``ranked`` (0 when none is there)."""
    for position, slot in enumerate(ranked, start=1):
        if slot in answer:
            return 1.0 / position
    return 0.0


def decide(pairs: Sequence[tuple[float, float]]) -> Verdict:
    """The verdict of (lexical, hybrid) reciprocal ranks, one pair per probe.

    The searches stay lexical when there are at least ``MIN_PROBES`` probes and the lexical ranking's MRR
    beats the fused one's by more than one standard error of their paired difference (and by ``MIN_LOSS``):
    a loss larger than its own noise. Fewer probes, or a smaller loss, keep the hybrid search.
    """
    n = len(pairs)
    if n == 0:
        return Verdict(0, 0.0, 0.0, 0.0, False)
    lexical = sum(lex for lex, _ in pairs) / n
    hybrid = sum(hyb for _, hyb in pairs) / n
    differences = [lex - hyb for lex, hyb in pairs]
    mean = lexical - hybrid
    variance = sum((d - mean) ** 2 for d in differences) / (n - 1) if n > 1 else 0.0
    stderr = math.sqrt(variance / n)
    loses = n >= MIN_PROBES and mean > max(stderr, MIN_LOSS)
    return Verdict(n, lexical, hybrid, stderr, loses)


def masked_dense(
    found: Sequence[tuple[int, float]], query: Vector, masked: Mapping[int, Vector], pool: int
) -> list[tuple[int, float]]:
    """The dense leg's list with each masked chunk scored by its masked vector, best first (ties by slot).

    ``found`` must hold the best ``pool + len(masked)`` slots, so that the ``pool`` best unmasked ones are in it.
    """
    kept = [(slot, score) for slot, score in found if slot not in masked]
    kept += [(slot, float(vector.reshape(-1) @ query.reshape(-1))) for slot, vector in masked.items()]
    kept.sort(key=lambda pair: (-pair[1], pair[0]))
    return kept[:pool]


def probe_ranks(
    index: CorpusIndex, probe: Probe, query: Vector, masked: Mapping[int, Vector], fuse: Stage, k: int = 10
) -> tuple[float, float]:
    """The reciprocal rank of the probe's answer in the lexical leg and in the fused legs (``fuse``: the
    search's fusion stage), with its doc text hidden from both."""
    analysis = analyse_query(index, probe.query, code=index.config.scoring.rank_files)
    lexical = index.lexical_scores(analysis.weights)
    scores = lexical.chunks.copy()
    for slot, chunk in probe.masked.items():
        if slot < len(scores):
            scores[slot] = index.score_outside(chunk, analysis.weights)
    pool = candidate_pool(k)
    lexical_leg = [(slot, float(scores[slot])) for slot in top_indices(scores, pool)]
    dense_leg = masked_dense(index.dense_search(query, pool + len(masked)), query, masked, pool)
    alone = Request(
        index, probe.query, k, analysis, replace(lexical, chunks=scores), {"lexical": lexical_leg}, pool=pool
    )
    both = replace(alone, legs={"lexical": lexical_leg, "dense": dense_leg})
    ranks = []
    for request in (alone, both):
        fused = fuse.run(Ranking(request, Funnel())).fused
        ranks.append(reciprocal_rank((slot for slot, _ in fused), probe.answer))
    return ranks[0], ranks[1]


__all__ = ["MIN_LOSS", "MIN_PROBES", "Probe", "Verdict", "decide", "masked_dense", "probe_ranks", "reciprocal_rank"]
