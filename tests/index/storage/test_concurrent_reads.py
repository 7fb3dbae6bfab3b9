"""Another process commits while this one reads the index: what this one loads is one committed state, and
damage it did not find on disk is never repaired by deleting what the other process uses.

The other process's commit is made to land at the worst moment: SQLite's own statement trace (a real hook of
the connection, nothing of agentty-rag replaced) starts it right before the reader reads the chunk slots,
after it read the header of the state before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, OPEN_WORKSPACES, write


def _index(root: Path) -> CorpusIndex:
    workspace = Workspace(root, load_settings(LEXICAL))
    OPEN_WORKSPACES.append(workspace)
    return workspace.index("code")


def _module(name: str, functions: int) -> str:
    return "\n\n".join(f"def {name}_{j}(value):\n    return value + {j}\n" for j in range(functions))


def test_a_reload_reads_one_committed_state_while_another_process_commits(tmp_path: Path) -> None:
    write(tmp_path, {f"src/m{i}.py": _module(f"handler{i}", 3) for i in range(6)})
    reader, writer = _index(tmp_path), _index(tmp_path)
    reader.refresh()
    write(tmp_path, {"src/m0.py": _module("handler0", 5)})
    writer.refresh()  # the reader's state is now one commit behind: its next refresh reloads
    write(tmp_path, {"src/m1.py": _module("handler1", 7)})  # what the writer commits in the middle
    commits: list[int] = []

    def commit_before_the_slots_are_read(statement: str) -> None:
        if statement.startswith("SELECT slot FROM chunks") and not commits:
            commits.append(writer.refresh().chunks_added)

    connection: sqlite3.Connection = reader._mirror.store()._db
    connection.set_trace_callback(commit_before_the_slots_are_read)
    try:
        reader.refresh()
    finally:
        connection.set_trace_callback(None)
    assert commits and commits[0] > 0  # the other commit landed inside the reload
    assert reader.take_notes() == ()  # no damage seen, nothing rebuilt
    fresh = _index(tmp_path)
    fresh.refresh()
    assert sorted(c.chunk_id for c in reader.all_chunks()) == sorted(c.chunk_id for c in fresh.all_chunks())


def test_damage_found_while_another_process_committed_is_read_again_not_deleted(tmp_path: Path) -> None:
    write(tmp_path, {f"src/m{i}.py": _module(f"handler{i}", 3) for i in range(6)})
    reader, writer = _index(tmp_path), _index(tmp_path)
    reader.refresh()
    write(tmp_path, {"src/m2.py": _module("handler2", 6)})
    writer.refresh()
    database = tmp_path / ".agentty" / "rag_code.ragdb"
    inode = database.stat().st_ino
    # The reader met what looked like damage in a state another process has replaced since: it reads the new
    # state again, under the update lock, and keeps the database (the writer still has it open).
    reader.recover(IndexCorrupt("chunk 7 in rag_code.ragdb does not match its checksum"))
    assert reader.take_notes() == ()
    assert database.stat().st_ino == inode
    assert reader.n_chunks == writer.n_chunks
    assert "handler2_5" in {c.symbol for c in reader.all_chunks()}


def test_real_damage_is_emptied_in_place_and_a_process_that_has_it_open_sees_the_rebuild(tmp_path: Path) -> None:
    write(tmp_path, {f"src/m{i}.py": _module(f"handler{i}", 3) for i in range(6)})
    reader, other = _index(tmp_path), _index(tmp_path)
    reader.refresh()
    other.refresh()
    before = other.n_chunks
    database = tmp_path / ".agentty" / "rag_code.ragdb"
    inode = database.stat().st_ino
    reader.recover(IndexCorrupt("chunk 7 in rag_code.ragdb does not match its checksum"))  # nothing changed since
    assert any("rebuilding the code index" in note for note in reader.take_notes())
    assert database.stat().st_ino == inode  # emptied through SQLite, not deleted from under the other process
    assert reader.n_chunks == 0
    write(tmp_path, {"src/m3.py": _module("handler3", 4)})
    other.refresh()  # the other process sees the emptied index, and rebuilds it
    assert other.n_chunks == before + 1
    reader.refresh()
    assert reader.n_chunks == other.n_chunks
