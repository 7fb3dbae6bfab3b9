"""One SQLite connection, shared by the threads of a process, and what its errors mean.

Every SQLite error is classified once, here: busy (try again), a full disk (``IndexFull``: the committed
index answers), cannot be written here (``IndexUnwritable``: keep the index in memory), or corrupt
(``IndexCorrupt``: rebuild). Callers never see ``sqlite3``. Values
that SQLite could hand back damaged without an error carry a ``checksum``: keyed with this machine's key
(``state.machine_key``), it also says that this machine wrote the value (docs/indexes.md, "Which indexes are
believed").
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agentty_rag.errors import AgenttyError, IndexBusy, IndexCorrupt, IndexFull, IndexUnwritable
from agentty_rag.fsguard import UnsafeFile, refuse_link

# What a damaged database can raise: SQLite's errors, and a decoding error when its message quotes bad bytes.
ERRORS = (sqlite3.Error, UnicodeDecodeError)
SIDECARS = ("", "-wal", "-shm", "-journal")
# Keys per statement of an ``IN (...)`` query.
_BATCH = 500


def checksum(*parts: object, key: bytes = b"") -> str:
    """BLAKE2b-128 over values (text, numbers, bytes), each with its type and length, so that no two lists
    collide and a damaged row whose text comes back as bytes (or a number as text) does not match.

    With ``key`` (this machine's key) it is a seal: no one without the key can make a value match, so a row
    that matches was written here (an index copied or committed from elsewhere matches none)."""
    digest = hashlib.blake2b(key=key, digest_size=16)
    for part in parts:
        if isinstance(part, bytes):
            kind, data = b"b", part
        else:
            kind, data = (b"s" if isinstance(part, str) else b"n"), str(part).encode("utf-8", "surrogatepass")
        digest.update(kind + len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def mark(key: bytes) -> str:
    """What an index's header records of the key that sealed it: a seal of a constant, which tells keys apart
    and gives nothing of the key away."""
    return checksum("agentty-rag index mark", key=key)


class Database:
    """A connection to one SQLite file (or ``:memory:``); statements are serialized across threads."""

    def __init__(self, path: Path, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self._lock = threading.RLock()
        if str(path) != ":memory:":
            refuse_links(path)
        try:
            self._db = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
        except ERRORS as error:
            raise classify(error, path.name) from error

    def close(self) -> None:
        with self._lock, contextlib.suppress(*ERRORS):
            self._db.close()

    @staticmethod
    def delete_files(path: Path) -> None:
        """Remove a database and its write-ahead log files: only one no process can open (SQLite refuses
        it), or one no other process uses (``empty_in_place`` otherwise)."""
        for suffix in SIDECARS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{path}{suffix}")

    @staticmethod
    def empty_in_place(path: Path, busy_timeout_s: float) -> None:
        """Replace a database's content with an empty database's, through SQLite (its backup API, under its
        locks): another process with the file open sees the change at its next read, where a file deleted
        under it would stay its own, out of date for good (SQLite's "How To Corrupt" warns against it).

        Raises:
            IndexCorrupt: SQLite cannot open the file at all (no process can read it either).
            IndexUnwritable: it cannot be written.
        """
        refuse_links(path)
        try:
            empty = sqlite3.connect(":memory:")
            target = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None)
        except ERRORS as error:
            raise classify(error, path.name) from error
        try:
            empty.backup(target)
        except ERRORS as error:
            raise classify(error, path.name) from error
        finally:
            with contextlib.suppress(*ERRORS):
                target.close()
                empty.close()

    def run(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """One statement's rows; a SQLite error becomes the ``AgenttyError`` it stands for."""
        with self._lock:
            try:
                return self._db.execute(sql, params).fetchall()
            except ERRORS as error:
                raise classify(error, self.path.name) from error

    def run_many(self, sql: str, rows: Iterable[Sequence[object]]) -> None:
        with self._lock:
            try:
                self._db.executemany(sql, rows)
            except ERRORS as error:
                raise classify(error, self.path.name) from error

    def rows_in(self, sql: str, keys: Sequence[object], *before: object) -> Iterator[tuple[Any, ...]]:
        """Rows of ``sql`` (with one ``IN ({marks})``, after the parameters ``before``) for every key, 500 keys
        per statement."""
        with self._lock:
            for i in range(0, len(keys), _BATCH):
                batch = [*before, *keys[i : i + _BATCH]]
                marks = ",".join("?" * (len(batch) - len(before)))
                yield from self.run(sql.format(marks=marks), batch)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read inside sees one committed state of the database: one read transaction (in WAL mode,
        a commit of another process in between is not seen), or the write transaction already open."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            self.run("BEGIN")
            try:
                yield
            finally:
                self._rollback()  # a read transaction: nothing to keep

    @contextlib.contextmanager
    def serialized(self) -> Iterator[None]:
        """Run several statements with no other thread's statements in between."""
        with self._lock:
            yield

    def _rollback(self) -> None:
        with contextlib.suppress(*ERRORS):
            self._db.execute("ROLLBACK")

    @contextlib.contextmanager
    def immediate(self) -> Iterator[None]:
        """All writes inside commit together or not at all."""
        with self._lock:
            self.run("BEGIN IMMEDIATE")
            try:
                yield
                self.run("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def quick_check(self) -> None:
        """``PRAGMA quick_check``: raise ``IndexCorrupt`` unless the database's structure is sound."""
        rows = self.run("PRAGMA quick_check")
        if [row[0] for row in rows] != ["ok"]:
            raise IndexCorrupt(f"{self.path.name} failed its integrity check ({rows[0][0]})")


def refuse_links(path: Path) -> None:
    """``IndexUnwritable`` when the database or one of its sidecar files is a link (or not a regular file):
    SQLite would follow it and write wherever it points."""
    for suffix in SIDECARS:
        try:
            refuse_link(Path(f"{path}{suffix}"))
        except UnsafeFile as error:
            raise IndexUnwritable(str(error)) from None


# SQLite's primary result codes (the low byte of an extended code) that are not damage.
_BUSY = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED
_FULL = 13  # SQLITE_FULL
_UNWRITABLE = frozenset({3, 8, 10, 14})  # SQLITE_PERM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN


def classify(error: sqlite3.Error | UnicodeDecodeError, name: str) -> AgenttyError:
    """What a SQLite error means for the index: busy (try again), a full disk (answer from the committed
    index), cannot be written here (keep the index in memory), or corrupt (rebuild). Busy, full and
    unwritable are never corruption: rebuilding would not help and would throw a good index away.

    Judged by SQLite's result code: a damaged schema's message can hold any word ("near FULL: syntax
    error"); by the message only for an error that carries no code."""
    if isinstance(error, UnicodeDecodeError):  # SQLite's own message quoted damaged bytes
        return IndexCorrupt(f"{name} is not a readable index (a damaged schema)")
    code = getattr(error, "sqlite_errorcode", None)
    text = str(error).lower()
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _BUSY or (primary is None and ("locked" in text or "busy" in text)):
        return IndexBusy(f"{name} is busy ({error}); try again")
    if primary == _FULL or (primary is None and "disk is full" in text):
        return IndexFull(f"{name} cannot take the update: the disk is full ({error})")
    if primary in _UNWRITABLE or (
        primary is None and any(w in text for w in ("readonly", "read-only", "unable to open", "disk i/o"))
    ):
        return IndexUnwritable(f"{name} cannot be written ({error})")
    return IndexCorrupt(f"{name} is not a readable index ({error})")


__all__ = ["ERRORS", "SIDECARS", "Database", "checksum", "classify", "mark", "refuse_links"]
