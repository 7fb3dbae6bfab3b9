"""One persisted, self-refreshing index over a set of sources (docs+skills+memory, or code).

``refresh()`` runs before each search: it scans (stat only), compares with the manifest, and re-indexes only
the files whose content changed — a file whose stamp changed but whose content hash did not costs nothing
but a stamp update. Past ``rebuild_fraction`` of the corpus changed, or when the chunking, tokenizer or
field layout changed, it rebuilds. Updates run under a lock file shared by every process on the workspace,
inside one SQLite transaction, so a reader never sees half an update and a killed writer leaves the
previous index.

``CorpusIndex`` is the facade: it holds the lock, and leaves the work to ``refresh`` (what changed, then
``update``: a rebuild or a patch, from what ``ingest`` reads), ``mirror`` (the in-memory index kept equal
to the database that ``storage`` opens), ``views`` (what searches read once per state), the lexical index
(a ``LexicalIndex``, read through ``lexical.search``), a ``VectorStore`` (the embeddings) and ``status``.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import AgenttyError, BackendUnavailable, IndexCorrupt
from agentty_rag.index.lexical.scores import LexicalScores
from agentty_rag.index.lexical.search import LexicalSearch
from agentty_rag.index.lexical.tokenize import Tokenizer
from agentty_rag.index.qdrant.origin import seeded_from
from agentty_rag.index.qdrant.publish import Published
from agentty_rag.index.qdrant.shared import Provenance
from agentty_rag.index.qdrant.start import SharedStart
from agentty_rag.index.storage.definition import IndexConfig, Progress
from agentty_rag.index.storage.freshness import Freshness
from agentty_rag.index.storage.manifest import Scan, diff, scan, stale_reason
from agentty_rag.index.storage.mirror import Mirror
from agentty_rag.index.storage.notes import Notes
from agentty_rag.index.storage.refresh import Parts, RefreshReport, partial_of, unfinished, update
from agentty_rag.index.storage.status import changes, indexed_files, skipped, status_of
from agentty_rag.index.storage.views import FileGroups
from agentty_rag.index.vectors.base import best_of, embed_text
from agentty_rag.index.vectors.dense import Embedder, EmbeddingProfile, of_shape
from agentty_rag.sources.walker import SkipReport
from agentty_rag.types import Chunk, FileStamp

log = logging.getLogger(__name__)

# Texts whose terms are remembered between searches.
_TOKENIZED_CACHE = 50_000


class CorpusIndex(LexicalSearch):
    """A persisted index with freshness checks. Thread-safe: one refresh or search at a time per process."""

    def __init__(self, config: IndexConfig) -> None:
        self.config = config
        self.field_names = config.field_names
        self.weights = {f.name: f.weight for f in config.fields}
        self._tokenizer = Tokenizer()
        self._lock = threading.RLock()
        self._turns = threading.Condition()  # counts the threads waiting in ``reading``
        self._waiting = 0
        self._notes = Notes()
        self._mirror = Mirror(config, self._notes)
        self._last_scan: Scan | None = None
        self.freshness = Freshness(config.sources)  # a scan per refresh, or a watcher's reports
        self._tokenized: dict[str, frozenset[str]] = {}
        self.last_refresh = RefreshReport()
        self.build_state = (0, 0)  # files done, files in all, while a rebuild runs (read without the lock)
        # (files indexed, files found) while a first build in parts runs (``refresh``'s batch); None: whole
        self.partial: tuple[int, int] | None = None
        self._partial_seen: int | None = None  # the generation ``partial`` was read at
        self.shared = None if config.shared is None else SharedStart(config.shared, config, self._notes)

    @contextlib.contextmanager
    def reading(self, timeout: float | None = None) -> Iterator[bool]:
        """Hold the index still: no refresh or search of another thread runs until the block ends.

        Yields whether the index was had within ``timeout`` seconds (None: wait as long as it takes, 0: only
        when it is free now); when it was not, the block must not use the index.
        """
        with self._turns:
            self._waiting += 1
        try:
            held = self._lock.acquire() if timeout is None else self._lock.acquire(timeout=max(0.0, timeout))
        finally:
            with self._turns:
                self._waiting -= 1
                self._turns.notify_all()
        try:
            yield held
        finally:
            if held:
                self._lock.release()

    def let_readers_in(self, timeout: float) -> None:
        """Wait (up to ``timeout`` seconds) until no thread waits for the index: a build in parts calls it
        between two parts, so a search that came during a part is answered before the next one starts."""
        with self._turns:
            self._turns.wait_for(lambda: self._waiting == 0, timeout)

    def take_notes(self) -> tuple[str, ...]:
        """What happened to the index since the last call (rebuilt after corruption, kept in memory).

        Never waits for the index lock: a request answering "still being built" reads them too."""
        return self._notes.take()

    def recover(self, error: IndexCorrupt) -> None:
        """Throw away an index found corrupt while searching it (the next refresh rebuilds it)."""
        with self._lock:
            self._mirror.recover(error)

    # -- freshness ------------------------------------------------------------------------------------------

    def preview(self) -> tuple[list[FileStamp], SkipReport]:
        """The files a build would read and what it would skip, from a scan only (nothing is written)."""
        with self._lock:
            found = scan(self.config.sources)
            return [found.stamps[key] for key in sorted(found.stamps)], found.skipped

    def needs_rebuild(self) -> str:
        """Why the stored index cannot be reused ("" when it can)."""
        return stale_reason(self._mirror.store().meta(), self.config)

    def needs_build(self) -> str:
        """Why the stored index must be built before it answers in full: ``needs_rebuild``, or a first build
        in parts that has not finished ("" when neither)."""
        meta = self._mirror.store().meta()
        return stale_reason(meta, self.config) or unfinished(meta)

    def refresh(
        self,
        force_rebuild: bool = False,
        build: bool = True,
        progress: Progress | None = None,
        full_scan: bool = False,
        ask_shared: bool = True,
        parts: Parts | None = None,
    ) -> RefreshReport:
        """Bring the index up to date with the files on disk; cheap when nothing changed.

        Args:
            force_rebuild: rebuild even when nothing changed.
            build: False for a caller that must not wait for a full build (a request of the server): when the
                update would be a rebuild, ``IndexNotBuilt`` is raised before any work is done.
            progress: told where the refresh is (the command line's bars): scanning, each file parsed, writing.
            full_scan: scan every file even when a watcher says what changed (the reconciling pass).
            ask_shared: a build may start from the shared index (False: the index is read as it is, for callers
                that must answer fast, such as the proactive hook).
            parts: build in parts, one part per call (a server's background build; None: at once): a search
                between two parts answers from the files indexed so far (``partial``).
        """
        started = time.perf_counter()
        tell = self._tracking(progress)
        # A build may start from the shared index (a server's request never does): read over the network
        # before the index lock is taken, so that no search waits on it.
        shared = self.shared if self.shared is not None and build and ask_shared and not force_rebuild else None
        download = shared.fetch(self._seeded_version()) if shared is not None else None
        with self._lock:
            self._mirror.sync()
            tell(0, 0, "scanning")
            try:
                seeded = shared.install(self._mirror, download, tell) if shared and download else 0
                reason = "rebuild requested" if force_rebuild else self._stored_index_problem()
                fresh, tokenizer = self.freshness, self._tokenizer
                report = update(self._mirror, fresh, reason, force_rebuild, build, full_scan, tokenizer, tell, parts)
                if seeded and not report.rebuilt:  # built from the files, with the shared index's vectors
                    report.rebuilt, report.reason = True, "started from the shared index"
                    report.rechunked_files += seeded
            finally:
                self._last_scan = self.freshness.last
            # The header is read again only while a build in parts runs, or after a commit: not per search.
            if self.partial is not None or self._mirror.generation != self._partial_seen:
                self.partial, self._partial_seen = self._read_partial(), self._mirror.generation
            if report.rebuilt:
                self.build_state = (report.rechunked_files, report.rechunked_files)
            if self.partial is not None:
                self.build_state = self.partial
            report.seconds = time.perf_counter() - started
            self.last_refresh = report
            return report

    def _read_partial(self) -> tuple[int, int] | None:
        """``partial_of`` the stored header (None when it cannot be read: the next refresh recovers it)."""
        try:
            return partial_of(self._mirror.store().meta())
        except AgenttyError:
            return None

    def _seeded_version(self) -> str | None:
        """The shared version the index was seeded from (None: none, or its header cannot be read now)."""
        with self._lock:
            if self._mirror.storage.never_built():
                return None
            try:
                self._mirror.sync()
                return seeded_from(self._mirror.store()).get("version")
            except AgenttyError:  # the refresh meets it too, and recovers
                return None

    def _tracking(self, progress: Progress | None) -> Progress:
        """``progress``, with the files parsed so far kept in ``build_state`` for requests that wait."""

        def tell(done: int, total: int, phase: str) -> None:
            if phase == "parsing":
                self.build_state = (done - 1, total)
            if progress is not None:
                progress(done, total, phase)

        return tell

    def _stored_index_problem(self) -> str:
        """``needs_rebuild``, with a corrupt header counted as a reason to rebuild."""
        try:
            return self.needs_rebuild()
        except IndexCorrupt as error:
            self._mirror.recover(error)
            return "index was unreadable"

    # -- the dense leg ----------------------------------------------------------------------------------

    def use_embeddings(self, profile: EmbeddingProfile | None) -> None:
        """Search with vectors of this embedding profile (None: lexical only)."""
        with self._lock:
            self._mirror.use_embeddings(profile)

    @property
    def embedding_profile(self) -> EmbeddingProfile | None:
        return self._mirror.embedding_profile

    def import_vectors(self, other: Path) -> int:
        """Reuse the vectors of another index database (same profile, same embedded text); returns how many."""
        with self._lock:
            return self._mirror.import_vectors(other)

    def vector_coverage(self) -> tuple[int, int]:
        """(live chunks with a vector, live chunks) for the active profile."""
        with self._lock:
            return self._mirror.vector_coverage()

    def embed_missing(
        self,
        embedder: Embedder,
        batch: int = 32,
        limit: int | None = None,
        progress: Progress | None = None,
        definitions: bool | None = None,
        stopped: Callable[[], bool] = lambda: False,
    ) -> int:
        """Embed live chunks that have no vector yet (at most ``limit``; of ``definitions``: every chunk when
        None, the code definitions only when True, the others when False); returns how many were embedded.
        Chunks whose embedded text is the same share one text of a request, and its vector. ``stopped`` is
        asked before each request (a closing server's job ends there).

        The network calls run without the index lock, so searches go on meanwhile.
        """
        vectors, profile = self._mirror.vectors, self._mirror.embedding_profile
        if vectors is None or profile is None:
            return 0
        done = 0
        while (limit is None or done < limit) and not stopped():
            with self._lock:
                self._mirror.sync()
                generation = self._mirror.generation
                wanted = batch if limit is None else min(batch, limit - done)
                missing = self._mirror.unembedded(vectors, wanted, definitions)
                have, live = self.vector_coverage()
                if not missing:
                    if have < live and definitions is None:
                        vectors.load()  # another process embedded them
                    return done
            texts: dict[str, str] = {}  # one text per embed hash, in slot order
            for _, text_hash, chunk in missing:
                texts.setdefault(text_hash, embed_text(chunk))
            embedded = embedder.embed(list(texts.values()), "document")
            of_shape(embedded, len(texts), profile.dimension)  # a batch unlike the probe fails, unkept
            row = {text_hash: i for i, text_hash in enumerate(texts)}
            with self._lock:
                hashes = [h for _, h, _ in missing]
                vectors.put([slot for slot, _, _ in missing], hashes, embedded[[row[h] for h in hashes]])
                if self._mirror.generation != generation:  # the slots may hold other chunks now
                    self._mirror.sync()
                    vectors.load()
            done += len(missing)
            if progress is not None:
                progress(*self.vector_coverage(), "embedding")
        return done

    def dense_search(
        self,
        vector: npt.NDArray[np.float32],
        pool: int,
        allowed: npt.NDArray[np.bool_] | None = None,
        hubness: float = 0.0,
    ) -> list[tuple[int, float]]:
        """The ``pool`` (allowed) slots most similar to ``vector``, best first, ties by slot."""
        similarities = self.dense_scores(vector, allowed, hubness)
        return [] if similarities is None else best_of(similarities, pool)

    def dense_scores(
        self,
        vector: npt.NDArray[np.float32],
        allowed: npt.NDArray[np.bool_] | None = None,
        hubness: float = 0.0,
    ) -> npt.NDArray[np.float32] | None:
        """Every chunk slot's cosine similarity to ``vector``, less ``hubness`` times the slot's neighbourhood
        density (``vectors.density``; NaN where a slot has no vector or is not ``allowed``); None when the index
        searches no vectors."""
        with self._lock:
            return self._mirror.similarities(vector, allowed, hubness)

    def find_densities(self) -> None:
        """Find every vector's neighbourhood density now, so that the dense leg's first search does not, and
        keep them for the next process."""
        with self._lock:
            self._mirror.densities(np.flatnonzero(self._mirror.lexical.alive).tolist())
            self._mirror.keep_neighbourhoods()

    def densities(self, slots: Sequence[int]) -> npt.NDArray[np.float32]:
        """The neighbourhood density of each of ``slots`` (NaN: no vector)."""
        with self._lock:
            return self._mirror.densities(slots)

    # -- searching ------------------------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Tokenizer:
        """How the index reads text into terms (a query is parsed with it once: ``retrieve.parsed``)."""
        return self._tokenizer

    def tokenize(self, text: str) -> list[str]:
        """Terms of ``text`` as a query (no keywords dropped)."""
        return self._tokenizer.tokenize(text)

    def term_set(self, text: str) -> frozenset[str]:
        """The distinct terms of ``text``, remembered: names and contexts of candidates recur from one search
        to the next."""
        cached = self._tokenized.get(text)
        if cached is None:
            if len(self._tokenized) >= _TOKENIZED_CACHE:
                self._tokenized.clear()
            cached = self._tokenized[text] = frozenset(self._tokenizer.tokenize(text))
        return cached

    def chunks(self, slots: Sequence[int]) -> dict[int, Chunk]:
        return {slot: chunk for slot, (chunk, _) in self._cached_rows(slots).items()}

    def chunk_term_ids(self, slots: Sequence[int]) -> dict[int, frozenset[int]]:
        """Every term id each chunk holds, over all fields."""
        return {slot: terms for slot, (_, terms) in self._cached_rows(slots).items()}

    def _cached_rows(self, slots: Sequence[int]) -> dict[int, tuple[Chunk, frozenset[int]]]:
        with self._lock:
            return self._mirror.views.rows(self._mirror.lexical, self._mirror.generation, slots)

    def file_groups(self) -> FileGroups:
        """Which file each chunk comes from (cached until the index changes)."""
        with self._lock:
            return self._mirror.views.file_groups(self._mirror.lexical.alive)

    def all_chunks(self) -> list[Chunk]:
        """Every live chunk, in slot order (for tools that sample the corpus)."""
        with self._lock:
            slots = self._mirror.lexical.live_slots().tolist()
            found = self._mirror.store().chunks(slots)
            return [found[s] for s in slots if s in found]

    def file_paths(self) -> list[str]:
        """Paths of the indexed files as the last scan found them, in key order (for tools that edit some)."""
        with self._lock:
            stamps = self._last_scan.stamps if self._last_scan is not None else {}
            return [stamps[key].path for key in sorted(self._mirror.files) if key in stamps]

    def allowed(self, key: str, keep: Callable[[str, str, str], bool]) -> npt.NDArray[np.bool_]:
        """A mask over slots of the chunks ``keep(source, ref, language)`` admits (cached per generation)."""
        with self._lock:
            return self._mirror.views.allowed(self._mirror.lexical.alive, key, keep)

    def holds(self, sources: tuple[str, ...]) -> bool:
        """Whether a live chunk of any of these source kinds is indexed (cached per generation)."""
        with self._lock:
            alive = self._mirror.lexical.alive
            mask = self._mirror.views.allowed(alive, f"holds {sources}", lambda source, _ref, _lang: source in sources)
            return bool((mask & alive).any())

    # -- reporting ------------------------------------------------------------------------------------------

    @property
    def n_chunks(self) -> int:
        return self._mirror.lexical.n_live

    @property
    def n_files(self) -> int:
        return indexed_files(self._mirror.files)

    def coverage(self) -> tuple[str, ...]:
        """What a file cap left out of the last scan, per source (``code covers 4,000 of 9,210 files: …``)."""
        return tuple(self._last_scan.selections) if self._last_scan is not None else ()

    def skipped(self) -> SkipReport:
        """What the last scan and the loads left out."""
        return skipped(self._mirror.files, self._last_scan)

    def status(self) -> dict[str, object]:
        """Files, chunks, last update, manifest and freshness, for ``agentty-rag status``."""
        with self._lock:
            if self._mirror.storage.never_built():
                # Reporting must not write: a workspace that was never indexed stays untouched.
                self._last_scan = scan(self.config.sources)
                count = len(self._last_scan.stamps)
                return self._status_of({}, False, f"no index yet: {count} file{'' if count == 1 else 's'} to index")
            try:
                self._mirror.sync()
                meta = self._mirror.store().meta()
                reason = self.needs_rebuild() or unfinished(meta)
            except IndexCorrupt as error:
                self._mirror.recover(error)
                meta, reason = {}, "index was unreadable"
            self._mirror.flush_manifest()
            self._last_scan = scan(self.config.sources)
            found = diff(self._mirror.files, self._last_scan)
            return self._status_of(meta, not reason and found.empty, reason or changes(found))

    def _status_of(self, meta: dict[str, str], fresh: bool, stale_reason: str) -> dict[str, object]:
        storage = self._mirror.storage.describe()
        files, scanned = self._mirror.files, self._last_scan
        record = status_of(self.config, files, scanned, self.n_chunks, storage, meta, fresh, stale_reason)
        backend = self._mirror.lexical.describe() if self.shared is None else self.shared.describe(self._mirror)
        return {**record, "freshness": self.freshness.describe(), "backend": backend}

    def flush_manifest(self) -> None:
        """Write the JSON mirror of the manifest if a patch left it behind the database."""
        with self._lock:
            self._mirror.flush_manifest()

    def publish(self, provenance: Provenance) -> Published:
        """Write this index to its shared collection (refresh and embed it first).

        Raises:
            BackendUnavailable: the index has no shared collection (no ``AGENTTY_QDRANT_URL``), or no extra.
            BackendUnreachable: the server did not answer.
        """
        if self.shared is None:
            raise BackendUnavailable("publishing needs the Qdrant backend with a server: set AGENTTY_QDRANT_URL")
        with self._lock:
            self._mirror.sync()
            return self.shared.publish(self._mirror, provenance)

    def close(self) -> None:
        with self._lock:
            self._mirror.flush_manifest()
            self._mirror.storage.close()
            if self.shared is not None:
                self.shared.close()


__all__ = ["CorpusIndex", "FileGroups", "IndexConfig", "LexicalScores", "RefreshReport"]
