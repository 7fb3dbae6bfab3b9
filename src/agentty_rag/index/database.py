"""One SQLite connection, shared by the threads of a process, and what its errors mean.

Every SQLite error is classified once, here: busy (try again), cannot be written here (``IndexUnwritable``:
keep the index in memory), or corrupt (``IndexCorrupt``: rebuild). Callers never see ``sqlite3``. Values
that SQLite could hand back damaged without an error carry a ``checksum``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import xxhash

from agentty_rag.errors import AgenttyError, IndexBusy, IndexCorrupt, IndexUnwritable
from agentty_rag.fsguard import UnsafeFile, refuse_link

# What a damaged database can raise: SQLite's errors, and a decoding error when its message quotes bad bytes.
ERRORS = (sqlite3.Error, UnicodeDecodeError)
SIDECARS = ("", "-wal", "-shm", "-journal")
# Keys per statement of an ``IN (...)`` query.
_BATCH = 500


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
        """Remove a database and its write-ahead log files (for a rebuild after corruption)."""
        for suffix in SIDECARS:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{path}{suffix}")

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


__all__ = ["ERRORS", "SIDECARS", "Database", "checksum", "classify", "refuse_links"]
