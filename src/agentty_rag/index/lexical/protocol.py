"""The lexical leg's seam: what an index of BM25 evidence does, whatever keeps it.

A backend holds the documents (chunks, numbered by *slot*) under their terms (numbered by id, the ids the
database's vocabulary gives), field by field, and answers three kinds of question: how to take in a build or a
patch, how a query scores (every slot, given candidate slots, files, a text that is not in the index), and
the statistics of terms (their ids, how many documents hold them). Statistics are always those of the live
documents, so a patched index scores like a fresh build of the same chunks.

The SQLite backend (``sqlite.SqliteLexical``) keeps postings in memory and their compacted form in
the ``.ragdb`` file; ``backends`` names every backend. Nothing outside ``index/`` sees a backend: a
search reads its scores through ``LexicalScores``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from agentty_rag.index.lexical.bm25 import K1, B

if TYPE_CHECKING:
    from agentty_rag.index.lexical.chunk_terms import FileLayout
    from agentty_rag.index.storage.store import Store
    from agentty_rag.index.storage.views import FileGroups

IntArray = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]

# One chunk's terms in one field: parallel arrays of term ids and their counts.
FieldTerms = tuple[IntArray, IntArray]
# A text outside the index: field -> term id -> count (terms the index does not know left out), and
# field -> length (every term counted).
TextTerms = tuple[Mapping[str, Mapping[int, int]], Mapping[str, float]]


@dataclass(frozen=True)
class LexicalQuery:
    """A query as a backend scores it.

    Args:
        terms: term id -> the weight of that query term (terms the index does not know left out).
        fields: field -> weight; a field missing or weighted 0 is not scored.
        k1, b: BM25's term-frequency saturation and length normalisation.
    """

    terms: Mapping[int, float]
    fields: Mapping[str, float]
    k1: float = K1
    b: float = B


class LexicalBuild(Protocol):
    """A full build's documents as they come, file by file, then written (inside the build's transaction)."""

    def add(self, first_slot: int, layout: FileLayout) -> None:
        """The chunks of one file, at slots ``first_slot`` onwards."""

    def finish(self, store: Store, n_terms: int, n_slots: int) -> None:
        """Write the build (``n_terms`` term ids, slots below ``n_slots``); the index then serves it."""


class LexicalIndex(Protocol):
    """BM25 over the weighted fields of every live chunk slot, patched as files change.

    Attributes:
        field_names: the indexed fields, in the order of the chunks' term blobs.
    """

    field_names: tuple[str, ...]

    def describe(self) -> str:
        """Where the postings are, for ``status`` (``local``; a Qdrant server, and whether it answered)."""

    # -- the documents held ---------------------------------------------------------------------------------

    @property
    def alive(self) -> npt.NDArray[np.bool_]:
        """A mask over every slot given so far: which hold a live chunk."""

    @property
    def n_live(self) -> int:
        """The number of live chunks."""

    def live_slots(self) -> IntArray:
        """The live slots, ascending."""

    # -- writing --------------------------------------------------------------------------------------------

    def load(self, store: Store, meta: Mapping[str, str]) -> None:
        """Take in the committed state of ``store`` (``meta``: its header), replacing what was held."""

    def builder(self) -> LexicalBuild:
        """A full build into this (empty) index."""

    def patch(
        self,
        store: Store,
        removed: Sequence[int],
        added: Sequence[tuple[int, Mapping[str, FieldTerms]]],
        n_terms: int,
        n_slots: int,
    ) -> bool:
        """Drop the chunks at ``removed`` and add each (slot, terms per field) of ``added``, inside the patch's
        transaction (``n_terms`` term ids and ``n_slots`` slots given so far, these included). True when what
        ``store`` holds of the index was written anew, covering every slot below ``n_slots``."""

    # -- term statistics ------------------------------------------------------------------------------------

    def term_ids(self, terms: Iterable[str]) -> dict[str, int]:
        """The ids of the terms the index knows."""

    def document_frequency(self, field: str, term: int) -> int:
        """How many live chunks hold ``term`` in ``field``."""

    def holders(self, field: str, term: int) -> IntArray:
        """The live slots holding ``term`` in ``field``."""

    # -- scoring --------------------------------------------------------------------------------------------

    def score(self, query: LexicalQuery, slots: IntArray | None = None) -> FloatArray:
        """BM25 of every slot (an array over all slots, dead ones 0), or of ``slots`` (in their order, each
        what it scores among all)."""

    def score_files(self, query: LexicalQuery, groups: FileGroups) -> FloatArray:
        """BM25 of each file of ``groups`` as one document (an array over the files; one with no live chunk
        scores 0)."""

    def score_outside(self, text: TextTerms, query: LexicalQuery) -> float:
        """What a chunk holding ``text`` would score, against the index's statistics."""

    def score_file_outside(
        self, file: int, replaced: Mapping[int, TextTerms], query: LexicalQuery, groups: FileGroups
    ) -> float:
        """What ``score_files`` would give ``file`` if its chunks at the slots of ``replaced`` held that text,
        against the index's statistics."""


__all__ = ["FieldTerms", "LexicalBuild", "LexicalIndex", "LexicalQuery", "TextTerms"]
