"""A file's chunks are the slots its row names (``first_slot`` and its count of chunks): the index keeps no
index of chunks by file, so builds, builds in parts and patches must number each file's chunks together."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.index.storage.ingest import PartPool
from agentty_rag.index.storage.records import BLOCK_BYTES
from agentty_rag.index.storage.refresh import Parts
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write
from tests.stored_chunks import chunk_text


def _module(i: int, functions: int) -> str:
    return "".join(f"def handler_{i}_{n}(value):\n    return value + {n}\n\n\n" for n in range(functions))


def _read_back(root: Path, index: object) -> None:
    """Every chunk the index reads back holds text of its own file (a file past a block's size has its chunks
    in several blocks)."""
    chunks = index.all_chunks()  # type: ignore[attr-defined]
    assert chunks
    for chunk in chunks:
        assert chunk.text and chunk.text in (root / chunk.ref).read_text("utf-8"), chunk.ref


def _slots_by_file(root: Path) -> tuple[dict[str, list[int]], dict[int, str]]:
    """Each file's slots as its row names them, and every chunk row's file (by its ref)."""
    db = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    try:
        named = {
            key.removeprefix("code:"): list(range(first, first + count))
            for key, first, count in db.execute("SELECT key, first_slot, chunks FROM files")
        }
        held = dict(db.execute("SELECT slot, ref FROM chunks"))
        texts = {slot: chunk_text(db, slot) for slot in held}
    finally:
        db.close()
    for ref, slots in named.items():
        assert all(held.get(slot) == ref for slot in slots), (ref, slots)
        assert all("handler_" in texts[slot] for slot in slots)
    assert sorted(s for slots in named.values() for s in slots) == sorted(held)  # every chunk is a file's
    return named, held


def test_every_files_chunks_are_the_slots_its_row_names_after_builds_in_parts_and_patches(tmp_path: Path) -> None:
    write(tmp_path, {f"pkg/mod_{i}.py": _module(i, 1 + i % 4) for i in range(12)})
    write(tmp_path, {"pkg/big.py": _module(99, 2 * BLOCK_BYTES // 40)})  # its chunks fill several blocks
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    try:
        index = workspace.index("code")
        parts = Parts(5, PartPool())
        try:
            index.refresh(full_scan=True, parts=parts)
            assert index.partial is not None  # the first part only
            _slots_by_file(tmp_path)
            while index.partial is not None:
                index.refresh(full_scan=True, parts=parts)
                _slots_by_file(tmp_path)
        finally:
            parts.pool.close()
        named, _ = _slots_by_file(tmp_path)
        assert len(named) == 13
        _read_back(tmp_path, index)
        db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
        big = named["pkg/big.py"]
        (blocks,) = db.execute(
            "SELECT COUNT(*) FROM texts WHERE block_slot BETWEEN ? AND ?", (big[0], big[-1])
        ).fetchone()
        db.close()
        assert blocks > 1
        # a file grows, one shrinks, one loses every chunk, one is removed, one is added
        (tmp_path / "pkg/mod_0.py").write_text(_module(0, 6), "utf-8")
        (tmp_path / "pkg/mod_3.py").write_text(_module(3, 1), "utf-8")
        (tmp_path / "pkg/mod_5.py").write_text("", "utf-8")
        (tmp_path / "pkg/mod_7.py").unlink()
        (tmp_path / "pkg/big.py").write_text(_module(99, BLOCK_BYTES // 30), "utf-8")
        write(tmp_path, {"pkg/mod_12.py": _module(12, 3)})
        index.refresh(full_scan=True)
        named, held = _slots_by_file(tmp_path)
        assert "pkg/mod_7.py" not in named and len(named["pkg/mod_0.py"]) == 6 and len(named["pkg/mod_3.py"]) == 1
        assert named["pkg/mod_5.py"] == []
        assert len(named["pkg/mod_12.py"]) == 3
        _read_back(tmp_path, index)
        found = workspace.search_code("handler_12_2 value")
        assert any("pkg/mod_12.py" in r["provenance"] for r in found.structured["results"])
    finally:
        workspace.close()
