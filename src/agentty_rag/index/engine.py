"""One persisted, self-refreshing index over a set of sources (docs+skills+memory, or code).

``refresh()`` runs before each search: it scans (stat only), compares with the manifest, and re-indexes only
the files whose content changed — a file whose stamp changed but whose content hash did not costs nothing
but a stamp update. Past ``rebuild_fraction`` of the corpus changed, or when the chunking, tokenizer or
field layout changed, it rebuilds. Updates run under a lock file shared by every process on the workspace,
inside one SQLite transaction, so a reader never sees half an update and a killed writer leaves the
previous index.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
import xxhash

from agentty_rag.chunking import ChunkingConfig, chunk_document
from agentty_rag.errors import AgenttyError, IndexCorrupt, IndexNotBuilt, IndexUnwritable
from agentty_rag.fsguard import UnsafeFile, check_state_dir, open_private, read_regular, write_private
from agentty_rag.index.bm25 import idf as bm25_idf
from agentty_rag.index.dense import DenseIndex, Embedder, EmbeddingProfile
from agentty_rag.index.fields import DOCS_SCORING, FIELDS_VERSION, FILE_WIDE_FIELDS, FieldSpec, Scoring, field_terms
from agentty_rag.index.lexical import FieldTerms, GroupStatistics, LexicalIndex, Segment
from agentty_rag.index.lock import exclusive, unfinished_update
from agentty_rag.index.store import (
    SCHEMA_VERSION,
    FileRow,
    Store,
    decode_terms,
    dumps,
    embed_text,
    encode_terms,
)
from agentty_rag.index.tokenize import TOKENIZER_VERSION, Tokenizer
from agentty_rag.sources.base import Source
from agentty_rag.sources.secrets import redact
from agentty_rag.sources.walker import REPORT_PATHS_PER_REASON, SkipReport
from agentty_rag.types import Chunk, Document, FileStamp

log = logging.getLogger(__name__)

MANIFEST_FORMAT = "agentty-rag-manifest"
# Compact the delta into the base segment when it holds more than this share of the base's postings.
_COMPACT_DELTA_SHARE = 0.10
_COMPACT_MIN_DELTA = 20_000  # postings
# Chunk rows kept in memory between searches (a few MB), and texts whose terms are remembered.
_ROW_CACHE = 8192
_TOKENIZED_CACHE = 50_000


# (done, total, phase): phase is "scanning", "parsing", "writing" or "embedding".
Progress = Callable[[int, int, str], None]
_T = TypeVar("_T")


@dataclass(frozen=True)
class IndexConfig:
    """Everything that defines one index.

    Args:
        name: ``docs`` or ``code``; names the files ``rag_<name>.ragdb`` and ``.meta.json``.
        state_dir: the workspace's ``.agentty`` folder.
        sources: where the files come from.
        fields: indexed fields and their weights.
        chunking: chunk sizes (part of the manifest: a change rebuilds).
        roots: folders recorded in the manifest (workspace root, docs root ...).
        rebuild_fraction: share of changed files above which an update is a rebuild.
        lock_timeout_s: how long to wait for another process's update.
        persist: False keeps the index in memory only (nothing under ``.agentty/``): for sources that must
            never be written to disk, such as other MCP servers' resources.
        scoring: BM25 parameters of its chunks and files (query time only: a change needs no rebuild).
    """

    name: str
    state_dir: Path
    sources: tuple[Source, ...]
    fields: tuple[FieldSpec, ...]
    chunking: ChunkingConfig
    roots: dict[str, str] = field(default_factory=dict)
    rebuild_fraction: float = 0.2
    lock_timeout_s: float = 30.0
    persist: bool = True
    scoring: Scoring = DOCS_SCORING

    @property
    def db_path(self) -> Path:
        return self.state_dir / f"rag_{self.name}.ragdb"

    @property
    def manifest_path(self) -> Path:
        return self.state_dir / f"rag_{self.name}.ragdb.meta.json"

    @property
    def lock_path(self) -> Path:
        return self.state_dir / f"rag_{self.name}.lock"

    def profile(self) -> dict[str, object]:
        """What the stored index must match to be reused as is."""
        return {
            "schema_version": SCHEMA_VERSION,
            "tokenizer_version": TOKENIZER_VERSION,
            "chunking": self.chunking.fingerprint(),
            "fields": [f.name for f in self.fields],
            "fields_version": FIELDS_VERSION,
        }


@dataclass
class RefreshReport:
    """What one refresh did."""

    added: int = 0
    changed: int = 0
    removed: int = 0
    touched: int = 0  # stamp changed, content did not: no re-indexing
    rechunked_files: int = 0
    chunks_added: int = 0
    chunks_removed: int = 0
    rebuilt: bool = False
    reason: str = ""
    seconds: float = 0.0

    @property
    def changed_anything(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.touched or self.rebuilt)


@dataclass
class _Scan:
    stamps: dict[str, FileStamp]
    owners: dict[str, Source]
    skipped: SkipReport


@dataclass
class _Diff:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    stamp_changed: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.stamp_changed)


@dataclass
class _Prepared:
    """A file read, fingerprinted and cut into chunks (or the reason it was skipped)."""

    key: str
    stamp: FileStamp
    hash: str
    chunks: list[Chunk]
    skip: str = ""
    redacted: int = 0  # secrets replaced in its text

    def row(self) -> FileRow:
        return FileRow(self.stamp.size, self.stamp.mtime_ns, self.hash, len(self.chunks), self.skip, self.redacted)


@dataclass(frozen=True)
class FileGroups:
    """The files of an index: ``refs`` in path order, each slot's position in it (-1: no chunk there), and
    each file's slots: ``slots[starts[f]:starts[f + 1]]``, in slot order."""

    of_slot: npt.NDArray[np.int32]
    refs: tuple[str, ...]
    slots: npt.NDArray[np.int32]
    starts: npt.NDArray[np.int64]

    def slots_of(self, file: int) -> npt.NDArray[np.int32]:
        return self.slots[int(self.starts[file]) : int(self.starts[file + 1])]


@dataclass(frozen=True)
class LexicalScores:
    """One query's BM25 evidence: a score per chunk slot and a score per file (the files of ``groups``)."""

    chunks: npt.NDArray[np.float64]
    files: npt.NDArray[np.float64]
    groups: FileGroups


