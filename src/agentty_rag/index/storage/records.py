"""What a chunks-table row and a stored number look like: a chunk's record (made where the chunk is made, a
build's worker process), a file's chunks in blocks as stored (their provenance, texts and term lists, each
compressed as one value), and the narrow (and compressed) forms of postings and vocabulary checksums.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import struct
import threading
import zlib
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.storage.database import checksum
from agentty_rag.index.vectors.base import embed_hash
from agentty_rag.types import DEFINITION_KINDS, Chunk

_INT63 = (1 << 63) - 1


class ChunkRecord(NamedTuple):
    """A chunk's row as stored, but for the slots: what is read of every chunk (filters, vectors)."""

    source: str
    ref: str
    language: str
    embed_hash: str
    content_sum: str
    # 1 for a code definition (``types.DEFINITION_KINDS``): the embedding order's first tier, read by SQL alone.
    # Not sealed: it orders the background embedding and nothing else.
    definition: int = 0


class Block(NamedTuple):
    """Consecutive chunks of a file as their row of the texts table stores them, but for their term lists
    (``pack_terms``): each chunk's lines, kind, context, symbol, title and text length (JSON), and their texts
    one after the other (UTF-8), each zlib-compressed.

    Compressed as one value, a block's texts take about half the room they take compressed chunk by chunk (a
    chunk alone is too short for zlib to find much to repeat), and its chunks' context and symbol names, which
    repeat from chunk to chunk, a fifth of their plain room. A block ends once its texts reach
    ``BLOCK_BYTES``: zlib looks back 32 KiB at most, so a larger one would save little more, and a search
    reading a chunk unpacks its block only."""

    first: int  # the file's ordinal of its first chunk
    chunks: int
    provenance: bytes
    texts: bytes


_OFFSET = np.dtype("<u4")
# A chunk's entry in its file's provenance: start line, end line, kind, context, symbol, title, text length.
_ENTRY_TYPES = (int, int, str, str, str, str, int)


BLOCK_BYTES = 16 * 1024


def file_records(chunks: Sequence[Chunk]) -> tuple[list[ChunkRecord], list[Block]]:
    """What the chunks and texts tables store of one file's chunks (computed where the chunks are made)."""
    records: list[ChunkRecord] = []
    blocks: list[Block] = []
    entries: list[list[object]] = []
    parts: list[bytes] = []
    size = 0
    for number, c in enumerate(chunks):
        raw = c.text.encode("utf-8")
        row = (c.source, c.ref, c.language, embed_hash(c))
        records.append(ChunkRecord(*row, checksum(*row), int(c.kind in DEFINITION_KINDS)))
        entries.append([c.start_line, c.end_line, c.kind, c.context, c.symbol, c.title, len(raw)])
        parts.append(raw)
        size += len(raw)
        if size >= BLOCK_BYTES or number == len(chunks) - 1:
            blocks.append(_block(number + 1 - len(entries), entries, parts))
            entries, parts, size = [], [], 0
    return records, blocks


def _block(first: int, entries: list[list[object]], parts: list[bytes]) -> Block:
    provenance = zlib.compress(json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 6)
    texts = zlib.compress(b"".join(parts), 6)
    return Block(first, len(entries), provenance, texts)


def pack_terms(blobs: Sequence[bytes]) -> bytes:
    """A file's chunks' term lists (``chunk_terms.encode_terms`` blobs) as stored: where each ends (uint32,
    from the start of the first), then the blobs one after the other, zlib-compressed."""
    ends = np.cumsum([len(blob) for blob in blobs], dtype=np.int64)
    return zlib.compress(ends.astype(_OFFSET).tobytes() + b"".join(blobs), 6)


def unpack(packed: object) -> bytes:
    """The bytes of a block's packed provenance, texts or term lists; ``IndexCorrupt`` when they cannot be read
    back."""
    if not isinstance(packed, bytes):
        raise IndexCorrupt("a block's stored chunks are not bytes")
    try:
        return zlib.decompress(packed)
    except zlib.error:
        raise IndexCorrupt("a block's stored chunks cannot be decompressed") from None


