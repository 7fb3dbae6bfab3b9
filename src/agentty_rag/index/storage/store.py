"""The ``.ragdb`` file: one SQLite database per index, the only thing written under ``.agentty/``.

SQLite gives transactions (a process killed mid-update leaves the previous index), concurrent readers
(write-ahead log) and corruption detection. Tables:

* ``meta(key, value)``: schema version, generation (bumped by every commit), manifest header, skip report.
* ``files(key, size, mtime_ns, hash, chunks)``: every indexed file's stamp and content hash (the manifest).
* ``chunks(slot, file_key, ...)``: each chunk's provenance, narrow, so that reading every chunk's attributes
  stays quick.
* ``bodies(slot, text, terms)``: each chunk's text (zlib-compressed when that saves room) and its terms per
  field (``chunk_terms.py``'s packed blob). The ``chunk_rows`` view joins the two.
* ``vocab(term, id)``: term ids; queries look up their few terms instead of loading the vocabulary.
* ``segments(field, ...)``: the compacted postings of each field (numpy arrays as blobs) and slot lengths,
  read and written by the lexical backend (``lexical/sqlite.py``).
* ``vectors(profile, hash, vector)``: embeddings, kept and read by ``vectors/sqlite.py``.

Chunks added after the last compaction (slots at or above ``meta.base_slots``) are read from their term
blobs into the in-memory delta at open.

Large values live on SQLite's overflow pages, where a damaged page changes the bytes without any error, and
a flipped bit can turn text into bytes or move a term to another id. So the header (``meta``), every file
row, chunk row (with its body), term and segment carries a checksum; a value that does not match is corruption
(``IndexCorrupt``: the index is rebuilt), never a silently wrong answer. Every checksum is sealed with this
machine's key (``Store(key=...)``, from ``state.machine_key``), and the header names the key
(``sealed_by``): an index written elsewhere (committed, copied) is ``IndexForeign``, and a row changed by
anyone without the key matches nothing. The connection and the meaning of
SQLite's errors are ``database.py``'s.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexBusy, IndexCorrupt, IndexForeign
from agentty_rag.index.lexical.chunk_terms import decode_terms
from agentty_rag.index.lexical.protocol import FieldTerms
from agentty_rag.index.storage.database import ERRORS, Database, checksum, classify, mark
from agentty_rag.index.storage.records import ChunkRecord, chunk_record, term_sum, unpack_text
from agentty_rag.types import Chunk

SCHEMA_VERSION = 7
_META_SUM = "checksum"
# The header's record of the key that sealed the index (``database.mark``).
MARK = "sealed_by"
# Kept by ``clear``: the generation, and when an index built elsewhere was found and rebuilt (for ``status``).
FOREIGN_REPLACED = "foreign_replaced_at"
_KEPT_BY_CLEAR = ("schema_version", "generation", FOREIGN_REPLACED)


_TERM_ROW = "SELECT term, id, checksum FROM vocab"
_TABLES = frozenset({"meta", "files", "chunks", "bodies", "vocab", "segments", "vectors"})
# Between two tries at creating the tables while another process holds the write lock.
_RETRY_S = 0.05
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    key TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL,
    chunks INTEGER NOT NULL, skip TEXT NOT NULL DEFAULT '', redacted INTEGER NOT NULL DEFAULT 0,
    checksum TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    slot INTEGER PRIMARY KEY, file_key TEXT NOT NULL, source TEXT NOT NULL,
    ref TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, language TEXT NOT NULL,
    kind TEXT NOT NULL, context TEXT NOT NULL, symbol TEXT NOT NULL, title TEXT NOT NULL,
    embed_hash TEXT NOT NULL, checksum TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_file ON chunks(file_key);
CREATE TABLE IF NOT EXISTS bodies (slot INTEGER PRIMARY KEY, text NOT NULL, terms BLOB NOT NULL);
CREATE VIEW IF NOT EXISTS chunk_rows AS SELECT c.*, b.text, b.terms FROM chunks c JOIN bodies b ON b.slot = c.slot;
CREATE TABLE IF NOT EXISTS vectors (
    profile TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (profile, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vocab (term TEXT PRIMARY KEY, id INTEGER NOT NULL, checksum INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (
    field TEXT PRIMARY KEY, n_terms INTEGER NOT NULL, indptr BLOB NOT NULL, slots BLOB NOT NULL,
    tfs BLOB NOT NULL, lengths BLOB NOT NULL, checksum TEXT NOT NULL
);
"""