class CorpusIndex:
    """A persisted index with freshness checks. Thread-safe: one refresh or search at a time per process."""

    def __init__(self, config: IndexConfig) -> None:
        self.config = config
        self.field_names = tuple(f.name for f in config.fields)
        self.weights = {f.name: f.weight for f in config.fields}
        self._tokenizer = Tokenizer()
        self.lock = threading.RLock()
        self._store: Store | None = None
        self._lexical = LexicalIndex(self.field_names)
        self._generation = -1
        self._files: dict[str, FileRow] = {}
        self._last_scan: _Scan | None = None
        self._attributes: dict[int, tuple[str, str, str]] | None = None
        self._groups: FileGroups | None = None
        self._group_stats: GroupStatistics | None = None
        self._rows: OrderedDict[int, tuple[Chunk, frozenset[int]]] = OrderedDict()
        self._rows_generation = -1
        self._tokenized: dict[str, frozenset[str]] = {}
        self._masks: dict[str, npt.NDArray[np.bool_]] = {}
        self.warnings: list[str] = []
        self.last_refresh = RefreshReport()
        self.progress: Progress | None = None
        self.build_state = (0, 0)  # files done, files in all, while a rebuild runs (read without the lock)
        self._dense: DenseIndex | None = None
        self.embedding_profile: EmbeddingProfile | None = None
        self.on_disk = config.persist  # False once the files under .agentty/ turned out unusable
        self.storage_problem = ""  # why the index lives in memory although it should be on disk
        self._notes: list[str] = []  # what a search should tell about the index (rebuilt, kept in memory)
        self._notes_lock = threading.Lock()

    # -- opening --------------------------------------------------------------------------------------------

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)
            log.warning("%s", message)

    def _note(self, message: str) -> None:
        """Warn once, and keep the message for the next search's result."""
        self._warn(message)
        with self._notes_lock:
            self._notes.append(message)

    def take_notes(self) -> tuple[str, ...]:
        """What happened to the index since the last call (rebuilt after corruption, kept in memory).

        Never waits for the index lock: a request answering "still being built" reads them too."""
        with self._notes_lock:
            notes, self._notes = tuple(dict.fromkeys(self._notes)), []
            return notes

    def _open_store(self) -> Store:
        if self._store is not None:
            return self._store
        if not self.on_disk:
            self._store = Store(Path(":memory:"))
            return self._store
        try:
            self._store = self._open_on_disk()
        except IndexUnwritable as error:
            self._keep_in_memory(error)
            self._store = Store(Path(":memory:"))
        return self._store

    def _open_on_disk(self) -> Store:
        """The database under ``.agentty/``: checked when its last writer died mid-update, rebuilt when corrupt.

        Raises:
            IndexUnwritable: the folder or a file in it cannot be used safely (a link out, read-only ...).
        """
        state_dir = self.config.state_dir
        try:
            check_state_dir(state_dir)
            state_dir.mkdir(parents=True, exist_ok=True)
        except UnsafeFile as error:
            raise IndexUnwritable(str(error)) from None
        except OSError as error:
            raise IndexUnwritable(f"{state_dir} cannot be created ({error.strerror})") from None
        problem = self._manifest_problem()
        if problem:
            self._note(f"{self.config.manifest_path.name}: {problem}; rebuilding the {self.config.name} index")
            Store.delete_files(self.config.db_path)
        died_mid_update = unfinished_update(self.config.lock_path)
        store: Store | None = None
        try:
            store = Store(self.config.db_path, busy_timeout_s=self.config.lock_timeout_s)
            if died_mid_update:
                store.quick_check()
            return store
        except IndexCorrupt as error:
            if store is not None:
                store.close()
            self._note(f"{error}; rebuilding the {self.config.name} index")
            Store.delete_files(self.config.db_path)
            return Store(self.config.db_path, busy_timeout_s=self.config.lock_timeout_s)

    def _keep_in_memory(self, error: Exception) -> None:
        """From now on this process keeps the index in memory only: the files under .agentty/ are unusable."""
        self.on_disk = False
        self.storage_problem = str(error)
        self._note(f"the {self.config.name} index is kept in memory for this process: {error}")

    def _move_to_memory(self, error: Exception) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
        self._keep_in_memory(error)
        self._generation = -1
        self._reload()

    def _read_manifest(self) -> bytes | None:
        """The manifest's bytes (None when there is none); never through a link, never a FIFO."""
        try:
            fd = open_private(self.config.manifest_path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        with os.fdopen(fd, "rb") as handle:
            return handle.read(64 << 20)

    def _manifest_problem(self) -> str:
        """Why the manifest file cannot be trusted ("" when it can, or when there is none yet)."""
        if not self.on_disk:
            return ""
        try:
            raw = self._read_manifest()
        except UnsafeFile as error:
            return str(error)
        except OSError as error:
            return f"unreadable ({error.strerror})"
        if raw is None:
            return ""
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            return "corrupt (not valid JSON)"
        if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
            return "not an agentty-rag manifest"
        version = data.get("schema_version")
        if not isinstance(version, int):
            return "has no schema version"
        if version > SCHEMA_VERSION:
            return f"written by a newer agentty-rag (schema {version}, this one reads {SCHEMA_VERSION})"
        return ""

    def _reload(self) -> None:
        """Load the in-memory index from the database (after open, or another process's commit)."""
        store = self._open_store()
        meta = store.meta()
        self._lexical = LexicalIndex(self.field_names)
        self._generation = meta_int(meta, "generation")
        if meta.get("profile", dumps(self.config.profile())) != dumps(self.config.profile()):
            # Built with other fields, chunking or tokenizer: unreadable as this configuration, and about to
            # be rebuilt (``needs_rebuild`` says why) — load nothing.
            self._files = {}
            self._attributes = None
            self._rows.clear()
            self._groups = None
            self._masks = {}
            return
        segments, lengths = store.segments(self.field_names)
        live = store.live_slots(below=meta_int(meta, "next_slot"))
        self._lexical.load_base(segments, lengths, live)
        base_slots = meta_int(meta, "base_slots")
        for slot, terms in store.delta_terms(self.field_names, base_slots):
            self._lexical.add(slot, terms)
        self._files = store.files()
        self._attributes = None
        self._rows.clear()
        self._groups = None
        self._masks = {}
        if self.embedding_profile is not None:
            self._load_vectors()

    def _sync(self) -> None:
        """Make the in-memory index match the database; rebuild it when it is unreadable."""
        try:
            store = self._open_store()
            if store.generation() != self._generation:
                self._reload()
        except IndexCorrupt as error:
            self._recover(error)
        except IndexUnwritable as error:
            self._move_to_memory(error)

    def recover(self, error: IndexCorrupt) -> None:
        """Throw away an index found corrupt while searching it (the next refresh rebuilds it)."""
        with self.lock:
            self._recover(error)

    def _recover(self, error: BaseException) -> None:
        self._note(f"the {self.config.name} index could not be read ({error}); rebuilding the {self.config.name} index")
        if self._store is not None:
            self._store.close()
            self._store = None
        if self.on_disk:  # an index kept in memory never touches the files it refused
            Store.delete_files(self.config.db_path)
            with contextlib.suppress(FileNotFoundError):
                self.config.manifest_path.unlink()
        self._generation = -1
        self._reload()

    # -- freshness ------------------------------------------------------------------------------------------

    def _scan(self) -> _Scan:
        stamps: dict[str, FileStamp] = {}
        owners: dict[str, Source] = {}
        skipped = SkipReport()
        for source in self.config.sources:
            result = source.scan()
            skipped.merge(result.skipped)
            for stamp in result.files:
                if stamp.key not in stamps:
                    stamps[stamp.key] = stamp
                    owners[stamp.key] = source
        return _Scan(stamps, owners, skipped)

    def _diff(self, scan: _Scan) -> _Diff:
        diff = _Diff()
        for key, stamp in scan.stamps.items():
            row = self._files.get(key)
            if row is None:
                diff.added.append(key)
            elif row.size != stamp.size or row.mtime_ns != stamp.mtime_ns:
                diff.stamp_changed.append(key)
        diff.removed = [key for key in self._files if key not in scan.stamps]
        return diff

    def _report(self, done: int, total: int, phase: str) -> None:
        """Tell the progress callback (the command line's bars) where a refresh is."""
        if self.progress is not None:
            self.progress(done, total, phase)

    def preview(self) -> tuple[list[FileStamp], SkipReport]:
        """The files a build would read and what it would skip, from a scan only (nothing is written)."""
        with self.lock:
            scan = self._scan()
            return [scan.stamps[key] for key in sorted(scan.stamps)], scan.skipped

    def _writer_lock(self) -> contextlib.AbstractContextManager[None]:
        """The cross-process update lock; an in-memory index has no other process to wait for."""
        if not self.on_disk:
            return contextlib.nullcontext()
        return exclusive(self.config.lock_path, self.config.lock_timeout_s)

    def needs_rebuild(self) -> str:
        """Why the stored index cannot be reused ("" when it can)."""
        store = self._open_store()
        meta = store.meta()
        if "profile" not in meta:
            return "no index yet"
        if meta["profile"] != dumps(self.config.profile()):
            return "chunking, tokenizer or field configuration changed"
        return ""

    def refresh(self, force_rebuild: bool = False, build: bool = True) -> RefreshReport:
        """Bring the index up to date with the files on disk; cheap when nothing changed.

        Args:
            force_rebuild: rebuild even when nothing changed.
            build: False for a caller that must not wait for a full build (a request of the server): when the
                update would be a rebuild, ``IndexNotBuilt`` is raised before any work is done.
        """
        started = time.perf_counter()
        with self.lock:
            self._sync()
            self._report(0, 0, "scanning")
            scan = self._scan()
            self._last_scan = scan
            reason = "rebuild requested" if force_rebuild else self._stored_index_problem()
            diff = self._diff(scan)
            if not reason and diff.empty:
                report = RefreshReport(seconds=time.perf_counter() - started)
                self.last_refresh = report
                return report
            if reason and not build:
                raise IndexNotBuilt(reason)
            try:
                report = self._write_somewhere(scan, force_rebuild, build)
            except IndexCorrupt as error:
                self._recover(error)
                report = self._write_somewhere(scan, True, build)
            report.seconds = time.perf_counter() - started
            self.last_refresh = report
            return report

    def _stored_index_problem(self) -> str:
        """``needs_rebuild``, with a corrupt header counted as a reason to rebuild."""
        try:
            return self.needs_rebuild()
        except IndexCorrupt as error:
            self._recover(error)
            return "index was unreadable"

    def _write_somewhere(self, scan: _Scan, force_rebuild: bool, build: bool) -> RefreshReport:
        """Update under the writer lock; when the files on disk turn out unusable, in memory instead."""
        try:
            return self._write(scan, force_rebuild, build)
        except IndexUnwritable as error:
            self._move_to_memory(error)
            return self._write(scan, True, build)

    def _write(self, scan: _Scan, force_rebuild: bool, build: bool) -> RefreshReport:
        with self._writer_lock():
            self._sync()  # another process may have done (part of) the work meanwhile
            reason = "rebuild requested" if force_rebuild else self.needs_rebuild()
            return self._update(scan, reason, build)

    def _update(self, scan: _Scan, reason: str, build: bool = True) -> RefreshReport:
        diff = self._diff(scan)
        if not reason and diff.empty:
            return RefreshReport()
        report = RefreshReport(added=len(diff.added), removed=len(diff.removed))
        changed: list[tuple[_Prepared, bytes]] = []
        touched: dict[str, FileRow] = {}
        if not reason:
            for key in diff.stamp_changed:
                item, data = self._read(scan, key)
                old = self._files[key]
                if item.hash == old.hash and not item.skip:
                    touched[key] = replace(old, size=item.stamp.size, mtime_ns=item.stamp.mtime_ns)
                else:
                    changed.append((item, data))
            report.touched = len(touched)
            report.changed = len(changed)
            changed_files = len(diff.added) + len(changed) + len(diff.removed)
            total = max(len(scan.stamps), len(self._files), 1)
            if changed_files > self.config.rebuild_fraction * total and changed_files > 1:
                reason = f"{changed_files} of {total} files changed"
        if reason:
            if not build:
                raise IndexNotBuilt(reason)
            self._rebuild(scan, reason, report)
            return report
        prepared = [self._chunk(scan, item, data) for item, data in changed]
        prepared += [self._chunk(scan, *self._read(scan, key)) for key in diff.added]
        self._apply(scan, prepared, diff.removed, touched, report)
        report.rechunked_files = len(prepared)
        return report

    def _read(self, scan: _Scan, key: str) -> tuple[_Prepared, bytes]:
        """Read and fingerprint one file (its chunks come later, from ``_chunk``)."""
        return read_file(scan.stamps[key], scan.owners[key].max_bytes)

    def _chunk(self, scan: _Scan, item: _Prepared, data: bytes) -> _Prepared:
        prepared, warnings = chunk_file(scan.owners[item.key], item, data, self.config.chunking)
        for warning in warnings:
            self._warn(warning)
        return prepared

    def _prepare_all(self, scan: _Scan, keys: list[str]) -> Iterator[tuple[_Prepared, list[Counted]]]:
        """Every file read, chunked and counted, in ``keys`` order: on several cores for a large build."""
        jobs = [(scan.owners[key], scan.stamps[key], self.config.chunking) for key in keys]
        results: Iterable[tuple[_Prepared, list[Counted], tuple[str, ...]]]
        workers = min(os.cpu_count() or 1, MAX_WORKERS)
        pool = None
        if len(jobs) >= PARALLEL_MIN_FILES and workers > 1:
            try:
                pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
                results = pool.map(prepare_file, jobs, chunksize=16)
            except (OSError, ValueError) as error:  # no processes here: do it in this one
                log.info("building on one core (%s)", error)
                pool = None
        if pool is None:
            results = (prepare_file(job, self._tokenizer) for job in jobs)
        try:
            for item, counted, warnings in results:
                for warning in warnings:
                    self._warn(warning)
                yield item, counted
        finally:
            if pool is not None:
                pool.shutdown(cancel_futures=True)

    @staticmethod
    def _as_ids(counts: dict[str, Counter[str]], ids: dict[str, int]) -> dict[str, FieldTerms]:
        out: dict[str, FieldTerms] = {}
        for name, counter in counts.items():
            if counter:
                pairs = sorted((ids[t], n) for t, n in counter.items())
                out[name] = (
                    np.asarray([p[0] for p in pairs], np.int32),
                    np.asarray([p[1] for p in pairs], np.int32),
                )
        return out

    def _rebuild(self, scan: _Scan, reason: str, report: RefreshReport) -> None:
        store = self._open_store()
        report.rebuilt, report.reason = True, reason
        log.info("rebuilding the %s index: %s", self.config.name, reason)
        keys = sorted(scan.stamps)
        vocab: dict[str, int] = {}
        lexical = LexicalIndex(self.field_names)
        term_parts: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in self.field_names}
        slot_parts: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in self.field_names}
        tf_parts: dict[str, list[npt.NDArray[np.int32]]] = {n: [] for n in self.field_names}
        lengths: dict[str, list[float]] = {n: [] for n in self.field_names}
        files: dict[str, FileRow] = {}
        rows: list[tuple[int, str, Chunk, bytes]] = []
        slot = 0
        prepared = self._prepare_all(scan, keys)
        with store.transaction():
            store.clear()
            for number, key in enumerate(keys, start=1):
                self.build_state = (number - 1, len(keys))
                self._report(number, len(keys), "parsing")
                item, counted = next(prepared)
                files[key] = item.row()
                for chunk, counts in counted:
                    for counter in counts.values():
                        for term in counter:
                            if term not in vocab:
                                vocab[term] = len(vocab)
                    terms = self._as_ids(counts, vocab)
                    for name in self.field_names:
                        ids, tfs = terms.get(name, (np.zeros(0, np.int32), np.zeros(0, np.int32)))
                        term_parts[name].append(ids)
                        slot_parts[name].append(np.full(len(ids), slot, np.int32))
                        tf_parts[name].append(tfs)
                        lengths[name].append(float(tfs.sum()))
                    rows.append((slot, key, chunk, encode_terms(self.field_names, terms)))
                    slot += 1
                if len(rows) >= 2000:
                    store.put_chunks(rows)
                    rows = []
            store.put_chunks(rows)
            self._report(len(keys), len(keys), "writing")
            store.add_terms(vocab)
            segments: dict[str, Segment] = {}
            length_arrays: dict[str, npt.NDArray[np.float64]] = {}
            for name in self.field_names:
                segments[name] = Segment.build(
                    _concat(term_parts[name]),
                    _concat(slot_parts[name]),
                    _concat(tf_parts[name]).astype(np.float32),
                    len(vocab),
                )
                length_arrays[name] = np.asarray(lengths[name], np.float64)
            store.put_segments(segments, length_arrays)
            store.put_files(files)
            store.prune_vectors()
            self._write_meta(store, scan, base_slots=slot, next_slot=slot)
        lexical.load_base(segments, length_arrays, np.arange(slot, dtype=np.int32))
        self._lexical = lexical
        self.build_state = (len(keys), len(keys))
        self._after_commit(store, files)
        report.rechunked_files = len(keys)
        report.chunks_added = slot

    def _apply(
        self,
        scan: _Scan,
        prepared: list[_Prepared],
        removed: list[str],
        touched: dict[str, FileRow],
        report: RefreshReport,
    ) -> None:
        """Patch the index: drop the chunks of changed and removed files, add the new chunks."""
        store = self._open_store()
        meta = store.meta()
        next_slot = meta_int(meta, "next_slot")
        old_keys = [p.key for p in prepared if p.key in self._files] + removed
        counted = [counted_terms(self._tokenizer, p) for p in prepared]
        prepared = [item for item, _ in counted]
        counts_per_chunk = [(item, chunk, counts) for item, pairs in counted for chunk, counts in pairs]
        wanted = {term for _, _, counts in counts_per_chunk for counter in counts.values() for term in counter}
        try:
            with store.transaction():
                old_slots = store.slots_of_files(old_keys)
                store.delete_chunks(old_slots)
                store.delete_files_rows(removed)
                ids = store.lookup_terms(wanted)
                new_terms: dict[str, int] = {}
                next_id = store.vocab_size()
                for term in sorted(wanted - ids.keys()):
                    new_terms[term] = next_id
                    next_id += 1
                store.add_terms(new_terms)
                ids.update(new_terms)
                rows: list[tuple[int, str, Chunk, bytes]] = []
                added: list[tuple[int, dict[str, FieldTerms]]] = []
                for item, chunk, counts in counts_per_chunk:
                    terms = self._as_ids(counts, ids)
                    rows.append((next_slot, item.key, chunk, encode_terms(self.field_names, terms)))
                    added.append((next_slot, terms))
                    next_slot += 1
                store.put_chunks(rows)
                files = {p.key: p.row() for p in prepared}
                files.update(touched)
                store.put_files(files)
                self._lexical.remove(old_slots)
                for slot, terms in added:
                    self._lexical.add(slot, terms)
                base_slots = meta_int(meta, "base_slots")
                if self._should_compact(next_slot):
                    self._lexical.compact(next_id)
                    capacity = next_slot
                    store.put_segments(
                        {n: self._lexical.fields[n].base for n in self.field_names},
                        {n: self._lexical.fields[n].lengths[:capacity] for n in self.field_names},
                    )
                    base_slots = next_slot
                    store.prune_vectors()
                self._write_meta(store, scan, base_slots=base_slots, next_slot=next_slot)
        except BaseException:
            self._generation = -1  # the in-memory index may hold part of the rolled-back update
            raise
        for key in removed:
            self._files.pop(key, None)
        self._after_commit(store, {**self._files, **files}, [slot for slot, _ in added])
        report.chunks_added = len(rows)
        report.chunks_removed = len(old_slots)
        if self._dense is not None:
            self._dense.drop(old_slots)

    def _should_compact(self, next_slot: int) -> bool:
        """Fold the delta into the base when it (or the count of dead slots) has grown large."""
        live = max(self._lexical.n_live, 1)
        base_postings = len(self._lexical.fields[self.field_names[0]].base.slots)
        big_delta = self._lexical.delta_size > max(_COMPACT_MIN_DELTA, _COMPACT_DELTA_SHARE * base_postings)
        many_dead = next_slot - live > max(1000, 0.25 * live)
        return big_delta or many_dead

    def _write_meta(self, store: Store, scan: _Scan, base_slots: int, next_slot: int) -> None:
        store.set_meta(
            {
                "profile": dumps(self.config.profile()),
                "roots": dumps(self.config.roots),
                "base_slots": str(base_slots),
                "next_slot": str(next_slot),
                "updated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "scan_skipped": dumps(scan.skipped.to_json()),
            }
        )

    def _after_commit(self, store: Store, files: dict[str, FileRow], new_slots: list[int] | None = None) -> None:
        self._files = dict(files)
        self._generation = store.generation()
        self._attributes = None
        self._rows.clear()
        self._groups = None
        self._masks = {}
        if self.embedding_profile is not None:
            self._load_vectors(new_slots)
        self._write_manifest(store)

    # -- the dense leg ----------------------------------------------------------------------------------

    def use_embeddings(self, profile: EmbeddingProfile | None) -> None:
        """Search with vectors of this embedding profile (None: lexical only)."""
        with self.lock:
            if profile == self.embedding_profile:
                return
            self.embedding_profile = profile
            self._dense = None
            # Vectors load with the index; choosing a profile never creates a database.
            if profile is not None and not self._never_built():
                self._sync()
                self._load_vectors()

    def _load_vectors(self, slots: list[int] | None = None) -> None:
        """Vectors of the active profile from the database: all of them, or only those of new slots."""
        profile = self.embedding_profile
        if profile is None:
            return
        store = self._open_store()
        if slots is None or self._dense is None:
            self._dense = DenseIndex(profile.dimension)
            rows = store.vectors(profile.key)
        else:
            rows = store.vectors(profile.key, slots) if slots else []
        self._put_vectors(rows)

    def _put_vectors(self, rows: list[tuple[int, bytes]]) -> None:
        assert self._dense is not None
        if not rows:
            return
        slots = [slot for slot, _ in rows]
        matrix = np.stack([np.frombuffer(blob, np.float16) for _, blob in rows]).astype(np.float32)
        if matrix.shape[1] != self._dense.dimension:
            return  # vectors of another dimension under the same profile key cannot happen; ignore them
        self._dense.put(slots, matrix)

    def import_vectors(self, other: Path) -> int:
        """Reuse the vectors of another index database (same profile, same embedded text); returns how many."""
        with self.lock:
            try:
                added = self._open_store().import_vectors(other)
            except AgenttyError as error:
                log.info("could not read vectors from %s: %s", other, error)
                return 0
            if self.embedding_profile is not None:
                self._load_vectors()
            return added

    def has_vectors(self) -> bool:
        """Whether the database holds embeddings of any model: a dense leg was in use for this index."""
        with self.lock:
            if self._never_built():
                return False
            try:
                return self._open_store().has_vectors()
            except IndexCorrupt as error:  # corruption like any other: the next refresh rebuilds it
                self._recover(error)
                return False
            except AgenttyError:  # busy, or not openable here: nothing known
                return False

    def vector_coverage(self) -> tuple[int, int]:
        """(live chunks with a vector, live chunks) for the active profile."""
        with self.lock:
            if self._dense is None:
                return 0, self._lexical.n_live
            return self._dense.count(self._lexical.alive), self._lexical.n_live

    def embed_missing(
        self, embedder: Embedder, batch: int = 32, limit: int | None = None, progress: Progress | None = None
    ) -> int:
        """Embed live chunks that have no vector yet (at most ``limit``); returns how many were embedded.

        The network calls run without the index lock, so searches go on meanwhile.
        """
        profile = self.embedding_profile
        if profile is None:
            return 0
        done = 0
        while limit is None or done < limit:
            with self.lock:
                self._sync()
                generation = self._generation
                size = batch if limit is None else min(batch, limit - done)
                missing = self._open_store().missing_vectors(profile.key, size)
                have, live = self.vector_coverage()
                if not missing:
                    if have < live:
                        self._load_vectors()  # another process embedded them
                    return done
            vectors = embedder.embed_documents([embed_text(chunk) for _, _, chunk in missing])
            blobs = [(h, vectors[i].astype(np.float16).tobytes()) for i, (_, h, _) in enumerate(missing)]
            with self.lock:
                store = self._open_store()
                store.write_vectors(profile.key, blobs)
                if self._generation == generation and self._dense is not None:
                    self._dense.put([slot for slot, _, _ in missing], vectors)
                else:
                    self._sync()
                    self._load_vectors()
            done += len(missing)
            if progress is not None:
                progress(*self.vector_coverage(), "embedding")
        return done

    def dense_search(
        self, vector: npt.NDArray[np.float32], pool: int, allowed: npt.NDArray[np.bool_] | None = None
    ) -> list[tuple[int, float]]:
        with self.lock:
            if self._dense is None:
                return []
            return self._dense.search(vector, pool, self._lexical.alive, allowed)

    def _write_manifest(self, store: Store) -> None:
        """Mirror the manifest (header and every file's stamp) as JSON, atomically, never through a link."""
        if not self.on_disk:
            return
        meta = store.meta()
        manifest = {
            "format": MANIFEST_FORMAT,
            "schema_version": SCHEMA_VERSION,
            "index": self.config.name,
            "generation": meta_int(meta, "generation"),
            "updated_at": meta.get("updated_at", ""),
            **self.config.profile(),
            "embedding": self.embedding_profile.to_json() if self.embedding_profile else None,
            "roots": self.config.roots,
            "counts": dict(zip(("files", "chunks"), store.counts(), strict=True)),
            "skipped": _json_or_empty(meta.get("scan_skipped", "{}")),
            "files": {
                key: {
                    "size": row.size,
                    "mtime_ns": row.mtime_ns,
                    "hash": row.hash,
                    "chunks": row.chunks,
                    **({"skip": row.skip} if row.skip else {}),
                    **({"redacted": row.redacted} if row.redacted else {}),
                }
                for key, row in sorted(self._files.items())
            },
        }
        try:
            write_private(self.config.manifest_path, json.dumps(manifest, indent=1, sort_keys=True).encode("utf-8"))
        except OSError as error:  # the database holds the truth: a missing mirror is only reported
            self._warn(f"{self.config.manifest_path} could not be written ({error})")

    # -- searching ------------------------------------------------------------------------------------------

    def query_terms(self, query: str) -> dict[str, list[str]]:
        terms = list(dict.fromkeys(self._tokenizer.tokenize(query)))
        return dict.fromkeys(self.field_names, terms)

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

    def term_statistics(self, terms: Sequence[str]) -> tuple[dict[str, int], dict[str, float]]:
        """Ids and body-field IDF of terms (a term the body never holds gets the highest IDF)."""
        with self.lock:
            ids = self._open_store().lookup_terms(terms)
            n_live = max(self._lexical.n_live, 1)
            idf: dict[str, float] = {}
            for term in terms:
                df = self._lexical.document_frequency("body", ids[term]) if term in ids else 0
                idf[term] = bm25_idf(df, n_live)
            return ids, idf

    def chunk_term_ids(self, slots: Sequence[int]) -> dict[int, frozenset[int]]:
        """Every term id each chunk holds, over all fields."""
        return {slot: terms for slot, (_, terms) in self._cached_rows(slots).items()}

    def _cached_rows(self, slots: Sequence[int]) -> dict[int, tuple[Chunk, frozenset[int]]]:
        """Chunks and their term ids, read (and checked) once per index generation: a slot's row never
        changes until the next commit, and consecutive searches read many of the same candidates."""
        with self.lock:
            if self._rows_generation != self._generation:
                self._rows.clear()
                self._rows_generation = self._generation
            missing = [s for s in slots if s not in self._rows]
            if missing:
                store = self._open_store()
                for slot, (chunk, blob) in self._all_live(store, missing, store.chunk_rows(missing)).items():
                    fields = decode_terms(self.field_names, blob)
                    terms = frozenset(int(t) for ids, _ in fields.values() for t in ids.tolist())
                    self._rows[slot] = (chunk, terms)
                while len(self._rows) > _ROW_CACHE:
                    self._rows.popitem(last=False)
            found: dict[int, tuple[Chunk, frozenset[int]]] = {}
            for slot in slots:
                row = self._rows.get(slot)
                if row is not None:
                    self._rows.move_to_end(slot)
                    found[slot] = row
            return found

    def lexical_scores(
        self, terms: Mapping[str, float], allowed: npt.NDArray[np.bool_] | None = None, files: bool = False
    ) -> LexicalScores:
        """BM25 of every chunk — and with ``files``, of every file — for weighted query terms (term -> weight).

        Chunks outside ``allowed`` (and files with no allowed chunk) score 0.
        """
        scoring = self.config.scoring
        with self.lock:
            ids = self._open_store().lookup_terms(terms)
            known = [ids[t] for t in terms if t in ids]
            query_ids = dict.fromkeys(self.field_names, known)
            term_weights = {ids[t]: w for t, w in terms.items() if t in ids}
            chunk_scores = self._lexical.score(query_ids, self.weights, term_weights, scoring.k1, scoring.b)
            groups = self.file_groups()
            file_scores = np.zeros(len(groups.refs), np.float64)
            if files:
                file_scores = self._lexical.score_groups(
                    query_ids,
                    {**self.weights, **scoring.file_weights},
                    self._group_statistics(groups),
                    term_weights,
                    scoring.file_k1,
                    scoring.file_b,
                )
        if allowed is not None:
            chunk_scores[: len(allowed)] *= allowed[: len(chunk_scores)]
            chunk_scores[len(allowed) :] = 0
            admitted = np.zeros(len(groups.refs), bool)
            in_mask = groups.of_slot[np.flatnonzero(allowed[: len(groups.of_slot)])]
            admitted[in_mask[in_mask >= 0]] = True
            file_scores *= admitted
        return LexicalScores(chunk_scores, file_scores, groups)

    def file_groups(self) -> FileGroups:
        """Which file each chunk comes from (cached until the index changes)."""
        with self.lock:
            if self._groups is not None and len(self._groups.of_slot) == len(self._lexical.alive):
                return self._groups
            attributes = self._chunk_attributes()
            refs = sorted({ref for _, ref, _ in attributes.values()})
            number = {ref: i for i, ref in enumerate(refs)}
            of_slot = np.full(len(self._lexical.alive), -1, np.int32)
            for slot, (_, ref, _) in attributes.items():
                if slot < len(of_slot):
                    of_slot[slot] = number[ref]
            held = np.flatnonzero(of_slot >= 0)
            slots = held[np.argsort(of_slot[held], kind="stable")].astype(np.int32)
            starts = np.zeros(len(refs) + 1, np.int64)
            np.cumsum(np.bincount(of_slot[held], minlength=len(refs)), out=starts[1:])
            self._groups = FileGroups(of_slot, tuple(refs), slots, starts)
            return self._groups

    def _group_statistics(self, groups: FileGroups) -> GroupStatistics:
        """The file statistics of the index as it is now (worked out once per state, like the groups)."""
        if self._group_stats is None or self._group_stats.group_of_slot is not groups.of_slot:
            self._group_stats = self._lexical.group_statistics(groups.of_slot, len(groups.refs), FILE_WIDE_FIELDS)
        return self._group_stats

    def defined_as(self, terms: Sequence[str]) -> list[int]:
        """Slots of the definitions named by any of ``terms`` (name-field terms: whole names, lower case)."""
        if "name" not in self.field_names:
            return []
        with self.lock:
            ids = self._open_store().lookup_terms(terms)
            found: set[int] = set()
            for term in terms:
                if term in ids:
                    found.update(self._lexical.postings("name", ids[term]).tolist())
        return sorted(found)

    def known_terms(self, terms: Sequence[str]) -> set[str]:
        """Which of ``terms`` the index holds."""
        with self.lock:
            return set(self._open_store().lookup_terms(terms))

    def _chunk_attributes(self) -> dict[int, tuple[str, str, str]]:
        if self._attributes is None:
            self._attributes = {s: (src, ref, lang) for s, src, ref, lang in self._open_store().chunk_attributes()}
        return self._attributes

    def chunks(self, slots: Sequence[int]) -> dict[int, Chunk]:
        return {slot: chunk for slot, (chunk, _) in self._cached_rows(slots).items()}

    def _all_live(self, store: Store, slots: Sequence[int], found: dict[int, _T]) -> dict[int, _T]:
        """``found``, when it holds every live slot asked for. A live slot the database lacks, while no other
        process changed the index, is corruption: a damaged row key hides its row from every lookup."""
        alive = self._lexical.alive
        missing = [s for s in slots if s not in found and 0 <= s < len(alive) and alive[s]]
        if missing and store.generation() == self._generation:
            raise IndexCorrupt(f"chunk {missing[0]} is missing from {store.path.name}")
        return found

    def all_chunks(self) -> list[Chunk]:
        """Every live chunk, in slot order (for tools that sample the corpus)."""
        with self.lock:
            slots = self._lexical.live_slots().tolist()
            found = self._open_store().chunks(slots)
            return [found[s] for s in slots if s in found]

    def file_paths(self) -> list[str]:
        """Paths of the indexed files as the last scan found them, in key order (for tools that edit some)."""
        with self.lock:
            stamps = self._last_scan.stamps if self._last_scan is not None else {}
            return [stamps[key].path for key in sorted(self._files) if key in stamps]

    def allowed(self, key: str, keep: Callable[[str, str, str], bool]) -> npt.NDArray[np.bool_]:
        """A mask over slots of the chunks ``keep(source, ref, language)`` admits (cached per generation)."""
        with self.lock:
            mask = self._masks.get(key)
            if mask is not None and len(mask) == len(self._lexical.alive):
                return mask
            mask = np.zeros(len(self._lexical.alive), bool)
            for slot, (source, ref, language) in self._chunk_attributes().items():
                if slot < len(mask) and keep(source, ref, language):
                    mask[slot] = True
            self._masks[key] = mask
            return mask

    # -- reporting ------------------------------------------------------------------------------------------

    @property
    def n_chunks(self) -> int:
        return self._lexical.n_live

    @property
    def n_files(self) -> int:
        return sum(1 for row in self._files.values() if not row.skip)

    def skipped(self) -> SkipReport:
        """What the last scan and the loads left out."""
        report = SkipReport()
        if self._last_scan is not None:
            report.merge(self._last_scan.skipped)
        for key, row in sorted(self._files.items()):
            if row.skip:
                report.add(row.skip, key.split(":", 1)[1])
        return report

    def status(self) -> dict[str, object]:
        """Files, chunks, last update, manifest and freshness, for ``agentty-rag status``."""
        with self.lock:
            if self._never_built():
                # Reporting must not write: a workspace that was never indexed stays untouched.
                scan = self._scan()
                self._last_scan = scan
                count = len(scan.stamps)
                return self._status_of({}, False, f"no index yet: {count} file{'' if count == 1 else 's'} to index")
            try:
                self._sync()
                meta = self._open_store().meta()
                reason = self.needs_rebuild()
            except IndexCorrupt as error:
                self._recover(error)
                meta, reason = {}, "index was unreadable"
            scan = self._scan()
            self._last_scan = scan
            diff = self._diff(scan)
            fresh = not reason and diff.empty
            return self._status_of(
                meta,
                fresh,
                reason
                or (
                    f"{len(diff.added)} added, {len(diff.stamp_changed)} modified, {len(diff.removed)} removed"
                    if not diff.empty
                    else ""
                ),
            )

    def _never_built(self) -> bool:
        return self.on_disk and self._store is None and not self.config.db_path.exists()

    def redactions(self) -> dict[str, object]:
        """How many secrets were replaced before indexing, in how many files (and the first of them)."""
        files = sorted(key.split(":", 1)[1] for key, row in self._files.items() if row.redacted)
        secrets = sum(row.redacted for row in self._files.values())
        return {"secrets": secrets, "files": len(files), "examples": files[:REPORT_PATHS_PER_REASON]}

    def storage(self) -> str:
        """``disk``, or ``memory`` with the reason the files under .agentty/ could not be used."""
        if self.on_disk:
            return "disk"
        return f"memory ({self.storage_problem})" if self.storage_problem else "memory"

    def _status_of(self, meta: dict[str, str], fresh: bool, stale_reason: str) -> dict[str, object]:
        return {
            "index": self.config.name,
            "path": str(self.config.db_path),
            "files": self.n_files,
            "chunks": self.n_chunks,
            "updated_at": meta.get("updated_at", "never"),
            "generation": meta_int(meta, "generation"),
            "fresh": fresh,
            "stale_reason": stale_reason,
            "storage": self.storage(),
            "redacted": self.redactions(),
            "manifest": {**self.config.profile(), "roots": self.config.roots},
            "skipped": self.skipped().to_json(),
            "by_source": self._files_by_source(),
        }

    def _files_by_source(self) -> dict[str, int]:
        """Indexed files per source (``docs``, ``skill``, ``memory``, ``code``); before a first build, the
        files the last scan found."""
        keys: Iterable[str] = (key for key, row in self._files.items() if not row.skip)
        if not self._files and self._last_scan is not None:
            keys = self._last_scan.stamps
        counts = Counter(key.split(":", 1)[0] for key in keys)
        return dict(sorted(counts.items()))

    def close(self) -> None:
        with self.lock:
            if self._store is not None:
                self._store.close()
                self._store = None


