"""An index written by another schema version (an older release's layout) is rebuilt, with a note, never read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

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
