"""A damaged ``.ragdb`` never raises and never answers wrongly in silence: it is detected and rebuilt.

The damage is real: a page of the database file overwritten with random bytes, or a stored value changed
behind the index's back, as a failing disk or an interrupted copy would leave it.
"""

from __future__ import annotations

import os
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agentty_rag.config import load_settings
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, write
from tests.stored_chunks import change_text, chunk_text, find_chunk

PAGE = 4096
QUERIES = ("refresh expired token", "rollback previous release", "invoice total tax", "parse config section")


def _corpus() -> dict[str, str]:
    """Small and large definitions: large ones put chunk text, term lists and postings on overflow pages."""
    files: dict[str, str] = {}
    topics = ("token refresh expired", "rollback release previous", "invoice tax total", "config section parse")
    for i in range(16):
        topic = topics[i % len(topics)]
        long_doc = "\n    ".join(f"{topic} detail {j} of module {i}" for j in range(120))
        files[f"pkg/mod_{i:02}.py"] = (
            f"def handle_{i}(value):\n    '''{topic} handler {i}.'''\n    return value + {i}\n\n\n"
            f"def describe_{i}():\n    '''{long_doc}'''\n    return {i}\n"
        )
    return files


def _answers(workspace: Workspace) -> tuple[list[list[tuple[str, str]]], list[str]]:
    """The passages (provenance, text) of every query, and every note the results carried."""
    answers, notes = [], []
    for query in QUERIES:
        outcome = workspace.search_code(query, k=5)
        answers.append([(r["provenance"], r["text"]) for r in outcome.structured["results"]])
        notes.extend(outcome.structured["notes"])
    return answers, notes


class Pristine(NamedTuple):
    """A built workspace, its database's bytes once closed, and the answers it gives."""

    root: Path
    database: bytes
    answers: list[list[tuple[str, str]]]

    def __repr__(self) -> str:
        # Hypothesis prints the arguments of a failing example: the database itself would hide the flips.
        return f"Pristine({self.root}, {len(self.database):,} bytes)"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    """A built workspace, its database's bytes once closed, and the answers it gives."""
    root = tmp_path_factory.mktemp("ws")
    write(root, _corpus())
    workspace = Workspace(root, load_settings(LEXICAL))
    answers, _ = _answers(workspace)
    workspace.close()
    db = root / ".agentty" / "rag_code.ragdb"
    assert not Path(f"{db}-wal").exists()  # closed cleanly: everything is in the main file
    assert all(answers)
    return Pristine(root, db.read_bytes(), answers)


def _install(root: Path, database: bytes) -> None:
    """Put ``database`` in place of the index's database file, with no write-ahead log beside it."""
    db = root / ".agentty" / "rag_code.ragdb"
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(database)


def _damage(root: Path, pristine_bytes: bytes, page: int, noise: bytes) -> None:
    data = bytearray(pristine_bytes)
    data[page * PAGE : (page + 1) * PAGE] = noise
    _install(root, bytes(data))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_random_damaged_page_is_rebuilt_or_harmless_never_wrong(pristine: Pristine, data: st.DataObject) -> None:
    root, pristine_bytes, expected = pristine
    pages = len(pristine_bytes) // PAGE
    page = data.draw(st.integers(0, pages - 1), label="page")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    _damage(root, pristine_bytes, page, random.Random(seed).randbytes(PAGE))
    _assert_right_answers(root, expected)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, 2**40), st.integers(0, 7)), min_size=1, max_size=12))
@example(flips=[(12154, 4), (15245, 1)])  # once read again forever: the damage changed the stored generation
@example(flips=[(8_291_160_074, 0)])  # a header key that reads back as NULL
def test_random_bit_flips_are_rebuilt_or_harmless_never_wrong(pristine: Pristine, flips: list[tuple[int, int]]) -> None:
    root, pristine_bytes, expected = pristine
    data = bytearray(pristine_bytes)
    for position, bit in flips:
        data[position % len(data)] ^= 1 << bit
    _install(root, bytes(data))
    _assert_right_answers(root, expected)


def _assert_right_answers(root: Path, expected: list[list[tuple[str, str]]]) -> None:
    """A new process's answers on the damaged index: never an exception, always the undamaged answers."""
    workspace = Workspace(root, load_settings(LEXICAL))
    try:
        answers, _ = _answers(workspace)  # never raises
        status = workspace.index("code").status()
    finally:
        workspace.close()
    assert answers == expected  # rebuilt when the damage mattered, so the answer is the right one
    assert status["files"] == 16


