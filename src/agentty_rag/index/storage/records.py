"""What a chunks-table row and a stored number look like: a chunk's record (made where the chunk is made, a
build's worker process), a file's chunk texts and term lists as stored (one compressed value each per file,
each chunk a byte range of them), and the narrow (and compressed) forms of postings and vocabulary checksums.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.storage.database import checksum
from agentty_rag.index.vectors.base import embed_hash
from agentty_rag.types import Chunk

_INT63 = (1 << 63) - 1


class ChunkRecord(NamedTuple):
    """A chunk's row as stored, but for the slots: what is read of every chunk (filters, vectors)."""

    source: str
    ref: str
    language: str
    embed_hash: str
    content_sum: str


class FileText(NamedTuple):
    """A file's chunks as its row of the texts table stores them, but for their term lists (``pack_terms``):
    each chunk's lines, kind, context, symbol, title and text length (JSON), and their texts one after the
    other (UTF-8), each zlib-compressed, with their sums.

    Compressed as one value, a file's texts take about half the room they take compressed chunk by chunk (a
    chunk alone is too short for zlib to find much to repeat); its chunks' context and symbol names, which
    repeat from chunk to chunk, a fifth of their plain room."""

    provenance: bytes
    provenance_sum: str
    texts: bytes
    texts_sum: str


_OFFSET = np.dtype("<u4")
# A chunk's entry in its file's provenance: start line, end line, kind, context, symbol, title, text length.
_ENTRY_TYPES = (int, int, str, str, str, str, int)


def file_records(chunks: Sequence[Chunk]) -> tuple[list[ChunkRecord], FileText]:
    """What the chunks and texts tables store of one file's chunks (computed where the chunks are made)."""
    records: list[ChunkRecord] = []
    entries: list[list[object]] = []
    parts: list[bytes] = []
    for c in chunks:
        raw = c.text.encode("utf-8")
        row = (c.source, c.ref, c.language, embed_hash(c))
        records.append(ChunkRecord(*row, checksum(*row)))
        entries.append([c.start_line, c.end_line, c.kind, c.context, c.symbol, c.title, len(raw)])
        parts.append(raw)
    provenance = zlib.compress(json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 6)
    texts = zlib.compress(b"".join(parts), 6)
    return records, FileText(provenance, checksum(provenance), texts, checksum(texts))


def pack_terms(blobs: Sequence[bytes]) -> bytes:
    """A file's chunks' term lists (``chunk_terms.encode_terms`` blobs) as stored: where each ends (uint32,
    from the start of the first), then the blobs one after the other, zlib-compressed."""
    ends = np.cumsum([len(blob) for blob in blobs], dtype=np.int64)
    return zlib.compress(ends.astype(_OFFSET).tobytes() + b"".join(blobs), 6)


def unpack(packed: object) -> bytes:
    """The bytes of a file's packed provenance, texts or term lists; ``IndexCorrupt`` when they cannot be read
    back."""
    if not isinstance(packed, bytes):
        raise IndexCorrupt("a file's stored chunks are not bytes")
    try:
        return zlib.decompress(packed)
    except zlib.error:
        raise IndexCorrupt("a file's stored chunks cannot be decompressed") from None


