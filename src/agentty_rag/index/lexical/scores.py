"""One query's lexical evidence as a search reads it: a score per chunk and per file, asked for by slot, by file,
or as the best few, never as the arrays behind them (a backend may hold its scores in any form)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from agentty_rag.index.storage.views import FileGroups

FloatArray = npt.NDArray[np.float64]


def top_indices(scores: FloatArray, count: int) -> list[int]:
    """Indices of the ``count`` best positive scores (more when scores tie at the cut), best first."""
    if count <= 0:
        return []
    positive = np.flatnonzero(scores > 0)
    if len(positive) > count:
        threshold = np.partition(scores[positive], len(positive) - count)[len(positive) - count]
        positive = positive[scores[positive] >= threshold]
    order = positive[np.argsort(-scores[positive], kind="stable")]
    return [int(i) for i in order]


def relative(scores: FloatArray) -> FloatArray:
    """Scores divided by the best (0 to 1)."""
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else scores


class LexicalScores:
    """BM25 of every chunk slot and of every file of ``groups`` (0 where a file was not scored) for one query.

    Args:
        chunks: a score per slot.
        files: a score per file of ``groups``.
        groups: which file each chunk comes from.
    """

    __slots__ = ("_chunks", "_files", "groups")

    def __init__(self, chunks: FloatArray, files: FloatArray, groups: FileGroups) -> None:
        self._chunks = chunks
        self._files = files
        self.groups = groups

    def __contains__(self, slot: int) -> bool:
        """Whether the scores cover ``slot`` (a slot given before they were worked out)."""
        return 0 <= slot < len(self._chunks)

    def of(self, slot: int) -> float:
        """The chunk's score (0 for a slot the scores do not cover)."""
        return float(self._chunks[slot]) if slot in self else 0.0

    def at(self, slots: npt.NDArray[np.integer[Any]] | Sequence[int]) -> FloatArray:
        """The scores of ``slots``, in their order (0 for a slot the scores do not cover)."""
        asked = np.asarray(slots, np.int64)
        covered = (asked >= 0) & (asked < len(self._chunks))
        if covered.all():
            return self._chunks[asked]
        scores = np.zeros(len(asked), np.float64)
        scores[covered] = self._chunks[asked[covered]]
        return scores

    def best(self, count: int) -> list[int]:
        """The ``count`` best-scoring slots (more when scores tie at the cut), best first; none scoring 0."""
        return top_indices(self._chunks, count)

    def leg(self, count: int) -> list[tuple[int, float]]:
        """The lexical leg: (slot, score) of the ``count`` best chunks (``best``)."""
        return [(slot, float(self._chunks[slot])) for slot in self.best(count)]

    @property
    def scores_files(self) -> bool:
        """Whether any file scored (the files were asked for, and some file holds a query term)."""
        return bool(self._files.any())

    def of_file(self, file: int) -> float:
        """The file's score (0 for a file the scores do not cover)."""
        return float(self._files[file]) if 0 <= file < len(self._files) else 0.0

    def best_files(self, count: int) -> list[int]:
        """The ``count`` best-scoring files, as ``best``."""
        return top_indices(self._files, count)

    def files_relative(self) -> FloatArray:
        """Every file's score relative to the best file's (0 to 1)."""
        return relative(self._files)

    def within(self, allowed: npt.NDArray[np.bool_]) -> LexicalScores:
        """The scores with chunks outside ``allowed`` (and files with no allowed chunk) at 0 (changed in place)."""
        chunk_scores, file_scores, groups = self._chunks, self._files, self.groups
        chunk_scores[: len(allowed)] *= allowed[: len(chunk_scores)]
        chunk_scores[len(allowed) :] = 0
        admitted = np.zeros(len(groups.refs), bool)
        in_mask = groups.of_slot[np.flatnonzero(allowed[: len(groups.of_slot)])]
        admitted[in_mask[in_mask >= 0]] = True
        file_scores *= admitted
        return LexicalScores(chunk_scores, file_scores, groups)

    def replaced(self, chunks: Mapping[int, float], files: Mapping[int, float]) -> LexicalScores:
        """A copy in which the chunks and files named score as given (each one the scores cover)."""
        chunk_scores = self._chunks.copy()
        for slot, score in chunks.items():
            chunk_scores[slot] = score
        file_scores = self._files
        if files:
            file_scores = file_scores.copy()
            for file, score in files.items():
                file_scores[file] = score
        return LexicalScores(chunk_scores, file_scores, self.groups)


__all__ = ["LexicalScores", "relative", "top_indices"]
