"""Which leg to trust on a corpus: one probe searched three ways — by the lexical leg alone, by both legs
(hybrid), and with the dense leg leading — through the whole ranking pipeline, with the probe's answer unable
to give itself away; and the rule that turns many probes into a verdict.

A probe is a documented definition of the index: its first doc sentence is the question, its chunks are the
answer, and its doc text is hidden from every chunk that holds it, everywhere a search reads it
(``HiddenDocs``): the chunk's BM25 and its file's are worked out from the masked text against the index's
statistics, the reranker sees the masked chunk's terms and text, and the dense leg uses the masked text's
embedding in place of the stored vector. Each way of searching then runs the search's own default stages
(fusion, the reranker with the file order, the final cut), as a search would.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.lexical.scores import LexicalScores
from agentty_rag.index.vectors.dense import Vector
from agentty_rag.retrieve.fusion import DENSE_LED, HYBRID
from agentty_rag.retrieve.parsed import parse_query
from agentty_rag.retrieve.pipeline import Filters, Plan, search
from agentty_rag.types import Chunk, Hit

# Fewer usable probes than this say too little about a corpus: the hybrid search is kept.
MIN_PROBES = 16
# The smallest gain in MRR that counts, however steady: below it two ways of searching are the same.
MIN_GAIN = 0.01
# The probes' searches: as many passages as a tool call asks for by default.
PROBE_K = 10

# The lead of a verdict that keeps an index's searches to the lexical leg (beside ``fusion.HYBRID`` and
# ``fusion.DENSE_LED``).
LEXICAL = "lexical"


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
    """What the probes said: the MRR of each way of searching, the standard error of the chosen way's paired
    difference from the hybrid search, and which way the index's searches take (``lead``: ``lexical``,
    ``hybrid`` or ``dense-led``)."""

    probes: int
    mrr_lexical: float
    mrr_hybrid: float
    mrr_dense: float
    stderr: float
    lead: str = HYBRID

    @property
    def lexical(self) -> bool:
        """The index's searches stay lexical (the query is not embedded at all)."""
        return self.lead == LEXICAL

    def describe(self) -> str:
        """The verdict in a sentence, with its numbers."""
        numbers = (
            f"MRR lexical {self.mrr_lexical:.2f}, hybrid {self.mrr_hybrid:.2f}, dense-led {self.mrr_dense:.2f} "
            f"({self.probes} probes)"
        )
        if self.lead == LEXICAL:
            return f"dense leg not used for this corpus: self-check {numbers}"
        if self.lead == DENSE_LED:
            return f"dense leg leads for this corpus: self-check {numbers}"
        if self.probes < MIN_PROBES:
            return f"hybrid kept: too few documented definitions to check ({self.probes} probes)"
        if max(self.mrr_lexical, self.mrr_dense) > self.mrr_hybrid:
            return f"hybrid kept: self-check {numbers}, a difference within its standard error {self.stderr:.2f}"
        return f"hybrid kept: self-check {numbers}"


def reciprocal_rank(ranked: Iterable[int], answer: frozenset[int]) -> float:
    """1 / the position of the first slot of ``answer`` in ``ranked`` (0 when none is there)."""
    for position, slot in enumerate(ranked, start=1):
        if slot in answer:
            return 1.0 / position
    return 0.0