def test_a_schema_that_lost_tables_is_rebuilt_not_answered_from_new_empty_ones(pristine: Pristine) -> None:
    # The first page's b-tree header counts the schema's entries (bytes 103-104): a lower count hides the last
    # ones, as a flipped bit there does. The tables must not come back empty, answering every search with nothing.
    root, pristine_bytes, expected = pristine
    data = bytearray(pristine_bytes)
    entries = int.from_bytes(data[103:105], "big")
    data[103:105] = (entries - 4).to_bytes(2, "big")
    _install(root, bytes(data))
    hidden = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    tables = {row[0] for row in hidden.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    hidden.close()
    assert "meta" in tables and "vocab" not in tables  # the damage this test means
    workspace = Workspace(root, load_settings(LEXICAL))
    try:
        answers, notes = _answers(workspace)
    finally:
        workspace.close()
    assert answers == expected
    assert any("has lost its tables" in note and "rebuilding the code index" in note for note in notes)


def _answers_after_a_change(
    root: Path, pristine_bytes: bytes, sql: str, params: tuple[object, ...] = ()
) -> tuple[list[list[tuple[str, str]]], list[str]]:
    """The answers and notes after ``sql`` changed the pristine database behind the index's back."""
    _install(root, pristine_bytes)
    db = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    db.execute(sql, params)
    db.commit()
    db.close()
    workspace = Workspace(root, load_settings(LEXICAL))
    try:
        return _answers(workspace)
    finally:
        workspace.close()


def test_a_changed_postings_blob_is_caught_by_its_checksum_and_rebuilt(
    pristine: Pristine,
) -> None:
    root, pristine_bytes, expected = pristine
    _install(root, pristine_bytes)
    db = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    (slots,) = db.execute("SELECT slots FROM segments WHERE field = 'body'").fetchone()
    db.close()
    first = int.from_bytes(slots[:4], "little")
    moved = (first + 1).to_bytes(4, "little") + slots[4:]  # a posting moved to the next chunk: silently wrong
    answers, notes = _answers_after_a_change(
        root, pristine_bytes, "UPDATE segments SET slots = ? WHERE field = 'body'", (moved,)
    )
    assert answers == expected
    assert any("do not match their checksum" in note and "rebuilding the code index" in note for note in notes)


def test_a_damaged_chunk_found_while_searching_is_rebuilt_with_a_note(
    pristine: Pristine,
) -> None:
    root, pristine_bytes, expected = pristine
    _install(root, pristine_bytes)
    db = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    slots = [row[0] for row in db.execute("SELECT slot FROM chunks")]
    slot = next(slot for slot in slots if "detail" in chunk_text(db, slot))
    change_text(db, slot, chunk_text(db, slot).replace("detail", "detour"))  # as the index stores it, unsealed
    (changed,) = db.execute(
        "SELECT text FROM texts WHERE block_slot = (SELECT block_slot FROM chunks WHERE slot = ?)", (slot,)
    ).fetchone()
    db.close()
    sql = "UPDATE texts SET text = ? WHERE block_slot = (SELECT block_slot FROM chunks WHERE slot = ?)"
    answers, notes = _answers_after_a_change(root, pristine_bytes, sql, (changed, slot))
    assert answers == expected
    assert any("the block of chunk" in note and "does not match its checksum" in note for note in notes)


@pytest.mark.parametrize(
    "change",
    ["key = 'b' || substr(key, 2)", "skip = 1", "redacted = 'x'", "chunks = chunks + 1"],
    ids=["key", "skip", "redacted", "chunks"],
)
def test_a_changed_file_row_is_caught_by_its_checksum_and_rebuilt(pristine: Pristine, change: str) -> None:
    # a changed key indexed the file twice, a skip reason dropped it, a redaction count broke status
    root, pristine_bytes, expected = pristine
    sql = f"UPDATE files SET {change} WHERE key = 'code:pkg/mod_11.py'"
    answers, notes = _answers_after_a_change(root, pristine_bytes, sql)
    assert answers == expected
    assert any("pkg/mod_11.py" in note and "does not match its checksum" in note for note in notes)


def _varint(data: bytes | bytearray, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at ``at``: its value and where it ends."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def _with_row_key(database: bytes, slot: int, key: int) -> bytes:
    """``database`` with the key of chunk ``slot``'s row changed to ``key`` on the table's leaf page, as a failing
    disk would change it: the index listing the row keeps the old key, and no checksum covers a row key."""
    data = bytearray(database)
    page_size = int.from_bytes(data[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    for start in range(0, len(data), page_size):
        header = start + (100 if start == 0 else 0)
        if data[header] != 0x0D:  # not a table's leaf page
            continue
        for i in range(int.from_bytes(data[header + 3 : header + 5], "big")):
            pointer = header + 8 + 2 * i
            _, key_at = _varint(data, start + int.from_bytes(data[pointer : pointer + 2], "big"))
            rowid, record = _varint(data, key_at)
            header_length, at = _varint(data, record)
            types = []
            while at < record + header_length:
                serial, at = _varint(data, at)
                types.append(serial)
            if rowid == slot and len(types) == 8 and types[0] == 0:  # a chunks row: 8 columns, slot is the key
                assert record - key_at == 1 and key < 128
                data[key_at] = key
                return bytes(data)
    raise AssertionError(f"no row of chunk {slot}")


def test_a_damaged_row_key_is_caught_and_rebuilt(pristine: Pristine) -> None:
    root, pristine_bytes, expected = pristine
    _install(root, pristine_bytes)
    path, lines = expected[1][0][0].removeprefix("code:").rsplit(":", 1)
    line = int(lines.split("-")[0])
    db = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    slot = find_chunk(db, ref=path, line=line)
    (last,) = db.execute("SELECT MAX(slot) FROM chunks").fetchone()
    db.close()
    _install(root, _with_row_key(pristine_bytes, slot, last))  # a best answer's row now claims the last key
    workspace = Workspace(root, load_settings(LEXICAL))
    try:
        answers, notes = _answers(workspace)
    finally:
        workspace.close()
    assert answers == expected  # the row was not silently left out of the ranking
    assert any("rebuilding the code index" in note for note in notes)


@pytest.mark.parametrize("bit", [0, 2], ids=["term-sorts-later", "term-sorts-earlier"])
def test_a_damaged_vocabulary_term_is_caught_not_taken_for_an_unknown_word(pristine: Pristine, bit: int) -> None:
    """A flipped letter in a term's row ("token" read as "uoken" or "poken") hides the term from the query that
    asks for it; the lookup must see the damage, not answer as if the word were not in the corpus."""
    root, pristine_bytes, expected = pristine
    _install(root, pristine_bytes)
    db = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    pages = [row[0] for row in db.execute("SELECT pageno FROM dbstat WHERE name = 'vocab' AND pagetype = 'leaf'")]
    db.close()
    data = bytearray(pristine_bytes)
    positions = [
        (page - 1) * PAGE + offset
        for page in pages
        for offset in range(PAGE)
        if data[(page - 1) * PAGE + offset :].startswith(b"token")
    ]
    assert len(positions) == 1
    data[positions[0]] ^= 1 << bit
    _install(root, bytes(data))
    workspace = Workspace(root, load_settings(LEXICAL))
    try:
        answers, notes = _answers(workspace)
    finally:
        workspace.close()
    assert any("a term of rag_code.ragdb does not match its checksum" in note for note in notes)
    assert answers == expected


def _root_page(root: Path, name: str) -> int:
    db = sqlite3.connect(root / ".agentty" / "rag_code.ragdb")
    try:
        return int(db.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0])
    finally:
        db.close()


@pytest.mark.parametrize("died_mid_update", [True, False])
def test_a_writer_that_died_mid_update_makes_the_next_opener_check_the_database(
    pristine: Pristine, died_mid_update: bool
) -> None:
    root, pristine_bytes, expected = pristine
    _install(root, pristine_bytes)
    # The index of the files table by key is read only when files change: a search never meets this damage.
    page = _root_page(root, "sqlite_autoindex_files_1") - 1
    _damage(root, pristine_bytes, page, b"\xff" * PAGE)
    lock = root / ".agentty" / "rag_code.lock"
    lock.write_text(f"{os.getpid() + 1_000_000}\n" if died_mid_update else "")  # a pid no live process holds
    workspace = Workspace(root, load_settings(LEXICAL))
    answers, notes = _answers(workspace)
    workspace.close()
    assert answers == expected
    checked = any("failed its integrity check" in note and "rebuilding the code index" in note for note in notes)
    assert checked is died_mid_update


def test_a_changed_vector_is_caught_by_its_checksum(tmp_path: Path, compat_server: Callable[..., Any]) -> None:
    server = compat_server()
    write(tmp_path, {f"pkg/mod_{i}.py": f"def handler_{i}(value):\n    return value + {i}\n" for i in range(4)})
    settings = load_settings({"AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_EMBED_MODEL": "all-minilm"})
    workspace = Workspace(tmp_path, settings)
    first = workspace.search_code("handler value")  # builds the index and embeds its few chunks
    workspace.close()
    assert first.structured["mode"] == "hybrid"
    db = sqlite3.connect(tmp_path / ".agentty" / "rag_code.ragdb")
    (vector,) = db.execute("SELECT vector FROM vectors LIMIT 1").fetchone()
    changed = bytes([vector[0] ^ 0x40]) + vector[1:]  # one value of one vector: the dense leg would drift
    db.execute("UPDATE vectors SET vector = ? WHERE vector = ?", (changed, vector))
    db.commit()
    db.close()
    workspace = Workspace(tmp_path, settings)
    again = workspace.search_code("handler value")
    workspace.close()
    assert any("a stored vector does not match its checksum" in note for note in again.structured["notes"])
    assert [r["provenance"] for r in again.structured["results"]] == [
        r["provenance"] for r in first.structured["results"]
    ]
