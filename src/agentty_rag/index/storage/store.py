"""The ``.ragdb`` file: one SQLite database per index, the only thing written under ``.agentty/``.

SQLite gives transactions (a process killed mid-update leaves the previous index), concurrent readers
(write-ahead log) and corruption detection. Tables:

* ``meta(key, value)``: schema version, generation (bumped by every commit), manifest header, skip report.
* ``files(key, size, mtime_ns, hash, chunks, ..., first_slot)``: every indexed file's stamp and content hash
  (the manifest). A file's chunks have consecutive slots, from ``first_slot`` (builds, patches and builds in
  parts all number a file's chunks together): the file's slots need no index of their own.
* ``chunks(slot, block_slot, source, ref, language, embed_hash)``: what is read of every chunk (filters, the
  vectors' keys), narrow, so that reading every chunk's attributes stays quick; ``block_slot`` (the first slot
  of its block) names its block's row of ``texts``.
* ``texts(block_slot, chunks, provenance, terms, text)``: the rest of a file's chunks, in blocks of
  consecutive chunks (``records.Block``), each part zlib-compressed as one value: their lines, kind, context,
  symbol and title (JSON), their term lists per field (``chunk_terms.py``'s packed blobs) and their texts.
* ``vocab(term, id)``: term ids; queries look up their few terms instead of loading the vocabulary.
* ``segments(field, ...)``: the compacted postings of each field (numpy arrays as blobs) and slot lengths,
  read and written by the lexical backend (``lexical/sqlite.py``).
* ``vectors(profile, hash, vector)``: embeddings, kept and read by ``vectors/sqlite.py``.

Chunks added after the last compaction (slots at or above ``meta.base_slots``) are read from their term
blobs into the in-memory delta at open.

Large values live on SQLite's overflow pages, where a damaged page changes the bytes without any error, and
a flipped bit can turn text into bytes or move a term to another id. So the header (``meta``), every file
row, chunk row, block of texts, term and segment carries a checksum; a value that does not match is
corruption (``IndexCorrupt``: the index is rebuilt), never a silently wrong answer. Every checksum is sealed
with this machine's key (``Store(key=...)``, from ``state.machine_key``), and the header names the key
(``sealed_by``): an index written elsewhere (committed, copied) is ``IndexForeign``, and a row changed by
anyone without the key matches nothing. The connection and the meaning of
SQLite's errors are ``database.py``'s.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections import OrderedDict
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
from agentty_rag.index.storage.records import (
    Block,
    ChunkRecord,
    Provenance,
    Slices,
    Texts,
    file_records,
    pack_terms,
    seal_number,
    term_sum,
    terms_of,
)
from agentty_rag.types import Chunk

SCHEMA_VERSION = 8
_META_SUM = "checksum"
# The header's record of the key that sealed the index (``database.mark``).
MARK = "sealed_by"
# Kept by ``clear``: the generation, and when an index built elsewhere was found and rebuilt (for ``status``).
FOREIGN_REPLACED = "foreign_replaced_at"
_KEPT_BY_CLEAR = ("schema_version", "generation", FOREIGN_REPLACED)


_TERM_ROW = "SELECT term, id, checksum FROM vocab"
# Rows per statement of an ``IN (...)`` query.
_BATCH = 500
_TABLES = frozenset({"meta", "files", "chunks", "texts", "vocab", "segments", "vectors"})
# Between two tries at creating the tables while another process holds the write lock.
_RETRY_S = 0.05
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    key TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, hash TEXT NOT NULL,
    chunks INTEGER NOT NULL, skip TEXT NOT NULL DEFAULT '', redacted INTEGER NOT NULL DEFAULT 0,
    first_slot INTEGER NOT NULL DEFAULT 0, checksum TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    slot INTEGER PRIMARY KEY, block_slot INTEGER NOT NULL, source TEXT NOT NULL, ref TEXT NOT NULL,
    language TEXT NOT NULL, embed_hash TEXT NOT NULL, checksum INTEGER NOT NULL,
    definition INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS texts (
    block_slot INTEGER PRIMARY KEY, chunks INTEGER NOT NULL, checksum INTEGER NOT NULL,
    provenance BLOB NOT NULL, terms BLOB NOT NULL, text BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS vectors (
    profile TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (profile, hash)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS vocab (term TEXT PRIMARY KEY, id INTEGER NOT NULL, checksum INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS segments (
    field TEXT PRIMARY KEY, n_terms INTEGER NOT NULL, indptr BLOB NOT NULL, slots BLOB NOT NULL,
    tfs BLOB NOT NULL, lengths BLOB NOT NULL, checksum TEXT NOT NULL
);
"""