def paired_gain(pairs: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The mean of ``other - base`` over (base, other) pairs, and the standard error of that mean."""
    n = len(pairs)
    if n == 0:
        return 0.0, 0.0
    differences = [other - base for base, other in pairs]
    # fsum: correctly rounded, so the same pairs in any order give the same gain (a verdict near its threshold
    # must not turn on the order the probes came in)
    mean = math.fsum(differences) / n
    variance = math.fsum((d - mean) ** 2 for d in differences) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(variance / n)


def decide(ranks: Sequence[tuple[float, float, float]]) -> Verdict:
    """The verdict of (lexical, hybrid, dense-led) reciprocal ranks, one triple per probe.

    The hybrid search is the default. Another way is taken when there are at least ``MIN_PROBES`` probes and
    its MRR beats the hybrid one by more than one standard error of their paired difference (and by
    ``MIN_GAIN``): a gain larger than its own noise. When both others qualify, the larger gain wins.
    """
    n = len(ranks)
    if n == 0:
        return Verdict(0, 0.0, 0.0, 0.0, 0.0)
    lexical, hybrid, dense = (math.fsum(triple[i] for triple in ranks) / n for i in range(3))
    gains = {
        lead: paired_gain([(t[1], t[position]) for t in ranks]) for lead, position in ((LEXICAL, 0), (DENSE_LED, 2))
    }
    taken = [lead for lead, (gain, stderr) in gains.items() if n >= MIN_PROBES and gain > max(stderr, MIN_GAIN)]
    lead = max(taken, key=lambda name: (gains[name][0], name)) if taken else HYBRID
    # The standard error shown: the chosen way's, or that of the way closest to being chosen.
    nearest = lead if lead != HYBRID else max(gains, key=lambda name: (gains[name][0], name))
    return Verdict(n, lexical, hybrid, dense, gains[nearest][1], lead)


class HiddenDocs(CorpusIndex):
    """An index as a search would read it if a probe's doc text were not there: the chunks that held it (by
    slot) show their masked text and terms, score by it on the lexical leg (chunk and file), and by the masked
    text's vector on the dense leg. Everything else is the index's own (a view: nothing is copied or changed).
    """

    def __init__(self, index: CorpusIndex, masked: Mapping[int, Chunk], vectors: Mapping[int, Vector]) -> None:
        # A view: no state of its own beyond the mask; every other attribute is the index's (``__getattr__``).
        self._index = index
        self._masked = dict(masked)
        self._vectors = {slot: np.asarray(v, np.float32).reshape(-1) for slot, v in vectors.items()}
        groups = index.file_groups()
        self._files: dict[int, dict[int, Chunk]] = {}
        for slot, chunk in self._masked.items():
            file = int(groups.of_slot[slot]) if slot < len(groups.of_slot) else -1
            if file >= 0:
                self._files.setdefault(file, {})[slot] = chunk
        terms = {slot: index.chunk_terms(chunk) for slot, chunk in self._masked.items()}
        wanted = sorted({t for held in terms.values() for t in held})
        ids, _ = index.term_statistics(wanted) if wanted else ({}, {})
        self._term_ids = {slot: frozenset(ids[t] for t in held if t in ids) for slot, held in terms.items()}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def chunks(self, slots: Sequence[int]) -> dict[int, Chunk]:
        found = self._index.chunks(slots)
        return {slot: self._masked.get(slot, chunk) for slot, chunk in found.items()}

    def chunk_term_ids(self, slots: Sequence[int]) -> dict[int, frozenset[int]]:
        found = self._index.chunk_term_ids(slots)
        return {slot: self._term_ids.get(slot, ids) for slot, ids in found.items()}

    def lexical_scores(
        self, terms: Mapping[str, float], allowed: npt.NDArray[np.bool_] | None = None, files: bool = False
    ) -> LexicalScores:
        scores = self._index.lexical_scores(terms, allowed, files)
        chunks = {
            slot: self._index.score_outside(chunk, terms)
            for slot, chunk in self._masked.items()
            if slot in scores and _admits(allowed, slot)
        }
        by_file: dict[int, float] = {}
        if files:
            by_file = {
                file: self._index.score_file_outside(file, replaced, terms)
                for file, replaced in self._files.items()
                if scores.of_file(file) > 0
            }
        return scores.replaced(chunks, by_file)

    def dense_scores(
        self, vector: npt.NDArray[np.float32], allowed: npt.NDArray[np.bool_] | None = None, hubness: float = 0.0
    ) -> npt.NDArray[np.float32] | None:
        similarities = self._index.dense_scores(vector, allowed, hubness)
        if similarities is None:
            return None
        similarities = similarities.copy()
        query = np.asarray(vector, np.float32).reshape(-1)
        slots = [slot for slot in self._vectors if slot < len(similarities) and _admits(allowed, slot)]
        # the masked text's vector keeps the chunk's place: its neighbourhood is the stored vector's
        densities = self._index.densities(slots) if hubness > 0 else np.zeros(len(slots), np.float32)
        for slot, density in zip(slots, densities, strict=True):
            similarities[slot] = float(self._vectors[slot] @ query) - hubness * float(np.nan_to_num(density))
        return similarities


def _admits(allowed: npt.NDArray[np.bool_] | None, slot: int) -> bool:
    """Whether the filters' mask (None: no filter) admits the slot."""
    return allowed is None or (slot < len(allowed) and bool(allowed[slot]))


def answer_rank(hits: Sequence[Hit], answer: Sequence[Chunk]) -> float:
    """1 / the position of the first hit that shows part of an answer chunk (same file, overlapping lines);
    0 when none of the hits does."""
    for position, hit in enumerate(hits, start=1):
        for piece in hit.pieces:
            for chunk in answer:
                same = piece.ref == chunk.ref and piece.source == chunk.source
                if same and piece.start_line <= chunk.end_line and chunk.start_line <= piece.end_line:
                    return 1.0 / position
    return 0.0


def probe_ranks(
    index: CorpusIndex,
    probe: Probe,
    query: Vector,
    masked: Mapping[int, Vector],
    plan: Plan,
    embed: Callable[[str], Vector | None] | None = None,
) -> tuple[float, float, float]:
    """The reciprocal rank of the probe's answer searched by the lexical leg alone, by both legs, and with the
    dense leg leading, each through ``plan``'s stages, with the probe's doc text hidden (``HiddenDocs``)."""
    view = HiddenDocs(index, probe.masked, masked)
    answer = list(view.chunks(sorted(probe.answer)).values())
    parsed = parse_query(probe.query, index.tokenizer)  # read once for the three searches
    ranks = []
    for lead, vector in ((LEXICAL, None), (HYBRID, query), (DENSE_LED, query)):
        lead_plan = replace(plan, lead=HYBRID if lead == LEXICAL else lead)
        found = search(view, parsed, PROBE_K, Filters(), lead_plan, vector, embed if vector is not None else None)
        ranks.append(answer_rank(found.hits, answer))
    return ranks[0], ranks[1], ranks[2]


__all__ = [
    "LEXICAL",
    "MIN_GAIN",
    "MIN_PROBES",
    "PROBE_K",
    "HiddenDocs",
    "Probe",
    "Verdict",
    "answer_rank",
    "decide",
    "paired_gain",
    "probe_ranks",
    "reciprocal_rank",
]
