"""An index written by another schema version (an older release's layout) is rebuilt, with a note, never read."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import numpy as np

from agentty_rag.config import load_settings
from agentty_rag.index.storage.store import SCHEMA_VERSION
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write

FILES = {"src/auth/tokens.py": "def refresh_expired_token(session):\n    return session.renew()\n"}


def test_an_index_of_the_previous_schema_is_rebuilt_with_a_note(tmp_path: Path) -> None:
    write(tmp_path, FILES)
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    first = workspace.search_code("refresh expired token")
    workspace.close()
    db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION - 1),))
    db.commit()
    db.close()
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    again = workspace.search_code("refresh expired token")
    workspace.close()
    notes = again.structured["notes"]
    assert any(f"schema version {SCHEMA_VERSION - 1}" in n and "rebuilding the code index" in n for n in notes)
    assert [r["provenance"] for r in again.structured["results"]] == [
        r["provenance"] for r in first.structured["results"]
    ]
    db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
    (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    db.close()
    assert version == str(SCHEMA_VERSION)


def test_an_index_with_schema_6_s_plain_postings_is_rebuilt_not_misread(tmp_path: Path) -> None:
    """Schema 6 stored each field's postings as plain arrays (indptr, slots, frequencies, lengths); the
    compressed layout of schema 7 must never read them: the index is rebuilt and answers as before."""
    write(tmp_path, FILES)
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    first = workspace.search_code("refresh expired token")
    workspace.close()
    db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
    rows = db.execute("SELECT field, indptr, slots, tfs, lengths FROM segments").fetchall()
    for field, counts, gaps, tfs, lengths in rows:
        per_term = np.frombuffer(zlib.decompress(counts), np.uint16).astype(np.int64)
        indptr = np.concatenate([[0], np.cumsum(per_term)]).astype(np.int32)
        steps = np.frombuffer(zlib.decompress(gaps), np.uint16).astype(np.int64)
        slots = np.cumsum(steps)
        starts = indptr[:-1][per_term > 0]
        slots -= np.repeat(slots[starts] - steps[starts], per_term[per_term > 0])
        plain = (indptr.tobytes(), slots.astype(np.int32).tobytes(), zlib.decompress(tfs), zlib.decompress(lengths))
        db.execute("UPDATE segments SET indptr = ?, slots = ?, tfs = ?, lengths = ? WHERE field = ?", (*plain, field))
    db.execute("UPDATE meta SET value = '6' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    again = workspace.search_code("refresh expired token")
    workspace.close()
    assert any("schema version 6" in n and "rebuilding the code index" in n for n in again.structured["notes"])
    assert [r["provenance"] for r in again.structured["results"]] == [
        r["provenance"] for r in first.structured["results"]
    ]
    db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
    (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    (counts,) = db.execute("SELECT indptr FROM segments WHERE field = 'body'").fetchone()
    db.close()
    assert version == str(SCHEMA_VERSION)
    assert len(zlib.decompress(counts)) > 0  # written anew in the current layout


def test_an_index_of_schema_7_with_a_text_per_chunk_is_rebuilt_with_a_note_naming_its_version(tmp_path: Path) -> None:
    """Schema 7 kept each chunk's text and terms in a ``bodies`` row and had no ``texts`` table: its tables are
    not this version's, and the note says the index is another version's (not that it lost tables)."""
    write(tmp_path, FILES)
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    first = workspace.search_code("refresh expired token")
    workspace.close()
    db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
    db.execute("DROP TABLE texts")
    db.execute("CREATE TABLE bodies (slot INTEGER PRIMARY KEY, text NOT NULL, terms BLOB NOT NULL)")
    db.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    again = workspace.search_code("refresh expired token")
    workspace.close()
    notes = again.structured["notes"]
    assert any("schema version 7" in n and "rebuilding the code index" in n for n in notes), notes
    assert not any("lost its tables" in n for n in notes)
    assert [r["provenance"] for r in again.structured["results"]] == [
        r["provenance"] for r in first.structured["results"]
    ]
    db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
    (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    db.close()
    assert version == str(SCHEMA_VERSION) and "texts" in tables and "bodies" not in tables
