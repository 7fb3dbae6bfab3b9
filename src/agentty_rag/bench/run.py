"""Evaluate one configuration of the pipeline on labeled queries."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentty_rag.bench.datasets import Query, chunk_file_id
from agentty_rag.bench.metrics import (
    expected_tokens,
    gains_from_matches,
    hit_at,
    ndcg_at,
    percentile,
    recall_at,
    recall_within,
    reciprocal_rank,
    tokens_to_first_hit,
)
from agentty_rag.types import Hit

# The token budgets recall is measured within (semble's), by their keys in a summary, and every token figure.
TOKEN_BUDGETS = (("tokens@500", 500), ("tokens@1k", 1000), ("tokens@2k", 2000), ("tokens@4k", 4000))
TOKEN_FIGURES = (*(key for key, _ in TOKEN_BUDGETS), "expected_tokens")


@dataclass(frozen=True)
class Reading:
    """The text an agent receives for one search, as far as its cost goes: the passages it shows, in order,
    and where each one's block ends in it (a character offset, header included)."""

    hits: Sequence[Hit]
    ends: Sequence[int]


@dataclass(frozen=True)
class Searched:
    """One search as rag-bench scores it: the ranked hits (recall, MRR, nDCG) and, where the rung has text an
    agent reads, how to get it: made after the search is timed, so a ranking's latency stays its own."""

    hits: Sequence[Hit]
    read: Callable[[], Reading] | None = None


Searcher = Callable[[str, int], Searched]


@dataclass
class QueryScore:
    id: str
    recall: dict[int, float]
    hit: dict[int, float]
    rr: float
    ndcg10: float
    ms: float
    first_rank: int | None
    tokens_to_hit: float | None = None  # read to the end of the first found passage; None when none is found
    tokens_measured: bool = False  # False where there is no text to read (the baseline)


@dataclass
class RungResult:
    name: str
    scores: list[QueryScore] = field(default_factory=list)

    def mean(self, key: Callable[[QueryScore], float]) -> float:
        return sum(key(s) for s in self.scores) / len(self.scores) if self.scores else 0.0

    def summary(self) -> dict[str, float]:
        times = [s.ms for s in self.scores]
        return {
            "recall@1": self.mean(lambda s: s.recall[1]),
            "recall@5": self.mean(lambda s: s.recall[5]),
            "recall@10": self.mean(lambda s: s.recall[10]),
            "hit@1": self.mean(lambda s: s.hit[1]),
            "hit@5": self.mean(lambda s: s.hit[5]),
            "hit@10": self.mean(lambda s: s.hit[10]),
            "mrr": self.mean(lambda s: s.rr),
            "ndcg@10": self.mean(lambda s: s.ndcg10),
            "ms_p50": percentile(times, 0.5),
            "ms_p95": percentile(times, 0.95),
            **self.token_figures(),
        }

    def token_figures(self) -> dict[str, float]:
        """Recall within each token budget and the expected tokens per query; none where tokens were not
        measured."""
        if not self.scores or not all(s.tokens_measured for s in self.scores):
            return {}
        tokens = [s.tokens_to_hit for s in self.scores]
        return {
            **{key: recall_within(tokens, budget) for key, budget in TOKEN_BUDGETS},
            "expected_tokens": expected_tokens(tokens),
        }


def matches(query: Query, hits: Sequence[Hit], level: str) -> list[list[int]]:
    """For each rank, the indices of the query's relevant items the hit there matches.

    At file level, labels and chunks are compared by file and the ranks are those of the distinct files: a
    labeled file counts at its rank among the files of the ranking. At passage level the ranks are the
    passages' own, and an item counts at the first passage that matches it: a whole-file label at the first
    passage from its file.
    """
    if level == "file":
        files = list(dict.fromkeys(label.file_id for label in query.labels))
        ranked_files = list(dict.fromkeys(chunk_file_id(h.chunk) for h in hits))
        return [[i for i, f in enumerate(files) if f == file] for file in ranked_files]
    return [[i for i, label in enumerate(query.labels) if label.matches_passage(h, query.answers)] for h in hits]


def found_passages(query: Query, hits: Sequence[Hit], level: str) -> list[bool]:
    """For each passage, whether it counts as found: at file level one from a labeled file, at passage level
    one that matches a label (as ``matches`` judges them)."""
    if level == "file":
        files = {label.file_id for label in query.labels}
        return [chunk_file_id(h.chunk) in files for h in hits]
    return [bool(matched) for matched in matches(query, hits, level)]


def score_query(query: Query, hits: Sequence[Hit], level: str, ms: float, reading: Reading | None = None) -> QueryScore:
    """The ranking ``hits``' figures, and with ``reading`` (the text an agent receives) the tokens it reads to
    the first found passage."""
    matched = matches(query, hits, level)
    n_relevant = len({label.file_id for label in query.labels}) if level == "file" else len(query.labels)
    gains = gains_from_matches(matched)
    first = next((i + 1 for i, g in enumerate(gains) if g), None)
    tokens = None if reading is None else tokens_to_first_hit(reading.ends, found_passages(query, reading.hits, level))
    return QueryScore(
        query.id,
        {k: recall_at(matched, n_relevant, k) for k in (1, 5, 10)},
        {k: hit_at(gains, k) for k in (1, 5, 10)},
        reciprocal_rank(gains),
        ndcg_at(gains, n_relevant, 10),
        ms,
        first,
        tokens,
        reading is not None,
    )


def evaluate(name: str, searcher: Searcher, queries: Sequence[Query], level: str, k: int = 10) -> RungResult:
    result = RungResult(name)
    for query in queries:
        started = time.perf_counter()
        searched = searcher(query.text, k)
        ms = (time.perf_counter() - started) * 1000
        reading = searched.read() if searched.read is not None else None
        result.scores.append(score_query(query, searched.hits, level, ms, reading))
    return result
