"""Reading and changing a ``.ragdb``'s chunks as a person with the file (and without the machine's key) would:
straight through SQLite, with the stored layout (``index/storage/store.py``, ``records.py``)."""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable
from typing import Any

from agentty_rag.index.storage.database import checksum
from agentty_rag.index.storage.records import seal_number

Seal = Callable[..., str]


def _entries(db: sqlite3.Connection, file_slot: int) -> list[list[Any]]:
    (provenance,) = db.execute("SELECT provenance FROM texts WHERE file_slot = ?", (file_slot,)).fetchone()
    entries: list[list[Any]] = json.loads(zlib.decompress(provenance))
    return entries


def find_chunk(db: sqlite3.Connection, symbol: str | None = None, ref: str | None = None, line: int = 0) -> int:
    """The slot of the chunk of ``symbol``, or of file ``ref`` holding ``line``."""
    for slot, file_slot, chunk_ref in db.execute("SELECT slot, file_slot, ref FROM chunks ORDER BY slot"):
        if ref is not None and chunk_ref != ref:
            continue
        start, end, _, _, chunk_symbol, _, _ = _entries(db, file_slot)[slot - file_slot]
        if (symbol is not None and chunk_symbol == symbol) or (symbol is None and start <= line <= end):
            return int(slot)
    raise AssertionError(f"no chunk of {symbol or ref}")


def texts(db: sqlite3.Connection, slot: int) -> tuple[int, list[str]]:
    """(its file's first slot, the texts of every chunk of the file) of chunk ``slot``."""
    (file_slot,) = db.execute("SELECT file_slot FROM chunks WHERE slot = ?", (slot,)).fetchone()
    (packed,) = db.execute("SELECT text FROM texts WHERE file_slot = ?", (file_slot,)).fetchone()
    data, out, at = zlib.decompress(packed), [], 0
    for entry in _entries(db, file_slot):
        out.append(data[at : at + entry[-1]].decode("utf-8"))
        at += entry[-1]
    return int(file_slot), out


def chunk_text(db: sqlite3.Connection, slot: int) -> str:
    file_slot, held = texts(db, slot)
    return held[slot - file_slot]


def change_text(db: sqlite3.Connection, slot: int, text: str, seal: Seal | None = None) -> None:
    """Replace chunk ``slot``'s text as the index stores it (its file's texts and their lengths); with ``seal``
    the file's row is sealed again with it (as the project's own ``checksum()`` or a machine's key)."""
    file_slot, held = texts(db, slot)
    held[slot - file_slot] = text
    entries = _entries(db, file_slot)
    entries[slot - file_slot][-1] = len(text.encode("utf-8"))
    provenance = zlib.compress(json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    packed = zlib.compress("".join(held).encode("utf-8"))
    db.execute("UPDATE texts SET provenance = ?, text = ? WHERE file_slot = ?", (provenance, packed, file_slot))
    if seal is not None:
        count, terms = db.execute("SELECT chunks, terms FROM texts WHERE file_slot = ?", (file_slot,)).fetchone()
        parts = (checksum(provenance), checksum(terms), checksum(packed))
        stored = seal_number(seal(file_slot, count, *parts))
        db.execute("UPDATE texts SET checksum = ? WHERE file_slot = ?", (stored, file_slot))


def change_row(db: sqlite3.Connection, slot: int, seal: Seal, **columns: object) -> None:
    """Change columns of chunk ``slot``'s row and seal it again with ``seal``."""
    names = [c[1] for c in db.execute("PRAGMA table_info(chunks)")]
    row = dict(zip(names, db.execute("SELECT * FROM chunks WHERE slot = ?", (slot,)).fetchone(), strict=True))
    row.update(columns)
    content = checksum(row["source"], row["ref"], row["language"], row["embed_hash"])
    row["checksum"] = seal_number(seal(row["slot"], row["file_slot"], content))
    db.execute(f"UPDATE chunks SET {', '.join(f'{c} = ?' for c in names)} WHERE slot = ?", (*row.values(), slot))


__all__ = ["change_row", "change_text", "chunk_text", "find_chunk", "texts"]
