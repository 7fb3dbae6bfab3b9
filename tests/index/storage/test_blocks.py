"""A file's chunks as blocks store them (``records.file_records``) read back as they were, in any order."""

from __future__ import annotations

import random
import zlib

import pytest

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.storage.records import (
    BLOCK_BYTES,
    Provenance,
    Texts,
    file_records,
    pack_terms,
    terms_of,
)
from agentty_rag.types import Chunk


def _chunks(n: int) -> list[Chunk]:
    return [
        Chunk("code", "pkg/mod.py", 3 * i + 1, 3 * i + 2, f"def f_{i}():\n    return 'é{i}' * {i}\n", "python",
              "function", "", f"f_{i}", "")
        for i in range(n)
    ]  # fmt: skip


def test_every_chunk_of_every_block_reads_back_in_any_order() -> None:
    chunks = _chunks(2000)  # several blocks
    records, blocks = file_records(chunks)
    assert len(records) == len(chunks) and len(blocks) > 1
    assert [b.first for b in blocks] == sorted(b.first for b in blocks) and sum(b.chunks for b in blocks) == 2000
    assert all(len(zlib.decompress(b.texts)) <= BLOCK_BYTES + 100 for b in blocks)
    order = list(range(len(chunks)))
    random.Random(7).shuffle(order)
    provenance = {b.first: Provenance(b.provenance, b.chunks) for b in blocks}
    texts = {b.first: Texts(b.texts, provenance[b.first]) for b in blocks}
    for number in order:
        block = max(b for b in blocks if b.first <= number)
        at = number - block.first
        start, end, kind, _, symbol, _, _ = provenance[block.first][at]
        assert (start, end, kind, symbol) == (
            chunks[number].start_line,
            chunks[number].end_line,
            "function",
            f"f_{number}",
        )
        assert texts[block.first].text(at) == chunks[number].text


def test_term_lists_read_back_per_chunk() -> None:
    blobs = [bytes([1]) + bytes(range(i % 7)) for i in range(50)]
    held = terms_of(pack_terms(blobs), 50)
    assert [held[i] for i in range(len(held))] == blobs


def test_a_block_whose_texts_are_shorter_than_its_chunks_is_corruption() -> None:
    records, blocks = file_records(_chunks(3))
    block = blocks[0]
    short = zlib.compress(zlib.decompress(block.texts)[:-5])
    with pytest.raises(IndexCorrupt):
        Texts(short, Provenance(block.provenance, block.chunks)).text(2)
    with pytest.raises(IndexCorrupt):
        Provenance(block.provenance, block.chunks + 1)  # a count that is not the block's
