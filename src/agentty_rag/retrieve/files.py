"""Evidence that adds up per file, and a result list that serves both kinds of question.

An agent opens files. A file that holds many passages about a question (the main module of a subsystem)
is more likely the answer than a small file with one strong passage, so each file is also scored as one
document (BM25 over the sum of its chunks, see ``LexicalIndex.score_files``) and by the sum of its best
chunks' scores. Those scores enter the file order (``rerank.rank_files``), and the best passage of a strong
file joins the candidates even when no single passage of it ranked high on its own.

Two orders come out of the reranker: the file order (files by their evidence, each led by its best passage)
and the passage order (passages by their own evidence). A question about a subsystem is answered by the
first, a description of one function by the second, and the query does not say which it is; so the result
takes the first ``lead`` hits of the file order and then alternates, a passage, a file, a passage... A long
query (an issue, a pasted log) starts with the passage order: a big file matches many of its words by
chance, so its file evidence is weaker.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from agentty_rag.index.lexical.scores import LexicalScores, relative, top_indices

T = TypeVar("T")

# How many files' best chunks join the candidates, how many best chunks a file's sum counts over.
FILE_POOL = 40
CHUNK_SUM_POOL = 100
# The hits the file order leads with, for a short query.
FILE_LEAD = 3


def best_chunk_of(files: Sequence[int], lexical: LexicalScores) -> dict[int, int]:
    """The best-scoring chunk slot of each of ``files`` by its lexical score (ties: the lowest slot; files with no
    scoring chunk are left out)."""
    best: dict[int, int] = {}
    for file in files:
        slots = lexical.groups.slots_of(file)
        if len(slots) == 0:
            continue
        scores = lexical.at(slots)
        top = int(np.argmax(scores))  # the first of equal maxima: slots are in order
        if scores[top] > 0:
            best[file] = int(slots[top])
    return best


def chunk_sums(
    chunk_scores: npt.NDArray[np.float64], file_of_slot: npt.NDArray[np.int32], n_files: int, pool: int
) -> npt.NDArray[np.float64]:
    """Each file's sum of scores over the ``pool`` best chunks, relative to the best file's (0 to 1)."""
    best = top_indices(chunk_scores, pool)
    return sums_by_file(best, chunk_scores[best], file_of_slot, n_files)


def sums_by_file(
    best: list[int], scores: npt.NDArray[np.float64], file_of_slot: npt.NDArray[np.int32], n_files: int
) -> npt.NDArray[np.float64]:
    """Each file's sum of the ``scores`` of the slots ``best``, relative to the best file's (0 to 1)."""
    if not best or n_files == 0:
        return np.zeros(n_files, np.float64)
    files = file_of_slot[best]
    keep = files >= 0
    sums = np.bincount(files[keep], weights=scores[keep], minlength=n_files).astype(np.float64)
    top = float(sums.max())
    return sums / top if top > 0 else sums


def merge_orders(by_file: Sequence[T], by_passage: Sequence[T], lead: int, key: Callable[[T], Hashable]) -> list[T]:
    """The first ``lead`` items of ``by_file``, then one of ``by_passage``, one of ``by_file`` and so on, each
    item once (``key`` identifies an item). With ``lead`` 0 the passage order starts."""
    out: list[T] = []
    taken: set[Hashable] = set()
    sources: dict[str, Iterator[T]] = {"file": iter(by_file), "passage": iter(by_passage)}
    total = len({key(item) for item in (*by_file, *by_passage)})
    step = 0
    while len(out) < total:
        turn = "file" if step < lead or (step - lead) % 2 == 1 else "passage"
        step += 1
        for item in sources[turn]:
            if key(item) not in taken:
                taken.add(key(item))
                out.append(item)
                break
        else:  # this order is used up: the other one finishes
            other = sources["passage" if turn == "file" else "file"]
            for item in other:
                if key(item) not in taken:
                    taken.add(key(item))
                    out.append(item)
    return out


__all__ = [
    "CHUNK_SUM_POOL",
    "FILE_LEAD",
    "FILE_POOL",
    "best_chunk_of",
    "chunk_sums",
    "merge_orders",
    "relative",
    "sums_by_file",
    "top_indices",
]