def provenance_of(packed: object, count: int) -> list[list[Any]]:
    """The ``count`` entries of a file's packed provenance (``file_records``)."""
    try:
        entries = json.loads(unpack(packed).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise IndexCorrupt("a file's stored chunks cannot be read") from None
    if not isinstance(entries, list) or len(entries) != count:
        raise IndexCorrupt("a file's stored chunks do not match its chunk rows")
    for entry in entries:
        if not (
            isinstance(entry, list)
            and len(entry) == len(_ENTRY_TYPES)
            and all(type(value) is kind for value, kind in zip(entry, _ENTRY_TYPES, strict=True))
        ):
            raise IndexCorrupt("a file's stored chunks cannot be read")
    return entries


def texts_of(packed: object, entries: Sequence[Sequence[Any]]) -> list[str]:
    """Each chunk's text, from a file's packed texts and its provenance entries (their lengths)."""
    data = unpack(packed)
    lengths = [entry[-1] for entry in entries]
    if any(length < 0 for length in lengths) or sum(lengths) != len(data):
        raise IndexCorrupt("a file's chunk texts do not match its chunks")
    out = []
    at = 0
    try:
        for length in lengths:
            out.append(data[at : at + length].decode("utf-8"))
            at += length
    except UnicodeDecodeError:
        raise IndexCorrupt("a chunk's text is not text") from None
    return out


def terms_of(packed: object, count: int) -> list[bytes]:
    """Each of the ``count`` chunks' encoded term lists, from a file's packed term lists (``pack_terms``)."""
    data = unpack(packed)
    head = count * _OFFSET.itemsize
    if len(data) < head:
        raise IndexCorrupt("a file's term lists are truncated")
    ends = np.frombuffer(data, _OFFSET, count).astype(np.int64) + head
    starts = np.concatenate([[head], ends[:-1]]).astype(np.int64)
    if count and (int(ends[-1]) != len(data) or bool(np.any(ends < starts))):
        raise IndexCorrupt("a file's term lists have the wrong length")
    return [data[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def seal_number(digest: str) -> int:
    """A sealed checksum (hex) as a number SQLite keeps in 8 bytes instead of 32 characters: its first 63
    bits."""
    return int(digest[:16], 16) & _INT63


def term_sum(term: object, term_id: object, key: bytes) -> int:
    """A vocabulary row's checksum (sealed with ``key``, as ``database.checksum``) in one hash call (a build
    writes a row per distinct term): the types, then the id (it ends at the next colon), then the term."""
    kinds = f"{type(term_id).__name__}:{type(term).__name__}"
    digest = hashlib.blake2b(f"{kinds}:{term_id}:{term}".encode("utf-8", "surrogatepass"), key=key, digest_size=8)
    return int.from_bytes(digest.digest(), "little") & _INT63  # SQLite's integers are signed 64-bit


def narrow(values: npt.NDArray[Any], narrow: type[np.generic], wide: type[np.generic]) -> bytes:
    """The bytes of ``values`` as ``narrow`` when every value fits exactly, else as ``wide``."""
    if len(values) and np.issubdtype(narrow, np.integer):
        info = np.iinfo(narrow)  # type: ignore[type-var]
        fits = bool(values.min() >= info.min and values.max() <= info.max and np.all(values == np.round(values)))
        if fits:
            return values.astype(narrow).tobytes()
    return values.astype(wide).tobytes()


def numbers(blob: bytes, count: int, dtypes: tuple[type[np.generic], type[np.generic]]) -> npt.NDArray[Any]:
    """``count`` numbers stored by ``_narrow`` (its width told by the blob's length)."""
    for dtype in dtypes:
        if len(blob) == count * np.dtype(dtype).itemsize:
            return np.frombuffer(blob, dtype)
    raise IndexCorrupt("stored postings have the wrong length")


def squeeze(values: npt.NDArray[Any], narrow_type: type[np.generic], wide: type[np.generic]) -> bytes:
    """``narrow``'s bytes, zlib-compressed (fast level: postings' gaps and counts are small, repetitive
    numbers, which the fastest level already shrinks four- to tenfold)."""
    return zlib.compress(narrow(values, narrow_type, wide), 1)


def unsqueeze(blob: bytes, count: int, dtypes: tuple[type[np.generic], type[np.generic]]) -> npt.NDArray[Any]:
    """``count`` numbers stored by ``squeeze``; ``IndexCorrupt`` when they cannot be read back."""
    try:
        raw = zlib.decompress(blob)
    except zlib.error:
        raise IndexCorrupt("stored postings cannot be decompressed") from None
    return numbers(raw, count, dtypes)


__all__ = [
    "ChunkRecord",
    "FileText",
    "file_records",
    "narrow",
    "numbers",
    "pack_terms",
    "provenance_of",
    "seal_number",
    "squeeze",
    "term_sum",
    "terms_of",
    "texts_of",
    "unpack",
    "unsqueeze",
]
