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


def _entries(db: sqlite3.Connection, block_slot: int) -> list[list[Any]]:
    (provenance,) = db.execute("SELECT provenance FROM texts WHERE block_slot = ?", (block_slot,)).fetchone()
    entries: list[list[Any]] = json.loads(zlib.decompress(provenance))
    return entries


def find_chunk(db: sqlite3.Connection, symbol: str | None = None, ref: str | None = None, line: int = 0) -> int:
    """The slot of the chunk of ``symbol``, or of file ``ref`` holding ``line``."""
    for slot, block_slot, chunk_ref in db.execute("SELECT slot, block_slot, ref FROM chunks ORDER BY slot"):
        if ref is not None and chunk_ref != ref:
            continue
        start, end, _, _, chunk_symbol, _, _ = _entries(db, block_slot)[slot - block_slot]
        if (symbol is not None and chunk_symbol == symbol) or (symbol is None and start <= line <= end):
            return int(slot)
    raise AssertionError(f"no chunk of {symbol or ref}")


def texts(db: sqlite3.Connection, slot: int) -> tuple[int, list[str]]:
    """(its file's first slot, the texts of every chunk of the file) of chunk ``slot``."""
    (block_slot,) = db.execute("SELECT block_slot FROM chunks WHERE slot = ?", (slot,)).fetchone()
    (packed,) = db.execute("SELECT text FROM texts WHERE block_slot = ?", (block_slot,)).fetchone()
    data, out, at = zlib.decompress(packed), [], 0
    for entry in _entries(db, block_slot):
        out.append(data[at : at + entry[-1]].decode("utf-8"))
        at += entry[-1]
    return int(block_slot), out


def chunk_text(db: sqlite3.Connection, slot: int) -> str:
    block_slot, held = texts(db, slot)
    return held[slot - block_slot]


def change_text(db: sqlite3.Connection, slot: int, text: str, seal: Seal | None = None) -> None:
    """Replace chunk ``slot``'s text as the index stores it (its file's texts and their lengths); with ``seal``
    the file's row is sealed again with it (as the project's own ``checksum()`` or a machine's key)."""
    block_slot, held = texts(db, slot)
    held[slot - block_slot] = text
    entries = _entries(db, block_slot)
    entries[slot - block_slot][-1] = len(text.encode("utf-8"))
    provenance = zlib.compress(json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    packed = zlib.compress("".join(held).encode("utf-8"))
    db.execute("UPDATE texts SET provenance = ?, text = ? WHERE block_slot = ?", (provenance, packed, block_slot))
    if seal is not None:
        count, terms = db.execute("SELECT chunks, terms FROM texts WHERE block_slot = ?", (block_slot,)).fetchone()
        stored = seal_number(seal(block_slot, count, provenance, terms, packed))
        db.execute("UPDATE texts SET checksum = ? WHERE block_slot = ?", (stored, block_slot))


def change_row(db: sqlite3.Connection, slot: int, seal: Seal, **columns: object) -> None:
    """Change columns of chunk ``slot``'s row and seal it again with ``seal``."""
    names = [c[1] for c in db.execute("PRAGMA table_info(chunks)")]
    row = dict(zip(names, db.execute("SELECT * FROM chunks WHERE slot = ?", (slot,)).fetchone(), strict=True))
    row.update(columns)
    content = checksum(row["source"], row["ref"], row["language"], row["embed_hash"])
    row["checksum"] = seal_number(seal(row["slot"], row["block_slot"], content))
    db.execute(f"UPDATE chunks SET {', '.join(f'{c} = ?' for c in names)} WHERE slot = ?", (*row.values(), slot))


__all__ = ["change_row", "change_text", "chunk_text", "find_chunk", "texts"]
