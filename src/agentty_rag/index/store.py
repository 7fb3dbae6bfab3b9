"""The ``.ragdb`` file: one SQLite database per index, the only thing written under ``.agentty/``.

SQLite gives transactions (a process killed mid-update leaves the previous index), concurrent readers
(write-ahead log) and corruption detection. Tables:

* ``meta(key, value)``: schema version, generation (bumped by every commit), manifest header, skip report.
* ``files(key, size, mtime_ns, hash, chunks)``: every indexed file's stamp and content hash (the manifest).
* ``chunks(slot, file_key, ...)``: each chunk's provenance, text and its terms per field (a small int32 blob).
* ``vocab(term, id)``: term ids; queries look up their few terms instead of loading the vocabulary.
* ``segments(field, ...)``: the compacted postings of each field (numpy arrays as blobs) and slot lengths.
* ``vectors(profile, hash, vector)``: embeddings (float16) keyed by embedding profile and the hash of the
  embedded text, so an unchanged chunk is never embedded twice and a new model invalidates vectors only.

Chunks added after the last compaction (slots at or above ``meta.base_slots``) are read from their term
blobs into the in-memory delta at open.

Large values live on SQLite's overflow pages, where a damaged page changes the bytes without any error, and
a flipped bit can turn text into bytes or move a term to another id. So the header (``meta``), every file
row, chunk row, term and segment carries an xxHash checksum, and every vector ends with one; a value that
does not match is corruption (``IndexCorrupt``: the index is rebuilt), never a silently wrong answer. Every
SQLite error is classified once, here: busy, cannot be written (``IndexUnwritable``), or corrupt.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from agentty_rag.errors import AgenttyError, IndexBusy, IndexCorrupt, IndexUnwritable
from agentty_rag.fsguard import UnsafeFile, refuse_link
from agentty_rag.index.lexical import FieldTerms, Segment
from agentty_rag.types import Chunk

SCHEMA_VERSION = 4
# What a damaged database can raise: SQLite's errors, and a decoding error when its message quotes bad bytes.
_ERRORS = (sqlite3.Error, UnicodeDecodeError)
_META_SUM = "checksum"


def _meta_checksum(meta: Mapping[str, object]) -> str:
    return checksum(*(part for key in sorted(meta) for part in (key, meta[key])))


SIDECARS = ("", "-wal", "-shm", "-journal")
_VECTOR_SUM_BYTES = 8

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    key TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL,
    chunks INTEGER NOT NULL, skip TEXT NOT NULL DEFAULT '', redacted INTEGER NOT NULL DEFAULT 0,
    checksum TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    slot INTEGER PRIMARY KEY, file_key TEXT NOT NULL, chunk_id TEXT NOT NULL, source TEXT NOT NULL,
    ref TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, language TEXT NOT NULL,
    kind TEXT NOT NULL, context TEXT NOT NULL, symbol TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
    terms BLOB NOT NULL, embed_hash TEXT NOT NULL, checksum TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks(file_key);
CREATE TABLE IF NOT EXISTS vectors (
    profile TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (profile, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vocab (term TEXT PRIMARY KEY, id INTEGER NOT NULL, checksum TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (
    field TEXT PRIMARY KEY, n_terms INTEGER NOT NULL, indptr BLOB NOT NULL, slots BLOB NOT NULL,
    tfs BLOB NOT NULL, lengths BLOB NOT NULL, checksum TEXT NOT NULL
);
"""

_CHUNK_COLUMNS = "slot, source, ref, start_line, end_line, text, language, kind, context, symbol, title"
# What a chunk's checksum covers, with its slot: every other column, in table order.
_SUMMED_COLUMNS = (
    "file_key, chunk_id, source, ref, start_line, end_line, language, kind, context, symbol, title, text, terms, "
    "embed_hash"
)