# A chunk's content (every column but the slot and the terms, the text as stored), summed once where it is
# made: a build's worker process. The row's checksum covers the slot, that sum and the terms.
_CONTENT_COLUMNS = (
    "file_key, source, ref, start_line, end_line, language, kind, context, symbol, title, embed_hash, text"
)


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


class Store(Database):
    """A connection to one ``.ragdb`` file, shared by the threads of one process (calls are serialized).

    Every SQLite error leaves as an ``AgenttyError`` (see ``database.classify``): callers never see ``sqlite3``.
    """

    def __init__(self, path: Path, key: bytes = b"", busy_timeout_s: float = 30.0) -> None:
        super().__init__(path, busy_timeout_s)
        self._key = key
        self.mark = mark(key)
        try:
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA cell_size_check=ON")  # more damaged pages are caught as corruption
            self._create_tables(time.monotonic() + busy_timeout_s)
            version = dict(self._db.execute("SELECT key, value FROM meta").fetchall()).get("schema_version")
        except (*ERRORS, IndexCorrupt) as error:
            with contextlib.suppress(*ERRORS):
                self._db.close()
            if isinstance(error, IndexCorrupt):
                raise
            raise classify(error, path.name) from error
        if version is None:
            self.set_meta({"schema_version": str(SCHEMA_VERSION)})
        elif version != str(SCHEMA_VERSION):
            self._db.close()
            raise IndexCorrupt(f"{path.name} has schema version {version}; this version reads {SCHEMA_VERSION}")

    def _create_tables(self, deadline: float) -> None:
        """Create the tables of a new database (``IndexCorrupt`` when a database has some of them only). This
        needs a write lock, and SQLite answers "locked" at once, without waiting, when another process holds one
        while the journal mode changes: two processes opening a new index together retry here until
        ``deadline``."""
        while True:
            try:
                known = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if _TABLES <= known:
                    return
                if known & _TABLES:
                    # The tables are made together: an index that has some lost the others' schema entries (a
                    # damaged first page); new empty ones would answer every search with nothing.
                    missing = ", ".join(sorted(_TABLES - known))
                    raise IndexCorrupt(f"{self.path.name} has lost its tables {missing}")
                self._db.execute("PRAGMA journal_mode=WAL")
                # In one transaction: another process opening the index never sees some of the tables only,
                # which reads as damage above.
                self._db.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")
                return
            except sqlite3.OperationalError as error:
                if self._db.in_transaction:
                    self._db.rollback()
                if not isinstance(classify(error, self.path.name), IndexBusy) or time.monotonic() >= deadline:
                    raise
                time.sleep(_RETRY_S)

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """All writes inside commit together or not at all; the generation is bumped on commit."""
        with self.immediate():
            yield
            generation = int(self.meta().get("generation", "0")) + 1
            self.set_meta({"generation": str(generation)})

    # -- reads ----------------------------------------------------------------------------------------------

    def sealed(self, *parts: object) -> str:
        """The checksum of ``parts``, sealed with this machine's key (``database.checksum``)."""
        return checksum(*parts, key=self._key)

    def _meta_checksum(self, meta: Mapping[str, object]) -> str:
        return self.sealed(*(part for key in sorted(meta) for part in (key, meta[key])))

    def meta(self) -> dict[str, str]:
        """The ``meta`` table; ``IndexForeign`` when another key sealed it (the index was built elsewhere),
        ``IndexCorrupt`` when it does not match the checksum kept with it."""
        meta = dict(self.run("SELECT key, value FROM meta"))
        if not all(isinstance(key, str) and isinstance(value, str) for key, value in meta.items()):
            raise IndexCorrupt(f"the header of {self.path.name} holds a value that is not text")  # a flipped type
        stored = meta.pop(_META_SUM, None)
        if meta.get(MARK) != self.mark:
            raise IndexForeign(f"{self.path.name} was not built on this machine")
        if stored != self._meta_checksum(meta):
            raise IndexCorrupt(f"the header of {self.path.name} does not match its checksum")
        return meta

    def generation(self) -> int:
        rows = self.run("SELECT value FROM meta WHERE key = 'generation'")
        return _integer(rows[0][0]) if rows else 0

    def files(self) -> dict[str, FileRow]:
        """Every file's row (the manifest), each checked against its checksum: a damaged key, skip reason or
        count would otherwise index a file twice or drop it in silence."""
        rows = self.run("SELECT key, size, mtime_ns, hash, chunks, skip, redacted, checksum FROM files")
        for row in rows:
            if self.sealed(*row[:-1]) != row[-1]:
                raise IndexCorrupt(f"the row of {str(row[0])[:200]!r} in {self.path.name} does not match its checksum")
        return {r[0]: FileRow(*r[1:-1]) for r in rows}

    def live_slots(self, below: int) -> npt.NDArray[np.int32]:
        """Every chunk's slot; ``IndexCorrupt`` unless they are distinct and under ``below`` (the next slot to
        give): a row whose key was damaged is never found by its slot to have its checksum checked."""
        slots = [r[0] for r in self.run("SELECT slot FROM chunks")]
        if len(set(slots)) != len(slots) or not all(0 <= slot < below for slot in slots):
            raise IndexCorrupt(f"the chunk slots of {self.path.name} are damaged")
        return np.asarray(slots, np.int32)

    def _verified(self, where: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Full chunk rows (slot, ``_CONTENT_COLUMNS``, terms) matching ``where`` (the ``chunk_rows`` view),
        each checked against its checksum."""
        rows = self.run(f"SELECT slot, {_CONTENT_COLUMNS}, terms, checksum FROM chunk_rows {where}", params)
        for row in rows:
            if self.sealed(row[0], checksum(*row[1:_TERMS]), row[_TERMS]) != row[-1]:
                raise IndexCorrupt(f"chunk {row[0]} in {self.path.name} does not match its checksum")
        return rows

    def _verified_in(self, keys: Sequence[object]) -> Iterator[tuple[Any, ...]]:
        for i in range(0, len(keys), 500):
            batch = list(keys[i : i + 500])
            yield from self._verified(f"WHERE slot IN ({','.join('?' * len(batch))})", batch)

    def delta_terms(self, fields: Sequence[str], from_slot: int) -> Iterator[tuple[int, dict[str, FieldTerms]]]:
        for row in self._verified("WHERE slot >= ? ORDER BY slot", (from_slot,)):
            yield row[0], decode_terms(fields, row[_TERMS])

    def lookup_terms(self, terms: Iterable[str]) -> dict[str, int]:
        wanted = sorted(set(terms))
        rows = list(self.rows_in(_TERM_ROW + " WHERE term IN ({marks})", wanted))
        found = {term for term, _, _ in rows}
        # A damaged term is a row that no longer matches what it was stored under: the search for the term
        # ends beside it, so the rows on either side of a term that is missing are checked too.
        for missing in (term for term in wanted if term not in found):
            rows += self.run(f"{_TERM_ROW} WHERE term < ? ORDER BY term DESC LIMIT 1", (missing,))
            rows += self.run(f"{_TERM_ROW} WHERE term > ? ORDER BY term LIMIT 1", (missing,))
        if any(term_sum(term, term_id, self._key) != stored for term, term_id, stored in rows):
            raise IndexCorrupt(f"a term of {self.path.name} does not match its checksum")
        return {term: term_id for term, term_id, _ in rows if term in found}

    def vocabulary(self) -> dict[int, str]:
        """Every term by its id, each row checked."""
        rows = self.run(_TERM_ROW)
        if any(term_sum(term, term_id, self._key) != stored for term, term_id, stored in rows):
            raise IndexCorrupt(f"a term of {self.path.name} does not match its checksum")
        return {int(term_id): str(term) for term, term_id, _ in rows}

    def vocab_size(self) -> int:
        return int(self.run("SELECT COALESCE(MAX(id) + 1, 0) FROM vocab")[0][0])

    def chunks(self, slots: Sequence[int]) -> dict[int, Chunk]:
        return {row[0]: _chunk_of_full(row) for row in self._verified_in(slots)}

    def chunk_rows(self, slots: Sequence[int]) -> dict[int, tuple[Chunk, bytes]]:
        """Each chunk with its encoded terms, in one checked read."""
        return {row[0]: (_chunk_of_full(row), row[_TERMS]) for row in self._verified_in(slots)}

    def chunk_attributes(self) -> list[tuple[int, str, str, str]]:
        """(slot, source, ref, language) of every chunk, for filters."""
        rows = self.run("SELECT slot, source, ref, language FROM chunks")
        if not all(isinstance(value, str) for row in rows for value in row[1:]):
            raise IndexCorrupt(f"a chunk's provenance in {self.path.name} is not text")
        return rows

    def chunks_where(self, where: str, params: Sequence[object] = ()) -> list[tuple[int, str, Chunk]]:
        """(slot, embed hash, chunk) of the chunks (table alias ``c``) that ``where`` selects, each checked."""
        return [(row[0], row[_EMBED_HASH], _chunk_of_full(row)) for row in self._verified(where, params)]

    def slots_of_files(self, keys: Iterable[str]) -> list[int]:
        return [row[0] for row in self.rows_in("SELECT slot FROM chunks WHERE file_key IN ({marks})", list(keys))]

    def counts(self) -> tuple[int, int]:
        """(files, chunks)."""
        files = self.run("SELECT COUNT(*) FROM files WHERE skip = ''")[0][0]
        chunks = self.run("SELECT COUNT(*) FROM chunks")[0][0]
        return int(files), int(chunks)

    # -- writes (call inside ``transaction()``) -------------------------------------------------------------

    def set_meta(self, values: Mapping[str, str]) -> None:
        """Write ``meta`` entries and the checksum over the whole table."""
        with self._lock:
            self.run_many("INSERT OR REPLACE INTO meta VALUES (?, ?)", [*values.items(), (MARK, self.mark)])
            meta = {key: value for key, value in self.run("SELECT key, value FROM meta") if key != _META_SUM}
            self.run("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_META_SUM, self._meta_checksum(meta)))

    def clear(self) -> None:
        with self._lock:
            for table in ("files", "chunks", "bodies", "vocab", "segments"):
                self.run(f"DELETE FROM {table}")
            kept = ",".join("?" * len(_KEPT_BY_CLEAR))
            self.run(f"DELETE FROM meta WHERE key NOT IN ({kept})", _KEPT_BY_CLEAR)
            self.set_meta({})

    def add_terms(self, terms: Mapping[str, int]) -> None:
        self.run_many(
            "INSERT INTO vocab VALUES (?, ?, ?)", [(t, i, term_sum(t, i, self._key)) for t, i in terms.items()]
        )

    def put_files(self, rows: Mapping[str, FileRow]) -> None:
        self.run_many(
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(*values, self.sealed(*values)) for values in _file_values(rows)],
        )

    def delete_files_rows(self, keys: Iterable[str]) -> None:
        self.run_many("DELETE FROM files WHERE key = ?", [(k,) for k in keys])

    def delete_chunks(self, slots: Iterable[int]) -> None:
        keys = [(s,) for s in slots]
        self.run_many("DELETE FROM chunks WHERE slot = ?", keys)
        self.run_many("DELETE FROM bodies WHERE slot = ?", keys)

    def put_chunks(self, rows: Iterable[tuple[int, str, Chunk, bytes]]) -> None:
        """Insert (slot, file key, chunk, encoded terms) rows, each with its checksum."""
        self.put_records([(slot, chunk_record(key, c), blob) for slot, key, c, blob in rows])

    def put_records(self, rows: Sequence[tuple[int, ChunkRecord, bytes]]) -> None:
        """Insert (slot, record, encoded terms) rows: the chunk and its body, with the row's checksum."""
        with self._lock:
            self.run_many(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(slot, *r[:11], self.sealed(slot, r.content_sum, blob)) for slot, r, blob in rows],
            )
            self.run_many("INSERT INTO bodies VALUES (?, ?, ?)", [(slot, r.text, blob) for slot, r, blob in rows])


# Positions in a ``_verified`` row: the slot, ``_CONTENT_COLUMNS``, the terms, then the checksum.
_EMBED_HASH = 11
_TEXT = 12
_TERMS = 13


def _chunk_of_full(row: Sequence[Any]) -> Chunk:
    """A chunk from a ``_verified`` row."""
    _, _, source, ref, start, end, language, kind, context, symbol, title = row[:11]
    return Chunk(source, ref, start, end, unpack_text(row[_TEXT]), language, kind, context, symbol, title)


def _integer(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise IndexCorrupt(f"a stored number is not a number ({value!r:.40})") from None


def dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


__all__ = ["FOREIGN_REPLACED", "MARK", "SCHEMA_VERSION", "FileRow", "Store", "dumps"]