Counted = tuple[Chunk, dict[str, Counter[str]]]
# A full build of at least this many files is spread over processes (up to MAX_WORKERS of them).
PARALLEL_MIN_FILES = 400
MAX_WORKERS = 4
_worker_tokenizer: Tokenizer | None = None


def read_file(stamp: FileStamp, max_bytes: int) -> tuple[_Prepared, bytes]:
    """Read and fingerprint one file; a file that grew past ``max_bytes`` since the scan is skipped, and so
    is one swapped since the scan for a link out of its folder, a FIFO or a device."""
    try:
        data = read_regular(stamp.path, stamp.boundary, max_bytes)
    except UnsafeFile as error:
        return _Prepared(stamp.key, stamp, "", [], error.reason), b""
    except OSError:
        return _Prepared(stamp.key, stamp, "", [], "unreadable"), b""
    digest = xxhash.xxh3_128_hexdigest(data)
    stamp = FileStamp(stamp.key, stamp.path, len(data), stamp.mtime_ns, stamp.boundary)
    if len(data) > max_bytes:
        return _Prepared(stamp.key, stamp, digest, [], "too large"), b""
    return _Prepared(stamp.key, stamp, digest, []), data


def chunk_file(
    source: Source, item: _Prepared, data: bytes, chunking: ChunkingConfig
) -> tuple[_Prepared, tuple[str, ...]]:
    """Parse a read file into chunks (or the reason it is skipped), with the source's warnings."""
    if item.skip:
        return item, ()
    try:
        loaded = source.parse(item.stamp, data)
        if loaded.skip_reason:
            return _Prepared(item.key, item.stamp, item.hash, [], loaded.skip_reason), loaded.warnings
        documents, found = _without_secrets(loaded.documents)
        chunks = [c for doc in documents for c in chunk_document(doc, chunking)]
        for chunk in chunks:
            _check_storable(chunk)
    except Exception as error:  # one hostile file must not take the whole index down: skip it, say why
        reason = f"could not be read ({type(error).__name__})"
        warning = f"{item.stamp.path}: {reason}: {error}; the file is skipped"
        return _Prepared(item.key, item.stamp, item.hash, [], reason), (warning,)
    if found:  # said in the passage itself and counted in status; the log only on request
        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(found.items()))
        log.info("%s: secrets redacted before indexing (%s)", item.stamp.path, kinds)
    return _Prepared(item.key, item.stamp, item.hash, chunks, redacted=found.total()), loaded.warnings


