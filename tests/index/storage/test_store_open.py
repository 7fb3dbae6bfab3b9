"""Opening a new index while another process holds its write lock waits for the lock instead of failing.

SQLite answers "database is locked" at once, without calling its busy handler, when a connection switches a
new database to write-ahead logging while another holds a reserved lock; two processes creating one index
together met that.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from agentty_rag.errors import IndexBusy
from agentty_rag.index.storage.store import Store


def _hold_write_lock(path: Path) -> sqlite3.Connection:
    """A connection to a new database (rollback journal) holding a reserved lock, as a process creating its
    tables would."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO other VALUES (1)")
    return holder


def test_a_new_index_opens_once_the_other_writer_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "rag_code.ragdb"
    holder = _hold_write_lock(path)
    with pytest.raises(sqlite3.OperationalError, match="locked"):  # the SQLite behaviour this guards against
        sqlite3.connect(path, timeout=5, isolation_level=None).execute("PRAGMA journal_mode=WAL")
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    store = Store(path, busy_timeout_s=10)
    release.join()
    assert store.run("PRAGMA journal_mode") == [("wal",)]
    assert store.meta()["schema_version"]
    store.close()
    holder.close()


def test_a_write_lock_held_past_the_timeout_is_reported_busy(tmp_path: Path) -> None:
    path = tmp_path / "rag_code.ragdb"
    holder = _hold_write_lock(path)
    with pytest.raises(IndexBusy, match="busy"):
        Store(path, busy_timeout_s=0.2)
    holder.execute("COMMIT")
    holder.close()


def test_a_new_index_shows_other_processes_all_of_its_tables_or_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A process that saw some of the tables only would take the index for damaged and rebuild it under the
    # process creating it. Observed from a second connection as each statement of the creation starts.
    path = tmp_path / "rag_code.ragdb"
    seen: list[set[str]] = []
    connect = sqlite3.connect

    def observed(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db: sqlite3.Connection = connect(*args, **kwargs)

        def look(statement: str) -> None:
            if statement.lstrip().upper().startswith("CREATE"):
                with contextlib.closing(connect(path)) as other:
                    seen.append(
                        {row[0] for row in other.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                    )

        db.set_trace_callback(look)
        return db

    monkeypatch.setattr(sqlite3, "connect", observed)
    Store(path).close()
    assert len(seen) > 5
    assert all(not tables for tables in seen)  # nothing shows before the creation commits