class Provenance:
    """A block's packed provenance (``file_records``) read back: each entry is checked when it is asked for (a
    search reads a few chunks of a file, not all of them)."""

    def __init__(self, packed: object, count: int) -> None:
        try:
            entries = json.loads(unpack(packed).decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise IndexCorrupt("a block's stored chunks cannot be read") from None
        if not isinstance(entries, list) or len(entries) != count:
            raise IndexCorrupt("a block's stored chunks do not match its chunk rows")
        self._entries: list[Any] = entries

    def __len__(self) -> int:
        return len(self._entries)

    def __getitem__(self, at: int) -> list[Any]:
        entry = self._entries[at]
        if not (
            isinstance(entry, list)
            and len(entry) == len(_ENTRY_TYPES)
            and all(type(value) is kind for value, kind in zip(entry, _ENTRY_TYPES, strict=True))
        ):
            raise IndexCorrupt("a block's stored chunks cannot be read")
        return entry

    def lengths(self) -> list[int]:
        """Each chunk's text length."""
        try:
            values = [entry[-1] for entry in self._entries]
        except (TypeError, KeyError, IndexError):
            raise IndexCorrupt("a block's stored chunks cannot be read") from None
        if not all(type(value) is int and value >= 0 for value in values):
            raise IndexCorrupt("a block's stored chunks cannot be read")
        return values


class Slices:
    """One unpacked value of a block's chunks (their texts, their term lists), cut into each chunk's bytes only
    when asked for: a search reads a few chunks of a block, not all of them."""

    def __init__(self, data: bytes, bounds: list[int]) -> None:
        self._data = data
        self._bounds = bounds

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def __getitem__(self, at: int) -> bytes:
        return self._data[self._bounds[at] : self._bounds[at + 1]]


class Texts:
    """A block's chunk texts, decompressed only as far as the chunks asked for need (a search reads a chunk or
    two of a block, and zlib is read from the start)."""

    def __init__(self, packed: object, provenance: Provenance) -> None:
        if not isinstance(packed, bytes):
            raise IndexCorrupt("a block's stored chunks are not bytes")
        self._tail = packed
        self._inflate = zlib.decompressobj()
        self._data = bytearray()
        self._lock = threading.Lock()
        self._bounds = list(itertools.accumulate(provenance.lengths(), initial=0))

    def text(self, at: int) -> str:
        start, end = self._bounds[at], self._bounds[at + 1]
        try:
            with self._lock:  # a block read back is shared by the process's threads
                while len(self._data) < end and not self._inflate.eof:
                    self._data += self._inflate.decompress(self._tail, end - len(self._data))
                    self._tail = self._inflate.unconsumed_tail
                    if not self._tail and len(self._data) < end:
                        break
                if len(self._data) < end:
                    raise IndexCorrupt("a block's chunk texts do not match its chunks")
                return self._data[start:end].decode("utf-8")
        except zlib.error:
            raise IndexCorrupt("a block's chunk texts cannot be decompressed") from None
        except UnicodeDecodeError:
            raise IndexCorrupt("a chunk's text is not text") from None


def terms_of(packed: object, count: int) -> Slices:
    """Each of the ``count`` chunks' encoded term lists, from a block's packed term lists (``pack_terms``)."""
    data = unpack(packed)
    head = count * _OFFSET.itemsize
    if len(data) < head:
        raise IndexCorrupt("a block's term lists are truncated")
    ends = struct.unpack(f"<{count}I", data[:head])  # ``pack_terms``' uint32
    bounds = [head, *(head + end for end in ends)]
    if count and (bounds[-1] != len(data) or any(b < a for a, b in itertools.pairwise(bounds))):
        raise IndexCorrupt("a block's term lists have the wrong length")
    return Slices(data, bounds)


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
    "BLOCK_BYTES",
    "Block",
    "Slices",
    "Texts",
    "file_records",
    "narrow",
    "numbers",
    "Provenance",
    "pack_terms",
    "seal_number",
    "squeeze",
    "term_sum",
    "terms_of",
    "unpack",
    "unsqueeze",
]