def _without_secrets(documents: Sequence[Document]) -> tuple[list[Document], Counter[str]]:
    """The documents with every recognised secret replaced, and how many of each kind there were."""
    found: Counter[str] = Counter()
    clean = []
    for document in documents:
        text, title = redact(document.text), redact(document.title)
        found += text.found + title.found
        clean.append(replace(document, text=text.text, title=title.text) if text.found or title.found else document)
    return clean, found


def _check_storable(chunk: Chunk) -> None:
    """Raise ``UnicodeEncodeError`` for text that cannot be stored (a lone surrogate from a JSON escape)."""
    for text in (chunk.ref, chunk.text, chunk.context, chunk.symbol, chunk.title):
        text.encode("utf-8")


def prepare_file(
    job: tuple[Source, FileStamp, ChunkingConfig], tokenizer: Tokenizer | None = None
) -> tuple[_Prepared, list[Counted], tuple[str, ...]]:
    """Read, chunk and count one file's terms (also in a worker process, with its own tokenizer)."""
    global _worker_tokenizer
    source, stamp, chunking = job
    if tokenizer is None:
        if _worker_tokenizer is None:
            _worker_tokenizer = Tokenizer()
        tokenizer = _worker_tokenizer
    item, data = read_file(stamp, source.max_bytes)
    item, warnings = chunk_file(source, item, data, chunking)
    item, counted = counted_terms(tokenizer, item)
    return item, counted, warnings


