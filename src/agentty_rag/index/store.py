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

from agentty_rag.errors import AgenttyError, IndexBusy, IndexCorrupt
from agentty_rag.index.lexical import FieldTerms, Segment
from agentty_rag.types import Chunk

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    key TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL,
    chunks INTEGER NOT NULL, skip TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS chunks (
    slot INTEGER PRIMARY KEY, file_key TEXT NOT NULL, chunk_id TEXT NOT NULL, source TEXT NOT NULL,
    ref TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, language TEXT NOT NULL,
    kind TEXT NOT NULL, context TEXT NOT NULL, symbol TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
    terms BLOB NOT NULL, embed_hash TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks(file_key);
CREATE TABLE IF NOT EXISTS vectors (
    profile TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (profile, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vocab (term TEXT PRIMARY KEY, id INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (
    field TEXT PRIMARY KEY, n_terms INTEGER NOT NULL, indptr BLOB NOT NULL, slots BLOB NOT NULL,
    tfs BLOB NOT NULL, lengths BLOB NOT NULL
);
"""

_CHUNK_COLUMNS = "slot, source, ref, start_line, end_line, text, language, kind, context, symbol, title"


@dataclass(frozen=True, slots=True)
class FileRow:
    size: int
    mtime_ns: int
    hash: str
    chunks: int
    skip: str = ""


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
    """A connection to one ``.ragdb`` file, shared by the threads of one process (calls are serialized)."""

    def __init__(self, path: Path, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute("PRAGMA synchronous=NORMAL")
            known = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"meta", "files", "chunks", "vocab", "segments", "vectors"} <= known:
                # A new database (or one from before a table existed): this needs a write lock.
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.executescript(_SCHEMA)
            version = self.meta().get("schema_version")
        except sqlite3.OperationalError as error:
            self._db.close()
            raise unusable(error, path.name) from error
        except sqlite3.DatabaseError as error:
            with contextlib.suppress(Exception):
                self._db.close()
            raise IndexCorrupt(f"{path.name} is not a readable index ({error})") from error
        if version is None:
            self.set_meta({"schema_version": str(SCHEMA_VERSION)})
        elif version != str(SCHEMA_VERSION):
            self._db.close()
            raise IndexCorrupt(f"{path.name} has schema version {version}; this version reads {SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()

    @staticmethod
    def delete_files(path: Path) -> None:
        """Remove a database and its write-ahead log files (for a rebuild after corruption)."""
        for suffix in ("", "-wal", "-shm", "-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{path}{suffix}")

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all; the generation is bumped on commit."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
                generation = int(self.meta().get("generation", "0")) + 1
                self._db.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (str(generation),))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    # -- reads ----------------------------------------------------------------------------------------------

    def meta(self) -> dict[str, str]:
        with self._lock:
            return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    def generation(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def files(self) -> dict[str, FileRow]:
        with self._lock:
            rows = self._db.execute("SELECT key, size, mtime_ns, hash, chunks, skip FROM files").fetchall()
        return {r[0]: FileRow(r[1], r[2], r[3], r[4], r[5]) for r in rows}

    def live_slots(self) -> npt.NDArray[np.int32]:
        with self._lock:
            rows = self._db.execute("SELECT slot FROM chunks").fetchall()
        return np.asarray([r[0] for r in rows], np.int32)

    def segments(self, fields: Sequence[str]) -> tuple[dict[str, Segment], dict[str, npt.NDArray[np.float64]]]:
        with self._lock:
            rows = self._db.execute("SELECT field, n_terms, indptr, slots, tfs, lengths FROM segments").fetchall()
        segments: dict[str, Segment] = {}
        lengths: dict[str, npt.NDArray[np.float64]] = {}
        for name, n_terms, indptr, slots, tfs, lens in rows:
            if name not in fields:
                continue
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

    def delta_terms(self, fields: Sequence[str], from_slot: int) -> Iterator[tuple[int, dict[str, FieldTerms]]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT slot, terms FROM chunks WHERE slot >= ? ORDER BY slot", (from_slot,)
            ).fetchall()
        for slot, blob in rows:
            yield slot, decode_terms(fields, blob)

    def _rows_in(self, sql: str, keys: Sequence[object], *before: object) -> Iterator[tuple[Any, ...]]:
        """Rows of ``sql`` (with one ``IN ({marks})``, after the parameters ``before``) for every key, 500 keys
        per statement."""
        with self._lock:
            for i in range(0, len(keys), 500):
                batch = [*before, *keys[i : i + 500]]
                marks = ",".join("?" * (len(batch) - len(before)))
                yield from self._db.execute(sql.format(marks=marks), batch).fetchall()

    def lookup_terms(self, terms: Iterable[str]) -> dict[str, int]:
        return dict(self._rows_in("SELECT term, id FROM vocab WHERE term IN ({marks})", sorted(set(terms))))

    def vocab_size(self) -> int:
        with self._lock:
            row = self._db.execute("SELECT COALESCE(MAX(id) + 1, 0) FROM vocab").fetchone()
        return int(row[0])

    def chunks(self, slots: Sequence[int]) -> dict[int, Chunk]:
        out: dict[int, Chunk] = {}
        for row in self._rows_in(f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE slot IN ({{marks}})", slots):
            out[row[0]] = _chunk_of(row)
        return out

    def term_blobs(self, slots: Sequence[int]) -> dict[int, bytes]:
        return dict(self._rows_in("SELECT slot, terms FROM chunks WHERE slot IN ({marks})", slots))

    def chunk_attributes(self) -> list[tuple[int, str, str, str]]:
        """(slot, source, ref, language) of every chunk, for filters."""
        with self._lock:
            return self._db.execute("SELECT slot, source, ref, language FROM chunks").fetchall()

    def slots_of_files(self, keys: Iterable[str]) -> list[int]:
        return [row[0] for row in self._rows_in("SELECT slot FROM chunks WHERE file_key IN ({marks})", list(keys))]

    def missing_vectors(self, profile: str, limit: int) -> list[tuple[int, str, Chunk]]:
        """Up to ``limit`` (slot, embed hash, chunk) of live chunks without a vector for ``profile``."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT c.embed_hash, {_CHUNK_COLUMNS} FROM chunks c WHERE NOT EXISTS "
                "(SELECT 1 FROM vectors v WHERE v.profile = ? AND v.hash = c.embed_hash) ORDER BY c.slot LIMIT ?",
                (profile, limit),
            ).fetchall()
        return [(row[1], row[0], _chunk_of(row[1:])) for row in rows]

    def vectors(self, profile: str, slots: Sequence[int] | None = None) -> list[tuple[int, bytes]]:
        """(slot, float16 vector bytes) of every live chunk (or of ``slots``) with a vector for ``profile``."""
        join = "SELECT c.slot, v.vector FROM chunks c JOIN vectors v ON v.profile = ? AND v.hash = c.embed_hash"
        if slots is None:
            with self._lock:
                return self._db.execute(join, (profile,)).fetchall()
        return list(self._rows_in(join + " WHERE c.slot IN ({marks})", slots, profile))

    def write_vectors(self, profile: str, rows: Iterable[tuple[str, bytes]]) -> None:
        """Store vectors in their own transaction. The generation is not bumped: vectors never change what
        BM25 holds, so other processes need not reload; they read vectors when they next load them."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", [(profile, h, v) for h, v in rows]
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def import_vectors(self, other: Path) -> int:
        """Copy every vector of another index database that this one lacks (same profile and text hash)."""
        with self._lock:
            before = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            self._db.execute("ATTACH DATABASE ? AS other", (str(other),))
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute("INSERT OR IGNORE INTO vectors SELECT profile, hash, vector FROM other.vectors")
                self._db.execute("COMMIT")
            finally:
                self._db.execute("DETACH DATABASE other")
            after = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
        return int(after - before)

    def prune_vectors(self) -> None:
        """Drop vectors no live chunk uses (kept until the table is twice the live chunks: reverts reuse them)."""
        with self._lock:
            count = self._db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            live = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            if count > 2 * max(live, 1000):
                self._db.execute("DELETE FROM vectors WHERE hash NOT IN (SELECT embed_hash FROM chunks)")

    def has_vectors(self) -> bool:
        """Whether any embedding is stored (of any profile)."""
        with self._lock:
            return self._db.execute("SELECT 1 FROM vectors LIMIT 1").fetchone() is not None

    def counts(self) -> tuple[int, int]:
        """(files, chunks)."""
        with self._lock:
            files = self._db.execute("SELECT COUNT(*) FROM files WHERE skip = ''").fetchone()[0]
            chunks = self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return int(files), int(chunks)

    # -- writes (call inside ``transaction()``) -------------------------------------------------------------

    def set_meta(self, values: Mapping[str, str]) -> None:
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(values.items()))

    def clear(self) -> None:
        with self._lock:
            for table in ("files", "chunks", "vocab", "segments"):
                self._db.execute(f"DELETE FROM {table}")
            self._db.execute("DELETE FROM meta WHERE key NOT IN ('schema_version', 'generation')")

    def add_terms(self, terms: Mapping[str, int]) -> None:
        with self._lock:
            self._db.executemany("INSERT INTO vocab VALUES (?, ?)", list(terms.items()))

    def put_files(self, rows: Mapping[str, FileRow]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?)",
                [(k, r.size, r.mtime_ns, r.hash, r.chunks, r.skip) for k, r in rows.items()],
            )

    def delete_files_rows(self, keys: Iterable[str]) -> None:
        with self._lock:
            self._db.executemany("DELETE FROM files WHERE key = ?", [(k,) for k in keys])

    def delete_chunks(self, slots: Iterable[int]) -> None:
        with self._lock:
            self._db.executemany("DELETE FROM chunks WHERE slot = ?", [(s,) for s in slots])

    def put_chunks(self, rows: Iterable[tuple[int, str, Chunk, bytes]]) -> None:
        """Insert (slot, file key, chunk, encoded terms) rows."""
        with self._lock:
            self._db.executemany(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        slot,
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
                    for slot, key, c, blob in rows
                ),
            )

    def put_segments(self, segments: Mapping[str, Segment], lengths: Mapping[str, npt.NDArray[np.float64]]) -> None:
        with self._lock:
            self._db.execute("DELETE FROM segments")
            self._db.executemany(
                "INSERT INTO segments VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (
                        name,
                        seg.n_terms,
                        seg.indptr.astype(np.int64).tobytes(),
                        seg.slots.astype(np.int32).tobytes(),
                        seg.tfs.astype(np.float32).tobytes(),
                        lengths[name].astype(np.float32).tobytes(),
                    )
                    for name, seg in segments.items()
                ],
            )


def _chunk_of(row: Sequence[Any]) -> Chunk:
    """A chunk from a row of ``_CHUNK_COLUMNS`` (its slot first)."""
    _, source, ref, start, end, text, language, kind, context, symbol, title = row
    return Chunk(source, ref, start, end, text, language, kind, context, symbol, title)


def unusable(error: sqlite3.OperationalError, name: str) -> AgenttyError:
    """A database that is locked or cannot be reached (busy, no permission, disk full) — not corruption:
    rebuilding would not help and would throw away a good index."""
    if "locked" in str(error) or "busy" in str(error):
        return IndexBusy(f"{name} is busy ({error}); try again")
    return AgenttyError(f"{name} cannot be used: {error}")


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
    "Store",
    "decode_terms",
    "dumps",
    "embed_hash",
    "embed_text",
    "encode_terms",
    "unusable",
]
