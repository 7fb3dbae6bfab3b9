"""A chunk's packed terms: the per-chunk encoding a patch writes and the per-file layout a full build writes
give the same bytes, and read back to the same ids and counts."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.lexical.chunk_terms import FileLayout, FileTerms, decode_terms, encode_terms
from agentty_rag.index.lexical.protocol import FieldTerms
from agentty_rag.index.storage.update import as_ids

FIELDS = ("body", "symbol", "path", "name")


def _file(rng: random.Random) -> list[dict[str, Counter[str]]]:
    """A file's chunks' term counts: fields missing or empty, counts from 1 to past two bytes."""
    chunks = []
    for _ in range(rng.randint(1, 8)):
        counts = {}
        for name in FIELDS:
            if rng.random() < 0.7:
                terms = (f"t{rng.randint(0, 60)}" for _ in range(rng.randint(0, 6)))
                counts[name] = Counter({term: rng.choice([1, 1, 2, 300, 70_000]) for term in terms})
        chunks.append(counts)
    return chunks


def _plain(terms: dict[str, FieldTerms]) -> dict[str, tuple[list[int], list[int]]]:
    return {name: (ids.tolist(), counts.tolist()) for name, (ids, counts) in terms.items()}


@pytest.mark.parametrize("seed", range(40))
def test_a_files_layout_packs_each_chunk_as_the_patch_does(seed: int) -> None:
    rng = random.Random(seed)
    chunks = _file(rng)
    terms = FileTerms.of(chunks)
    top = 200 if seed % 3 == 0 else 10**6  # small ids (one-byte gaps) and large ones (four bytes)
    index_ids = np.asarray(rng.sample(range(top), len(terms.terms)), np.int32)
    ids = {term: int(index_ids[i]) for i, term in enumerate(terms.terms)}
    layout = FileLayout(FIELDS, terms, index_ids, len(chunks))
    for number, (counts, blob) in enumerate(zip(chunks, layout.blobs(), strict=True)):
        expected = as_ids(counts, ids)
        assert blob == encode_terms(FIELDS, expected)
        assert _plain(decode_terms(FIELDS, blob)) == _plain(expected)
        for name in FIELDS:
            assert layout.lengths(name)[number] == sum(counts.get(name, Counter()).values())


def test_the_terms_of_a_file_are_numbered_in_order_of_first_use() -> None:
    chunks = [{"body": Counter(["b", "a", "b"]), "name": Counter(["c"])}, {"body": Counter(["c", "d"])}]
    terms = FileTerms.of(chunks)
    assert terms.terms == ["b", "a", "c", "d"]
    ids, counts, sizes = terms.fields["body"]
    assert ids.tolist() == [0, 1, 2, 3] and counts.tolist() == [2, 1, 1, 1] and sizes.tolist() == [2, 2]
    assert terms.fields["name"][2].tolist() == [1, 0]


def test_packed_terms_are_smaller_than_plain_int32() -> None:
    terms = {"body": (np.arange(1000, 1040, dtype=np.int32), np.ones(40, np.int32))}
    plain = (len(FIELDS) + 2 * 40) * 4  # the field sizes, the ids and the counts as int32
    packed = encode_terms(FIELDS, terms)
    assert len(packed) < 0.55 * plain  # two bytes a number at most (the first gap is 1,000)
    assert _plain(decode_terms(FIELDS, packed)) == _plain(terms)


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"\x03" + bytes(16),
        b"\x01" + np.asarray([2, 0, 0, 0], "<u4").tobytes() + b"\x01\x01\x01",
        b"\x00 no width at all",
    ],
    ids=["empty", "bad width", "wrong length", "no width"],
)
def test_a_damaged_blob_is_corruption(blob: bytes) -> None:
    with pytest.raises(IndexCorrupt):
        decode_terms(FIELDS, blob)
