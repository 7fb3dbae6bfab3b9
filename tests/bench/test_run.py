"""How a ranking is scored at file and passage level, checked against the definitions written out plainly:
a labeled file counts at the position of the first passage from it (passage level), or at its rank among the
distinct files of the ranking (file level)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.bench.datasets import Label, Query
from agentty_rag.bench.run import score_query
from agentty_rag.types import Chunk, Hit

FILES = ("a.py", "b.py", "pkg/a.py", "c.go")


def _chunk(path: str, start: int) -> Chunk:
    return Chunk("code", path, start, start + 9, f"text of {path} at {start}", "python", "function")


def _hits(chunks: list[Chunk]) -> list[Hit]:
    return [Hit(chunk, 0.0) for chunk in chunks]


def _first_passage_ndcg10(
    passages: list[tuple[str, int, int]], targets: list[tuple[str, int | None, int | None]]
) -> float:
    """NDCG@10 where a target counts at the position of the first passage from its file (inside its span)."""
    found = set()
    for path, lo, hi in targets:
        for position, (ref, start, end) in enumerate(passages[:10], 1):
            if ref == path and (lo is None or hi is None or not (end < lo or start > hi)):
                found.add(position)
                break
    ideal = sum(1 / math.log2(i + 1) for i in range(1, min(10, len(targets)) + 1))
    return sum(1 / math.log2(p + 1) for p in found) / ideal


def _distinct_file_ranks(passages: list[tuple[str, int, int]], gold: set[str]) -> dict[str, float]:
    """hit@1/5/10 and MRR@10 of the first gold file among the ranking's distinct files."""
    files = list(dict.fromkeys(ref for ref, _, _ in passages))[:10]
    rank = next((i for i, f in enumerate(files, 1) if f in gold), None)
    return {
        "hit@1": float(rank == 1),
        "hit@5": float(rank is not None and rank <= 5),
        "hit@10": float(rank is not None),
        "mrr": 1 / rank if rank else 0.0,
    }


rankings = st.lists(st.tuples(st.sampled_from(FILES), st.integers(1, 60)), max_size=12)
targets = st.lists(
    st.tuples(st.sampled_from(FILES), st.one_of(st.none(), st.integers(1, 60))),
    min_size=1,
    max_size=3,
    unique_by=lambda t: t[0],
)


@given(rankings, targets)
def test_passage_level_counts_a_labeled_file_at_its_first_passage(
    ranked: list[tuple[str, int]], wanted: list[tuple[str, int | None]]
) -> None:
    chunks = [_chunk(path, start) for path, start in ranked]
    spans = [(path, start, None if start is None else start + 5) for path, start in wanted]
    labels = tuple(Label.parse(path if lo is None else f"{path}:{lo}-{hi}", "code") for path, lo, hi in spans)
    score = score_query(Query("q", "x", labels), _hits(chunks), "passage", 0.0)
    passages = [(c.ref, c.start_line, c.end_line) for c in chunks]
    assert math.isclose(score.ndcg10, _first_passage_ndcg10(passages, spans), abs_tol=1e-12)


@given(rankings, targets)
def test_file_level_ranks_the_distinct_files(
    ranked: list[tuple[str, int]], wanted: list[tuple[str, int | None]]
) -> None:
    chunks = [_chunk(path, start) for path, start in ranked]
    labels = tuple(Label.parse(path, "code") for path, _ in wanted)
    score = score_query(Query("q", "x", labels), _hits(chunks), "file", 0.0)
    expected = _distinct_file_ranks([(c.ref, c.start_line, c.end_line) for c in chunks], {p for p, _ in wanted})
    assert score.rr == expected["mrr"]
    assert {f"hit@{k}": v for k, v in score.hit.items()} == {k: v for k, v in expected.items() if k != "mrr"}


def test_a_file_repeated_at_the_top_pushes_the_next_one_down_only_at_passage_level() -> None:
    chunks = [_chunk("a.py", 1), _chunk("a.py", 20), _chunk("b.py", 1)]
    query = Query("q", "x", (Label.parse("a.py", "code"), Label.parse("b.py", "code")))
    ideal = 1 + 1 / math.log2(3)
    assert math.isclose(score_query(query, _hits(chunks), "passage", 0.0).ndcg10, (1 + 1 / math.log2(4)) / ideal)
    assert math.isclose(score_query(query, _hits(chunks), "file", 0.0).ndcg10, 1.0)
    # a file of the same name in another folder is another file
    other = score_query(Query("q", "x", (Label.parse("a.py", "code"),)), _hits([_chunk("pkg/a.py", 1)]), "file", 0.0)
    assert other.rr == 0.0
