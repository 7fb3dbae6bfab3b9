"""The in-memory side of one index, kept equal to its database.

The BM25 postings, every file's row, the views searches read once per state, and the vectors of the active
embedding profile, all as of one database generation. The JSON mirror of the manifest is written after a
rebuild and, after a patch, only when asked (``flush_manifest``): a commit does not pay for it. Another
process's commit, a corrupt database, or files under ``.agentty/`` that cannot be used are met here:
reload, rebuild from nothing, or move to memory. Not thread-safe: the index's lock is held around every call.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import AgenttyError, IndexBusy, IndexCorrupt, IndexForeign, IndexFull, IndexUnwritable
from agentty_rag.index.lexical.backends import lexical_index
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.index.storage.location import Storage
from agentty_rag.index.storage.lock import exclusive
from agentty_rag.index.storage.manifest import meta_int, write_manifest
from agentty_rag.index.storage.notes import Notes
from agentty_rag.index.storage.store import FileRow, Store, dumps
from agentty_rag.index.storage.views import Views
from agentty_rag.index.vectors.base import Matrix, VectorStore
from agentty_rag.index.vectors.dense import EmbeddingProfile
from agentty_rag.index.vectors.stores import vector_backend
from agentty_rag.types import Chunk

log = logging.getLogger(__name__)

Mask = npt.NDArray[np.bool_]


class Mirror:
    """One index's state in memory, and the database it mirrors."""

    def __init__(self, config: IndexConfig, notes: Notes) -> None:
        self.config = config
        self.notes = notes
        self.storage = Storage(config, notes)
        self.lexical = lexical_index(config, self.store, notes)
        self.generation = -1
        self.files: dict[str, FileRow] = {}
        self.views = Views(self.storage.open, config.field_names)
        self.vector_backend = vector_backend(config.vector_store)
        self.vectors: VectorStore | None = None
        self.embedding_profile: EmbeddingProfile | None = None
        self.manifest_due = False  # a patch was committed since the JSON mirror was last written
        self._encoded: dict[str, tuple[FileRow, str]] = {}  # each file's JSON as the mirror last wrote it

    def store(self) -> Store:
        """The database, opened on first use."""
        return self.storage.open()

    def reload(self) -> None:
        """Load the in-memory index from the database (after open, or another process's commit): every table
        as of one committed state, read in one transaction (another process may commit meanwhile)."""
        store = self.store()
        with store.snapshot():
            self._load(store)

    def _load(self, store: Store) -> None:
        meta = store.meta()
        self.lexical = lexical_index(self.config, self.store, self.notes)
        self.generation = meta_int(meta, "generation")
        self.views.forget()
        if meta.get("profile", dumps(self.config.profile())) != dumps(self.config.profile()):
            # Built with other fields, chunking or tokenizer: unreadable as this configuration, and about to
            # be rebuilt (``needs_rebuild`` says why) — load nothing.
            self.files = {}
            return
        self.lexical.load(store, meta)
        self.files = store.files()
        if self.vectors is not None:
            self.vectors.load()

    def sync(self, reread: bool = True) -> None:
        """Make the in-memory index match the database; rebuild it when it is unreadable (``reread``: see
        ``recover``)."""
        try:
            if self.store().generation() != self.generation:
                self.reload()
        except IndexCorrupt as error:
            self.recover(error, reread)
        except IndexUnwritable as error:
            self.move_to_memory(error)

    def move_to_memory(self, error: Exception) -> None:
        """Keep the index in memory from now on (empty until the next update fills it)."""
        self.storage.move_to_memory(error)
        self.generation = -1
        self.reload()

    def recover(self, error: BaseException, reread: bool = True) -> None:
        """Throw away a corrupt database and start from an empty one (the next refresh rebuilds it).

        Under the update lock, and only after checking again: damage met while another process committed
        may be this process's view of two states at once, not damage on disk (the state is then read again,
        once: damage that also changed the stored generation would otherwise be read again forever).
        The database is emptied in place, never deleted from under another process that has it open."""
        name = self.config.name
        if not self.storage.on_disk:
            self._start_empty(error)
            return
        try:
            with exclusive(self.config.lock_path, self.config.lock_timeout_s):
                if reread and self._changed_since_loaded():
                    self.generation = -1
                    self.sync(reread=False)
                    return
                self._start_empty(error)
        except IndexBusy:  # another process is updating it: its commit is the next state to read
            self.notes.note(f"the {name} index looked damaged while another process updated it; reading it again")
            self.generation = -1
        except IndexFull as full:
            self.notes.note(f"the {name} index could not be read ({error}), and not rebuilt: {full}")
            self.generation = -1

    def _changed_since_loaded(self) -> bool:
        """Whether another process committed since this one loaded the index."""
        try:
            return self.generation >= 0 and self.store().generation() != self.generation
        except AgenttyError:
            return False

    def _start_empty(self, error: BaseException) -> None:
        name = self.config.name
        foreign = isinstance(error, IndexForeign)
        if foreign:
            self.notes.note(f"{error}: it is not used; rebuilding the {name} index from the working tree")
        else:
            self.notes.note(f"the {name} index could not be read ({error}); rebuilding the {name} index")
        self.storage.discard(foreign)
        self.generation = -1
        self.reload()

    def committed(
        self,
        store: Store,
        files: dict[str, FileRow],
        new_slots: list[int] | None = None,
        old_slots: list[int] | None = None,
        attributes: dict[int, tuple[str, str, str]] | None = None,
    ) -> None:
        """Take in an update this process committed (``new_slots``: the chunks a patch added, ``old_slots``
        those it deleted, ``attributes`` the new chunks' (source, ref, language); None: a rebuild)."""
        self.files = files if files is self.files else dict(files)
        self.generation = store.generation()
        if new_slots is None or attributes is None:
            self.views.forget()
        else:
            self.views.patched(old_slots or [], attributes, len(self.lexical.alive))
        if self.vectors is not None:
            self.vectors.load(new_slots)
        # A rebuild writes the JSON mirror at once; a patch only marks it due: at 50k files the mirror takes
        # tens of milliseconds to write, and the database is the truth (``flush_manifest``).
        self.manifest_due = True
        if new_slots is None:
            self.flush_manifest()

    def flush_manifest(self) -> None:
        """Write the JSON mirror of the manifest when a commit made it due (on status, close, a rebuild, and
        from the server's background reconciling)."""
        if not self.manifest_due:
            return
        self.manifest_due = False
        if self.storage.on_disk:
            embedding = self.embedding_profile.to_json() if self.embedding_profile else None
            write_manifest(self.config, self.store(), self.files, embedding, self.notes.warn, self._encoded)

    def use_embeddings(self, profile: EmbeddingProfile | None) -> None:
        """Search with vectors of this embedding profile (None: lexical only)."""
        if profile == self.embedding_profile:
            return
        self.embedding_profile = profile
        # The one place that makes the store of the vectors (its backend is the configuration's).
        self.vectors = None if profile is None else self.vector_backend(self.store, profile, self.config)
        # Vectors load with the index; choosing a profile never creates a database.
        if self.vectors is not None and not self.storage.never_built():
            self.sync()
            self.vectors.load()

    def import_vectors(self, other: Path) -> int:
        """Reuse the vectors of another index database (same profile, same embedded text); returns how many."""
        try:
            added = self.vector_backend.imported(self.store(), other)
        except AgenttyError as error:
            log.info("could not read vectors from %s: %s", other, error)
            return 0
        if self.vectors is not None:
            self.vectors.load()
        return added

    def unembedded(
        self, vectors: VectorStore, limit: int, definitions: bool | None = None
    ) -> list[tuple[int, str, Chunk]]:
        """(id, embed hash, chunk) of up to ``limit`` chunks ``vectors`` has no vector for (of ``definitions``:
        see ``VectorStore.missing``), in id order, with every other chunk whose embedded text is the same as
        one of theirs (one vector serves them all)."""
        ids = vectors.missing(limit, definitions)
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        same = f"c WHERE c.embed_hash IN (SELECT embed_hash FROM chunks WHERE slot IN ({marks})) ORDER BY c.slot"
        return self.store().chunks_where(same, ids)

    def vector_coverage(self) -> tuple[int, int]:
        """(live chunks with a vector, live chunks) for the active profile."""
        if self.vectors is None:
            return 0, self.lexical.n_live
        return self.vectors.coverage(np.flatnonzero(self.lexical.alive)), self.lexical.n_live

    def similarities(self, query: Matrix, allowed: Mask | None = None, hubness: float = 0.0) -> Matrix | None:
        """Every chunk slot's cosine similarity to ``query``, less ``hubness`` times the chunk's neighbourhood
        density (NaN where a chunk is not live, not ``allowed`` or has no vector); None when no profile is in
        use."""
        if self.vectors is None:
            return None
        alive = self.lexical.alive
        usable = alive.copy()
        if allowed is not None:
            m = min(len(usable), len(allowed))
            usable[:m] &= allowed[:m]
            usable[m:] = False
        ids = np.flatnonzero(usable)
        out = np.full(len(alive), np.nan, np.float32)
        out[ids] = self.vectors.similarities(query, ids)
        if hubness > 0:  # a chunk whose density is not known (no neighbours found yet) keeps its similarity
            out[ids] -= hubness * np.nan_to_num(self.vectors.densities(ids))
        return out

    def densities(self, slots: Sequence[int]) -> Matrix:
        """The neighbourhood density of each of ``slots`` (NaN: no vector, or no profile in use)."""
        ids = np.asarray(slots, np.intp)
        if self.vectors is None or not len(ids):
            return np.full(len(ids), np.nan, np.float32)
        order = np.argsort(ids)
        out = np.empty(len(ids), np.float32)
        out[order] = self.vectors.densities(ids[order])
        return out

    def keep_neighbourhoods(self) -> None:
        """Keep the vectors' neighbourhoods for the next process (``VectorStore.keep_neighbourhoods``)."""
        if self.vectors is not None:
            self.vectors.keep_neighbourhoods()


__all__ = ["Mirror"]