def checksum(*parts: object) -> str:
    """xxHash3-64 over values (text, numbers, bytes), each with its type and length, so that no two lists
    collide and a damaged row whose text comes back as bytes (or a number as text) does not match."""
    digest = xxhash.xxh3_64()
    for part in parts:
        if isinstance(part, bytes):
            kind, data = b"b", part
        else:
            kind, data = (b"s" if isinstance(part, str) else b"n"), str(part).encode("utf-8", "surrogatepass")
        digest.update(kind + len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def seal_vector(vector: bytes) -> bytes:
    """A vector's bytes followed by their checksum."""
    return vector + xxhash.xxh3_64_digest(vector)


def open_vector(sealed: bytes) -> bytes:
    """The vector bytes of a sealed blob; ``IndexCorrupt`` when they do not match their checksum."""
    vector, sum_bytes = sealed[:-_VECTOR_SUM_BYTES], sealed[-_VECTOR_SUM_BYTES:]
    if len(sealed) <= _VECTOR_SUM_BYTES or xxhash.xxh3_64_digest(vector) != sum_bytes:
        raise IndexCorrupt("a stored vector does not match its checksum")
    return vector


@dataclass(frozen=True, slots=True)
class FileRow:
    size: int
    mtime_ns: int
    hash: str
    chunks: int
    skip: str = ""
    redacted: int = 0  # secrets replaced in its text before it was indexed


def _file_values(rows: Mapping[str, FileRow]) -> Iterator[tuple[object, ...]]:
    for key, row in rows.items():
        yield (key, row.size, row.mtime_ns, row.hash, row.chunks, row.skip, row.redacted)


def encode_terms(fields: Sequence[str], terms: Mapping[str, FieldTerms]) -> bytes:
    """Pack a chunk's per-field (ids, counts) as int32: field sizes, then each field's ids and counts."""
    sizes = [len(terms[f][0]) if f in terms else 0 for f in fields]
    parts: list[npt.NDArray[np.int32]] = [np.asarray(sizes, np.int32)]
    for name, size in zip(fields, sizes, strict=True):
        if size:
            parts.extend((terms[name][0].astype(np.int32), terms[name][1].astype(np.int32)))
    return np.concatenate(parts).tobytes()


def decode_terms(fields: Sequence[str], blob: bytes) -> dict[str, FieldTerms]:
    if len(blob) % 4:
        raise IndexCorrupt("a chunk's term list is truncated")
    data = np.frombuffer(blob, np.int32)
    n = len(fields)
    if len(data) < n:
        raise IndexCorrupt("a chunk's term list is truncated")
    sizes = data[:n].tolist()
    out: dict[str, FieldTerms] = {}
    offset = n
    for name, size in zip(fields, sizes, strict=True):
        if size:
            out[name] = (data[offset : offset + size], data[offset + size : offset + 2 * size])
            offset += 2 * size
    if offset != len(data):
        raise IndexCorrupt("a chunk's term list has the wrong length")
    return out


class Store:
    """A connection to one ``.ragdb`` file, shared by the threads of one process (calls are serialized).

    Every SQLite error leaves as an ``AgenttyError`` (see ``classify``): callers never see ``sqlite3``.
    """

    def __init__(self, path: Path, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self._lock = threading.RLock()
        if str(path) != ":memory:":
            refuse_links(path)
        try:
            self._db = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
        except _ERRORS as error:
            raise classify(error, path.name) from error
        try:
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA cell_size_check=ON")  # more damaged pages are caught as corruption
            known = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"meta", "files", "chunks", "vocab", "segments", "vectors"} <= known:
                # A new database (or one from before a table existed): this needs a write lock.
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.executescript(_SCHEMA)
            version = dict(self._db.execute("SELECT key, value FROM meta").fetchall()).get("schema_version")
        except _ERRORS as error:
            with contextlib.suppress(*_ERRORS):
                self._db.close()
            raise classify(error, path.name) from error
        if version is None:
            self.set_meta({"schema_version": str(SCHEMA_VERSION)})
        elif version != str(SCHEMA_VERSION):
            self._db.close()
            raise IndexCorrupt(f"{path.name} has schema version {version}; this version reads {SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock, contextlib.suppress(*_ERRORS):
            self._db.close()

    @staticmethod
    def delete_files(path: Path) -> None:
        """Remove a database and its write-ahead log files (for a rebuild after corruption)."""
        for suffix in SIDECARS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{path}{suffix}")

    def _run(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """One statement's rows; a SQLite error becomes the ``AgenttyError`` it stands for."""
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except _ERRORS as error:
                raise classify(error, self.path.name) from error

    def _run_many(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        with self._lock:
            try:
                self._db.executemany(sql, rows)
            except _ERRORS as error:
                raise classify(error, self.path.name) from error

    def _rollback(self) -> None:
        with contextlib.suppress(*_ERRORS):
            self._db.execute("ROLLBACK")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all; the generation is bumped on commit."""
        with self._lock:
            self._run("BEGIN IMMEDIATE")
            try:
                yield
                generation = int(self.meta().get("generation", "0")) + 1
                self.set_meta({"generation": str(generation)})
                self._run("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def quick_check(self) -> None:
        """``PRAGMA quick_check``: raise ``IndexCorrupt`` unless the database's structure is sound."""
        rows = self._run("PRAGMA quick_check")
        if [row[0] for row in rows] != ["ok"]:
            raise IndexCorrupt(f"{self.path.name} failed its integrity check ({rows[0][0]})")

    # -- reads ----------------------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        """The ``meta`` table; ``IndexCorrupt`` when it does not match the checksum kept with it."""
        meta = dict(self._run("SELECT key, value FROM meta"))
        stored = meta.pop(_META_SUM, None)
        if stored is not None and stored != _meta_checksum(meta):
            raise IndexCorrupt(f"the header of {self.path.name} does not match its checksum")
        return meta

    def generation(self) -> int:
        rows = self._run("SELECT value FROM meta WHERE key = 'generation'")
        return _integer(rows[0][0]) if rows else 0

    def files(self) -> dict[str, FileRow]:
        """Every file's row (the manifest), each checked against its checksum: a damaged key, skip reason or
        count would otherwise index a file twice or drop it in silence."""
        rows = self._run("SELECT key, size, mtime_ns, hash, chunks, skip, redacted, checksum FROM files")
        for row in rows:
            if checksum(*row[:-1]) != row[-1]:
                raise IndexCorrupt(f"the row of {str(row[0])[:200]!r} in {self.path.name} does not match its checksum")
        return {r[0]: FileRow(*r[1:-1]) for r in rows}

    def live_slots(self, below: int) -> npt.NDArray[np.int32]:
        """Every chunk's slot; ``IndexCorrupt`` unless they are distinct and under ``below`` (the next slot to
        give): a row whose key was damaged is never found by its slot to have its checksum checked."""
        slots = [r[0] for r in self._run("SELECT slot FROM chunks")]
        if len(set(slots)) != len(slots) or not all(0 <= slot < below for slot in slots):
            raise IndexCorrupt(f"the chunk slots of {self.path.name} are damaged")
        return np.asarray(slots, np.int32)

    def segments(self, fields: Sequence[str]) -> tuple[dict[str, Segment], dict[str, npt.NDArray[np.float64]]]:
        rows = self._run("SELECT field, n_terms, indptr, slots, tfs, lengths, checksum FROM segments")
        segments: dict[str, Segment] = {}
        lengths: dict[str, npt.NDArray[np.float64]] = {}
        for name, n_terms, indptr, slots, tfs, lens, stored_sum in rows:
            if name not in fields:
                continue
            if checksum(name, n_terms, indptr, slots, tfs, lens) != stored_sum:
                raise IndexCorrupt(f"the {name} postings in {self.path.name} do not match their checksum")
            if len(indptr) % 8 or len(slots) % 4 or len(tfs) % 4 or len(lens) % 4:
                raise IndexCorrupt(f"the {name} postings in {self.path.name} are truncated")
            segment = Segment(
                np.frombuffer(indptr, np.int64),
                np.frombuffer(slots, np.int32),
                np.frombuffer(tfs, np.float32),
            )
            if (
                segment.n_terms != n_terms
                or int(segment.indptr[-1]) != len(segment.slots)
                or len(segment.slots) != len(segment.tfs)
            ):
                raise IndexCorrupt(f"the {name} postings in {self.path.name} are inconsistent")
            segments[name] = segment
            lengths[name] = np.frombuffer(lens, np.float32).astype(np.float64)
        return segments, lengths

    def _verified(self, where: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Full chunk rows (slot first, then ``_SUMMED_COLUMNS``) matching ``where``, each checked against its
        checksum."""
        rows = self._run(f"SELECT slot, {_SUMMED_COLUMNS}, checksum FROM chunks {where}", params)
        for row in rows:
            if checksum(*row[:-1]) != row[-1]:
                raise IndexCorrupt(f"chunk {row[0]} in {self.path.name} does not match its checksum")
        return rows

    def _verified_in(self, keys: Sequence[object]) -> Iterator[tuple[Any, ...]]:
        for i in range(0, len(keys), 500):
            batch = list(keys[i : i + 500])
            yield from self._verified(f"WHERE slot IN ({','.join('?' * len(batch))})", batch)

    def delta_terms(self, fields: Sequence[str], from_slot: int) -> Iterator[tuple[int, dict[str, FieldTerms]]]:
        for row in self._verified("WHERE slot >= ? ORDER BY slot", (from_slot,)):
            yield row[0], decode_terms(fields, row[_TERMS])

    def _rows_in(self, sql: str, keys: Sequence[object], *before: object) -> Iterator[tuple[Any, ...]]:
        """Rows of ``sql`` (with one ``IN ({marks})``, after the parameters ``before``) for every key, 500 keys
        per statement."""
        with self._lock:
            for i in range(0, len(keys), 500):
                batch = [*before, *keys[i : i + 500]]
                marks = ",".join("?" * (len(batch) - len(before)))
                yield from self._run(sql.format(marks=marks), batch)

    def lookup_terms(self, terms: Iterable[str]) -> dict[str, int]:
        rows = list(self._rows_in("SELECT term, id, checksum FROM vocab WHERE term IN ({marks})", sorted(set(terms))))
        if any(checksum(term, term_id) != stored for term, term_id, stored in rows):
            raise IndexCorrupt(f"a term of {self.path.name} does not match its checksum")
        return {term: term_id for term, term_id, _ in rows}

    def vocab_size(self) -> int:
        return int(self._run("SELECT COALESCE(MAX(id) + 1, 0) FROM vocab")[0][0])

    def chunks(self, slots: Sequence[int]) -> dict[int, Chunk]:
        return {row[0]: _chunk_of_full(row) for row in self._verified_in(slots)}

    def term_blobs(self, slots: Sequence[int]) -> dict[int, bytes]:
        return {row[0]: row[_TERMS] for row in self._verified_in(slots)}

    def chunk_rows(self, slots: Sequence[int]) -> dict[int, tuple[Chunk, bytes]]:
        """Each chunk with its encoded terms, in one checked read."""
        return {row[0]: (_chunk_of_full(row), row[_TERMS]) for row in self._verified_in(slots)}

    def chunk_attributes(self) -> list[tuple[int, str, str, str]]:
        """(slot, source, ref, language) of every chunk, for filters."""
        rows = self._run("SELECT slot, source, ref, language FROM chunks")
        if not all(isinstance(value, str) for row in rows for value in row[1:]):
            raise IndexCorrupt(f"a chunk's provenance in {self.path.name} is not text")
        return rows

    def slots_of_files(self, keys: Iterable[str]) -> list[int]:
        return [row[0] for row in self._rows_in("SELECT slot FROM chunks WHERE file_key IN ({marks})", list(keys))]

    def missing_vectors(self, profile: str, limit: int) -> list[tuple[int, str, Chunk]]:
        """Up to ``limit`` (slot, embed hash, chunk) of live chunks without a vector for ``profile``."""
        where = (
            "c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.profile = ? AND v.hash = c.embed_hash) "
            "ORDER BY c.slot LIMIT ?"
        )
        return [(row[0], row[_EMBED_HASH], _chunk_of_full(row)) for row in self._verified(where, (profile, limit))]

    def vectors(self, profile: str, slots: Sequence[int] | None = None) -> list[tuple[int, bytes]]:
        """(slot, float16 vector bytes) of every live chunk (or of ``slots``) with a vector for ``profile``."""
        join = "SELECT c.slot, v.vector FROM chunks c JOIN vectors v ON v.profile = ? AND v.hash = c.embed_hash"
        if slots is None:
            rows = self._run(join, (profile,))
        else:
            rows = list(self._rows_in(join + " WHERE c.slot IN ({marks})", slots, profile))
        return [(slot, open_vector(sealed)) for slot, sealed in rows]

    def write_vectors(self, profile: str, rows: Iterable[tuple[str, bytes]]) -> None:
        """Store vectors in their own transaction. The generation is not bumped: vectors never change what
        BM25 holds, so other processes need not reload; they read vectors when they next load them."""
        with self._lock:
            self._run("BEGIN IMMEDIATE")
            try:
                self._run_many(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", [(profile, h, seal_vector(v)) for h, v in rows]
                )
                self._run("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def import_vectors(self, other: Path) -> int:
        """Copy every vector of another index database that this one lacks (same profile and text hash)."""
        with self._lock:
            before = self._run("SELECT COUNT(*) FROM vectors")[0][0]
            self._run("ATTACH DATABASE ? AS other", (str(other),))
            try:
                self._run("BEGIN IMMEDIATE")
                self._run("INSERT OR IGNORE INTO vectors SELECT profile, hash, vector FROM other.vectors")
                self._run("COMMIT")
            finally:
                self._run("DETACH DATABASE other")
            after = self._run("SELECT COUNT(*) FROM vectors")[0][0]
        return int(after - before)

    def prune_vectors(self) -> None:
        """Drop vectors no live chunk uses (kept until the table is twice the live chunks: reverts reuse them)."""
        with self._lock:
            count = self._run("SELECT COUNT(*) FROM vectors")[0][0]
            live = self._run("SELECT COUNT(*) FROM chunks")[0][0]
            if count > 2 * max(live, 1000):
                self._run("DELETE FROM vectors WHERE hash NOT IN (SELECT embed_hash FROM chunks)")

    def has_vectors(self) -> bool:
        """Whether any embedding is stored (of any profile)."""
        return bool(self._run("SELECT 1 FROM vectors LIMIT 1"))

    def counts(self) -> tuple[int, int]:
        """(files, chunks)."""
        files = self._run("SELECT COUNT(*) FROM files WHERE skip = ''")[0][0]
        chunks = self._run("SELECT COUNT(*) FROM chunks")[0][0]
        return int(files), int(chunks)

    # -- writes (call inside ``transaction()``) -------------------------------------------------------------

    def set_meta(self, values: Mapping[str, str]) -> None:
        """Write ``meta`` entries and the checksum over the whole table."""
        with self._lock:
            self._run_many("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))
            meta = {key: value for key, value in self._run("SELECT key, value FROM meta") if key != _META_SUM}
            self._run("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_META_SUM, _meta_checksum(meta)))

    def clear(self) -> None:
        with self._lock:
            for table in ("files", "chunks", "vocab", "segments"):
                self._run(f"DELETE FROM {table}")
            self._run("DELETE FROM meta WHERE key NOT IN ('schema_version', 'generation')")
            self.set_meta({})

    def add_terms(self, terms: Mapping[str, int]) -> None:
        self._run_many("INSERT INTO vocab VALUES (?, ?, ?)", [(t, i, checksum(t, i)) for t, i in terms.items()])

    def put_files(self, rows: Mapping[str, FileRow]) -> None:
        self._run_many(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(*values, checksum(*values)) for values in _file_values(rows)],
        )

    def delete_files_rows(self, keys: Iterable[str]) -> None:
        self._run_many("DELETE FROM files WHERE key = ?", [(k,) for k in keys])

    def delete_chunks(self, slots: Iterable[int]) -> None:
        self._run_many("DELETE FROM chunks WHERE slot = ?", [(s,) for s in slots])

    def put_chunks(self, rows: Iterable[tuple[int, str, Chunk, bytes]]) -> None:
        """Insert (slot, file key, chunk, encoded terms) rows, each with its checksum."""
        self._run_many(
            "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (_chunk_row(slot, key, c, blob) for slot, key, c, blob in rows),
        )

    def put_segments(self, segments: Mapping[str, Segment], lengths: Mapping[str, npt.NDArray[np.float64]]) -> None:
        rows = []
        for name, seg in segments.items():
            values = (
                name,
                seg.n_terms,
                seg.indptr.astype(np.int64).tobytes(),
                seg.slots.astype(np.int32).tobytes(),
                seg.tfs.astype(np.float32).tobytes(),
                lengths[name].astype(np.float32).tobytes(),
            )
            rows.append((*values, checksum(*values)))
        with self._lock:
            self._run("DELETE FROM segments")
            self._run_many("INSERT INTO segments VALUES (?, ?, ?, ?, ?, ?, ?)", rows)


# Positions in a ``_verified`` row: the slot, then ``_SUMMED_COLUMNS``, then the checksum.
_TERMS = 13
_EMBED_HASH = 14


def _chunk_row(slot: int, key: str, chunk: Chunk, blob: bytes) -> tuple[object, ...]:
    """A chunks-table row: the slot, ``_SUMMED_COLUMNS`` in order, and their checksum."""
    c = chunk
    summed = (
        key,
        c.chunk_id,
        c.source,
        c.ref,
        c.start_line,
        c.end_line,
        c.language,
        c.kind,
        c.context,
        c.symbol,
        c.title,
        c.text,
        blob,
        embed_hash(c),
    )
    return (slot, *summed, checksum(slot, *summed))


def _chunk_of_full(row: Sequence[Any]) -> Chunk:
    """A chunk from a ``_verified`` row."""
    _, _, _, source, ref, start, end, language, kind, context, symbol, title, text = row[:13]
    return Chunk(source, ref, start, end, text, language, kind, context, symbol, title)


def _integer(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise IndexCorrupt(f"a stored number is not a number ({value!r:.40})") from None


def refuse_links(path: Path) -> None:
    """``IndexUnwritable`` when the database or one of its sidecar files is a link (or not a regular file):
    SQLite would follow it and write wherever it points."""
    for suffix in SIDECARS:
        try:
            refuse_link(Path(f"{path}{suffix}"))
        except UnsafeFile as error:
            raise IndexUnwritable(str(error)) from None


def classify(error: sqlite3.Error | UnicodeDecodeError, name: str) -> AgenttyError:
    """What a SQLite error means for the index: busy (try again), cannot be written here (keep the index in
    memory), or corrupt (rebuild). Busy and unwritable are never corruption: rebuilding would not help and
    would throw a good index away."""
    if isinstance(error, UnicodeDecodeError):  # SQLite's own message quoted damaged bytes
        return IndexCorrupt(f"{name} is not a readable index (a damaged schema)")
    text = str(error).lower()
    if "locked" in text or "busy" in text:
        return IndexBusy(f"{name} is busy ({error}); try again")
    if any(word in text for word in ("readonly", "read-only", "unable to open", "disk i/o", "full", "permission")):
        return IndexUnwritable(f"{name} cannot be written ({error})")
    return IndexCorrupt(f"{name} is not a readable index ({error})")


def embed_text(chunk: Chunk) -> str:
    """What is embedded for a chunk: where it is (path, heading or symbol path), then its text."""
    where = chunk.symbol or chunk.context
    head = f"{chunk.ref} · {where}" if where else chunk.ref
    return f"{head}\n{chunk.text}"[:4000]


def embed_hash(chunk: Chunk) -> str:
    return xxhash.xxh3_128_hexdigest(embed_text(chunk).encode("utf-8", "surrogatepass"))


def dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


__all__ = [
    "SCHEMA_VERSION",
    "FileRow",
    "SIDECARS",
    "Store",
    "checksum",
    "classify",
    "decode_terms",
    "dumps",
    "embed_hash",
    "embed_text",
    "encode_terms",
    "open_vector",
    "refuse_links",
    "seal_vector",
]