# A chunk row's content, summed once where it is made (a build's worker process); the row's checksum covers
# the slot, its block's first slot and that sum. A block's row of texts carries a checksum of its own, over
# its first slot, its count of chunks and its parts.
_CONTENT_COLUMNS = "source, ref, language, embed_hash"


@dataclass(frozen=True, slots=True)
class FileRow:
    size: int
    mtime_ns: int
    hash: str
    chunks: int
    skip: str = ""
    redacted: int = 0  # secrets replaced in its text before it was indexed
    first_slot: int = 0  # its chunks' slots: first_slot, first_slot + 1, ... (``chunks`` of them)


def _file_values(rows: Mapping[str, FileRow]) -> Iterator[tuple[object, ...]]:
    for key, row in rows.items():
        yield (key, row.size, row.mtime_ns, row.hash, row.chunks, row.skip, row.redacted, row.first_slot)


class Store(Database):
    """A connection to one ``.ragdb`` file, shared by the threads of one process (calls are serialized).

    Every SQLite error leaves as an ``AgenttyError`` (see ``database.classify``): callers never see ``sqlite3``.
    """

    def __init__(self, path: Path, key: bytes = b"", busy_timeout_s: float = 30.0) -> None:
        super().__init__(path, busy_timeout_s)
        self._key = key
        self.mark = mark(key)
        # Blocks read back lately, by (first slot, checksum): a search's stages read chunks of the same blocks
        # (candidates, then their neighbours), and a block is unpacked once for them.
        self._unpacked: OrderedDict[tuple[int, int], _Unpacked] = OrderedDict()
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
                    self._refuse_other_version(known)
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

    def _refuse_other_version(self, known: set[str]) -> None:
        """``IndexCorrupt`` naming the schema version of an index another release wrote (its tables are not
        this version's: not a damaged index)."""
        if "meta" not in known:
            return
        rows = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        if rows and rows[0][0] != str(SCHEMA_VERSION):
            version = str(rows[0][0])[:20]
            raise IndexCorrupt(f"{self.path.name} has schema version {version}; this version reads {SCHEMA_VERSION}")

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
        rows = self.run(f"SELECT {_FILE_COLUMNS} FROM files")
        self._check_files(rows)
        return {r[0]: FileRow(*r[1:-1]) for r in rows}

    def _check_files(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            if self.sealed(*row[:-1]) != row[-1]:
                raise IndexCorrupt(f"the row of {str(row[0])[:200]!r} in {self.path.name} does not match its checksum")

    def live_slots(self, below: int) -> npt.NDArray[np.int32]:
        """Every chunk's slot; ``IndexCorrupt`` unless they are distinct and under ``below`` (the next slot to
        give): a row whose key was damaged is never found by its slot to have its checksum checked."""
        slots = [r[0] for r in self.run("SELECT slot FROM chunks")]
        if len(set(slots)) != len(slots) or not all(0 <= slot < below for slot in slots):
            raise IndexCorrupt(f"the chunk slots of {self.path.name} are damaged")
        return np.asarray(slots, np.int32)

    def _verified(self, where: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """Chunk rows (slot, file slot, ``_CONTENT_COLUMNS``) matching ``where`` (on the chunks table), each
        checked against its checksum."""
        rows = self.run(f"SELECT slot, block_slot, {_CONTENT_COLUMNS}, checksum FROM chunks {where}", params)
        for row in rows:
            if seal_number(self.sealed(row[0], row[1], checksum(*row[2:-1]))) != row[-1]:
                raise IndexCorrupt(f"chunk {row[0]} in {self.path.name} does not match its checksum")
        return rows

    def _files_of(self, block_slots: Sequence[int]) -> dict[int, tuple[int, bytes, bytes, bytes, int]]:
        """(count of chunks, provenance, terms, text, checksum) of the files ``block_slots``, each checked
        against its checksum."""
        wanted = sorted(set(block_slots))
        found: dict[int, tuple[int, bytes, bytes, bytes, int]] = {}
        sql = "SELECT block_slot, chunks, checksum, provenance, terms, text FROM texts WHERE block_slot IN ({marks})"
        for block_slot, count, stored, *parts in self.rows_in(sql, wanted):
            if not all(isinstance(part, bytes) for part in parts) or stored != seal_number(
                self.sealed(block_slot, count, *parts)
            ):
                raise IndexCorrupt(f"the block of chunk {block_slot} in {self.path.name} does not match its checksum")
            found[block_slot] = (count, *parts, stored)
        if len(found) < len(wanted):
            missing = next(slot for slot in wanted if slot not in found)
            raise IndexCorrupt(f"the block of chunk {missing} is missing from {self.path.name}")
        return found

    def _read(self, rows: Sequence[Sequence[Any]], terms: bool) -> Iterator[tuple[Chunk, bytes]]:
        """The chunk of each ``_verified`` row, and its encoded terms when ``terms`` (else b"")."""
        for group in (rows[i : i + _BATCH] for i in range(0, len(rows), _BATCH)):
            unpacked = self._unpacked_files(group)
            for row in group:
                slot, block_slot, source, ref, language = row[:5]
                entries, texts, held = unpacked[block_slot]
                at = _ordinal(slot, block_slot, len(entries))
                start, end, kind, context, symbol, title, _ = entries[at]
                chunk = Chunk(source, ref, start, end, texts.text(at), language, kind, context, symbol, title)
                yield chunk, held[at] if terms else b""

    def _unpacked_files(self, rows: Sequence[Sequence[Any]]) -> dict[int, _Unpacked]:
        """The files of ``_verified`` rows, unpacked: from the recent ones when their row's checksum is the
        one they were read with (a commit since gives changed files new checksums), else read and checked."""
        wanted = sorted({row[1] for row in rows})
        heads = self.rows_in("SELECT block_slot, checksum FROM texts WHERE block_slot IN ({marks})", wanted)
        out: dict[int, _Unpacked] = {}
        with self._lock:
            for block_slot, stored in heads:
                held = self._unpacked.get((block_slot, stored))
                if held is not None:
                    self._unpacked.move_to_end((block_slot, stored))
                    out[block_slot] = held
        missing = [slot for slot in wanted if slot not in out]
        for block_slot, (count, provenance, term_lists, text, stored) in self._files_of(missing).items():
            entries = Provenance(provenance, count)
            held = (entries, Texts(text, entries), terms_of(term_lists, count))
            out[block_slot] = held
            with self._lock:
                self._unpacked[(block_slot, stored)] = held
                while len(self._unpacked) > _UNPACKED_FILES:
                    self._unpacked.popitem(last=False)
        return out

    def _verified_in(self, keys: Sequence[object]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        for i in range(0, len(keys), _BATCH):
            batch = list(keys[i : i + _BATCH])
            rows += self._verified(f"WHERE slot IN ({','.join('?' * len(batch))})", batch)
        return rows

    def delta_terms(self, fields: Sequence[str], from_slot: int) -> Iterator[tuple[int, dict[str, FieldTerms]]]:
        """The terms of every chunk from slot ``from_slot`` on (its texts are not unpacked)."""
        rows = self._verified("WHERE slot >= ? ORDER BY slot", (from_slot,))
        for group in (rows[i : i + _BATCH] for i in range(0, len(rows), _BATCH)):
            files = self._files_of([row[1] for row in group])
            held = {block_slot: terms_of(parts[2], parts[0]) for block_slot, parts in files.items()}
            for slot, block_slot, *_ in group:
                term_lists = held[block_slot]
                yield slot, decode_terms(fields, term_lists[_ordinal(slot, block_slot, len(term_lists))])

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
        rows = self._verified_in(slots)
        return {row[0]: chunk for row, (chunk, _) in zip(rows, self._read(rows, terms=False), strict=True)}

    def chunk_rows(self, slots: Sequence[int]) -> dict[int, tuple[Chunk, bytes]]:
        """Each chunk with its encoded terms, in one checked read."""
        rows = self._verified_in(slots)
        return {row[0]: read for row, read in zip(rows, self._read(rows, terms=True), strict=True)}

    def chunk_attributes(self) -> list[tuple[int, str, str, str]]:
        """(slot, source, ref, language) of every chunk, for filters."""
        rows = self.run("SELECT slot, source, ref, language FROM chunks")
        if not all(isinstance(value, str) for row in rows for value in row[1:]):
            raise IndexCorrupt(f"a chunk's provenance in {self.path.name} is not text")
        return rows

    def chunks_where(self, where: str, params: Sequence[object] = ()) -> list[tuple[int, str, Chunk]]:
        """(slot, embed hash, chunk) of the chunks (table alias ``c``) that ``where`` selects, each checked."""
        rows = self._verified(where, params)
        read = self._read(rows, terms=False)
        return [(row[0], row[_EMBED_HASH], chunk) for row, (chunk, _) in zip(rows, read, strict=True)]

    def slots_of_files(self, keys: Iterable[str]) -> list[int]:
        """The slots of the chunks of the files ``keys`` (from their rows, each checked)."""
        rows = list(self.rows_in(f"SELECT {_FILE_COLUMNS} FROM files WHERE key IN ({{marks}})", list(keys)))
        self._check_files(rows)
        return [slot for row in rows for slot in range(row[_FIRST_SLOT], row[_FIRST_SLOT] + row[_CHUNKS])]

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
            for table in ("files", "chunks", "texts", "vocab", "segments"):
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
            "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*values, self.sealed(*values)) for values in _file_values(rows)],
        )

    def delete_files_rows(self, keys: Iterable[str]) -> None:
        self.run_many("DELETE FROM files WHERE key = ?", [(k,) for k in keys])

    def delete_chunks(self, slots: Iterable[int]) -> None:
        keys = [(s,) for s in slots]
        self.run_many("DELETE FROM chunks WHERE slot = ?", keys)
        self.run_many("DELETE FROM texts WHERE block_slot = ?", keys)  # a block goes with its first chunk

    def put_file_chunks(self, first_slot: int, chunks: Sequence[Chunk], blobs: Sequence[bytes]) -> None:
        """Insert one file's chunks (slots from ``first_slot``) with their encoded terms and their texts."""
        records, blocks = file_records(chunks)
        self.put_records([(first_slot, records, blocks, blobs)])

    def put_records(self, files: Sequence[tuple[int, Sequence[ChunkRecord], Sequence[Block], Sequence[bytes]]]) -> None:
        """Insert files' chunks: per file, its first slot, its chunks' records, the rest of them in blocks and
        their encoded terms (one blob per chunk); each chunk row and each block with its checksum."""
        rows = []
        texts = []
        for first, records, blocks, blobs in files:
            for block in blocks:
                start = first + block.first
                packed = pack_terms(blobs[block.first : block.first + block.chunks])
                seal = seal_number(self.sealed(start, block.chunks, block.provenance, packed, block.texts))
                texts.append((start, block.chunks, seal, block.provenance, packed, block.texts))
                for slot in range(start, start + block.chunks):
                    record = records[slot - first]
                    seal = seal_number(self.sealed(slot, start, record.content_sum))
                    rows.append((slot, start, *record[:4], seal, record.definition))
        with self._lock:
            self.run_many("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
            self.run_many("INSERT INTO texts VALUES (?, ?, ?, ?, ?, ?)", texts)


_FILE_COLUMNS = "key, size, mtime_ns, hash, chunks, skip, redacted, first_slot, checksum"
_CHUNKS = 4
_FIRST_SLOT = 7
# A file read back: its chunks' provenance, texts and term lists.
_Unpacked = tuple[Provenance, Texts, Slices]
_UNPACKED_FILES = 128
# Positions in a ``_verified`` row: the slot, the file slot, ``_CONTENT_COLUMNS``, the checksum.
_EMBED_HASH = 5


def _ordinal(slot: int, block_slot: int, count: int) -> int:
    """Where chunk ``slot`` is among its file's ``count`` chunks (from ``block_slot``)."""
    at = slot - block_slot
    if not 0 <= at < count:
        raise IndexCorrupt(f"chunk {slot} lies outside its file's chunks")
    return at


def _integer(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        raise IndexCorrupt(f"a stored number is not a number ({value!r:.40})") from None


def dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


__all__ = ["FOREIGN_REPLACED", "MARK", "SCHEMA_VERSION", "FileRow", "Store", "dumps"]
