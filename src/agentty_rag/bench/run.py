"""Evaluate one configuration of the pipeline on labeled queries."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentty_rag.bench.datasets import Query, chunk_file_id
from agentty_rag.bench.metrics import gains_from_matches, hit_at, ndcg_at, percentile, recall_at, reciprocal_rank
from agentty_rag.types import Hit

Searcher = Callable[[str, int], Sequence[Hit]]


@dataclass
class QueryScore:
    id: str
    recall: dict[int, float]
    hit: dict[int, float]
    rr: float
    ndcg10: float
    ms: float
    first_rank: int | None


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


def score_query(query: Query, hits: Sequence[Hit], level: str, ms: float) -> QueryScore:
    matched = matches(query, hits, level)
    n_relevant = len({label.file_id for label in query.labels}) if level == "file" else len(query.labels)
    gains = gains_from_matches(matched)
    first = next((i + 1 for i, g in enumerate(gains) if g), None)
    return QueryScore(
        query.id,
        {k: recall_at(matched, n_relevant, k) for k in (1, 5, 10)},
        {k: hit_at(gains, k) for k in (1, 5, 10)},
        reciprocal_rank(gains),
        ndcg_at(gains, n_relevant, 10),
        ms,
        first,
    )


def evaluate(name: str, searcher: Searcher, queries: Sequence[Query], level: str, k: int = 10) -> RungResult:
    result = RungResult(name)
    for query in queries:
        started = time.perf_counter()
        hits = searcher(query.text, k)
        ms = (time.perf_counter() - started) * 1000
        result.scores.append(score_query(query, hits, level, ms))
    return result