def counted_terms(tokenizer: Tokenizer, item: _Prepared) -> tuple[_Prepared, list[Counted]]:
    """Each chunk of a file with its term counts; a file whose text the tokenizer fails on is skipped."""
    try:
        return item, [(chunk, count_terms(tokenizer, chunk)) for chunk in item.chunks]
    except Exception as error:  # one hostile file must not take the whole index down
        log.warning("%s: terms could not be counted (%s); the file is skipped", item.stamp.path, error)
        return replace(item, chunks=[], skip=f"could not be read ({type(error).__name__})"), []


def count_terms(tokenizer: Tokenizer, chunk: Chunk) -> dict[str, Counter[str]]:
    """How often each term occurs in each field of a chunk."""
    return {name: Counter(terms) for name, terms in field_terms(tokenizer, chunk).items()}


def _concat(parts: Iterable[npt.NDArray[np.int32]]) -> npt.NDArray[np.int32]:
    items = list(parts)
    return np.concatenate(items).astype(np.int32) if items else np.zeros(0, np.int32)


def meta_int(meta: dict[str, str], key: str) -> int:
    """A number kept in the ``meta`` table (0 when absent); ``IndexCorrupt`` when it is not a number."""
    try:
        return int(meta.get(key, "0"))
    except ValueError:
        raise IndexCorrupt(f"the index's {key} is not a number") from None


def _json_or_empty(text: str) -> object:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return {}


__all__ = ["CorpusIndex", "FileGroups", "IndexConfig", "LexicalScores", "MANIFEST_FORMAT", "RefreshReport"]
