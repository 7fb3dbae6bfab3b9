"""A Qdrant server that does not answer leaves the search to the local index, and the result says so.

The code index on a server (``AGENTTY_QDRANT_URL``) also keeps its postings in memory, read from the
database's term lists as the SQLite backend would hold them, but never written (``SqliteLexical(kept=False)``):
the database is the truth either way, so the local answer is the same BM25. Every question goes to the
server first; when it fails (refused, no answer within ``AGENTTY_QDRANT_TIMEOUT_MS``, an error status) the
local postings answer, and the next result's header carries one note: ``qdrant unreachable (connection
refused at 127.0.0.1:6333): answered from the local index``. The server then rests (``collection.Reach``):
until ``AGENTTY_QDRANT_RETRY_S`` has passed, every question is answered locally at once, and the first one
after that asks the server again.

A write the server missed (a patch, a build, the check at load) leaves the collection behind the database:
the first question the server answers again first makes the collection hold the current state (its marker
says whether it must be written anew).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import BackendUnreachable
from agentty_rag.index.lexical.chunk_terms import FileLayout
from agentty_rag.index.lexical.protocol import FieldTerms, IntArray, LexicalBuild, LexicalQuery, TextTerms
from agentty_rag.index.lexical.sqlite import SqliteLexical
from agentty_rag.index.qdrant.collection import Reach
from agentty_rag.index.qdrant.lexical import QdrantLexical
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.notes import Notes
from agentty_rag.index.storage.store import Store
from agentty_rag.index.storage.views import FileGroups

T = TypeVar("T")
FloatArray = npt.NDArray[np.float64]


class ServedLexical:
    """A ``LexicalIndex`` on a Qdrant server, answered from local postings while the server does not answer.

    Args:
        config: the index (``config.qdrant`` names the server).
        store: the database as it is now (opened on first use).
        reach: whether the server answers (shared by every index of the same collection in this process).
        notes: where the note for the next result goes.
        remote: the Qdrant side (tests give one over their own collection).
    """

    def __init__(
        self,
        config: IndexConfig,
        store: Callable[[], Store],
        reach: Reach,
        notes: Notes,
        remote: QdrantLexical | None = None,
    ) -> None:
        self.field_names = config.field_names
        self.remote = remote if remote is not None else QdrantLexical(config, store)
        self.local = SqliteLexical(config.field_names, store, kept=False)
        self.reach = reach
        self._where = config.qdrant.describe() if config.qdrant is not None else "qdrant"
        self._notes = notes
        self._store = store
        self._behind = False  # a write the server missed: the collection may not hold the current state

    def describe(self) -> str:
        state = self.reach.state
        if state == "unreachable":
            state = f"unreachable ({self.reach.reason}); searches answer from the local index"
        return f"{self._where} — {state}"

    # -- the documents held (the same on both sides: kept in memory) ----------------------------------------

    @property
    def alive(self) -> npt.NDArray[np.bool_]:
        return self.local.alive

    @property
    def n_live(self) -> int:
        return self.local.n_live

    def live_slots(self) -> IntArray:
        return self.local.live_slots()

    # -- writing: the local postings always, the server when it answers --------------------------------------

    def load(self, store: Store, meta: Mapping[str, str]) -> None:
        self.local.load(store, meta)
        self._write(lambda: self.remote.load(store, meta))

    def builder(self) -> LexicalBuild:
        return _Build(self, self.local.builder(), self.remote.builder())

    def patch(
        self,
        store: Store,
        removed: Sequence[int],
        added: Sequence[tuple[int, Mapping[str, FieldTerms]]],
        n_terms: int,
        n_slots: int,
    ) -> bool:
        self.local.patch(store, removed, added, n_terms, n_slots)
        self._write(lambda: self.remote.patch(store, removed, added, n_terms, n_slots))
        return False

    def _write(self, write: Callable[[], object]) -> None:
        """A write to the server (its in-memory side is taken in even when the request fails)."""
        try:
            write()
        except BackendUnreachable:
            self._behind = True

    # -- questions: the server first, else the local postings -----------------------------------------------

    def _ask(self, remote: Callable[[], T], local: Callable[[], T]) -> T:
        try:
            if self._behind:
                self.remote.catch_up(self._store())
                self._behind = False
            return remote()
        except BackendUnreachable as error:
            self._notes.note(f"qdrant unreachable ({error}): answered from the local index")
            return local()

    def term_ids(self, terms: Iterable[str]) -> dict[str, int]:
        return self.local.term_ids(terms)

    def document_frequency(self, field: str, term: int) -> int:
        return self._ask(
            lambda: self.remote.document_frequency(field, term), lambda: self.local.document_frequency(field, term)
        )

    def holders(self, field: str, term: int) -> IntArray:
        return self._ask(lambda: self.remote.holders(field, term), lambda: self.local.holders(field, term))

    def score(self, query: LexicalQuery, slots: IntArray | None = None) -> FloatArray:
        return self._ask(lambda: self.remote.score(query, slots), lambda: self.local.score(query, slots))

    def score_files(self, query: LexicalQuery, groups: FileGroups) -> FloatArray:
        return self._ask(lambda: self.remote.score_files(query, groups), lambda: self.local.score_files(query, groups))

    def score_outside(self, text: TextTerms, query: LexicalQuery) -> float:
        return self._ask(lambda: self.remote.score_outside(text, query), lambda: self.local.score_outside(text, query))

    def score_file_outside(
        self, file: int, replaced: Mapping[int, TextTerms], query: LexicalQuery, groups: FileGroups
    ) -> float:
        return self._ask(
            lambda: self.remote.score_file_outside(file, replaced, query, groups),
            lambda: self.local.score_file_outside(file, replaced, query, groups),
        )


class _Build:
    """A full build into both sides; the server's part may fail (the collection is then behind)."""

    def __init__(self, index: ServedLexical, local: LexicalBuild, remote: LexicalBuild) -> None:
        self.index, self.local, self.remote = index, local, remote

    def add(self, first_slot: int, layout: FileLayout) -> None:
        self.local.add(first_slot, layout)
        self.remote.add(first_slot, layout)

    def finish(self, store: Store, n_terms: int, n_slots: int) -> None:
        self.local.finish(store, n_terms, n_slots)
        self.index._write(lambda: self.remote.finish(store, n_terms, n_slots))


__all__ = ["ServedLexical"]
