"""What a chunks-table row and a stored number look like: a chunk's record (made where the chunk is made, a
build's worker process), its text as stored, and the narrow (and compressed) forms of postings and vocabulary
checksums.
"""

from __future__ import annotations

import hashlib
import zlib
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.lexical.chunk_terms import deflate
from agentty_rag.index.storage.database import checksum
from agentty_rag.index.vectors.base import embed_hash
from agentty_rag.types import Chunk

_INT63 = (1 << 63) - 1
# Texts shorter than this are stored as they are: compressing them saves nothing.
_PACK_FROM = 64


class ChunkRecord(NamedTuple):
    """A chunk as its row stores it, but for the slot and the terms (which the writer assigns)."""

    file_key: str
    source: str
    ref: str
    start_line: int
    end_line: int
    language: str
    kind: str
    context: str
    symbol: str
    title: str
    embed_hash: str
    text: str | bytes  # packed: see ``pack_text``
    content_sum: str


def pack_text(text: str) -> str | bytes:
    """A chunk's text as stored: zlib-compressed bytes when that is smaller, else the text itself."""
    if len(text) < _PACK_FROM:
        return text
    raw = text.encode("utf-8")
    packed = deflate(raw)
    return packed if len(packed) < len(raw) else text


def unpack_text(stored: object) -> str:
    """The text of ``pack_text``'s value; ``IndexCorrupt`` when it cannot be read back."""
    if isinstance(stored, str):
        return stored
    if not isinstance(stored, bytes):
        raise IndexCorrupt("a chunk's text is not text")
    try:
        return zlib.decompress(stored).decode("utf-8")
    except (zlib.error, UnicodeDecodeError):
        raise IndexCorrupt("a chunk's text cannot be decompressed") from None


def chunk_record(key: str, chunk: Chunk) -> ChunkRecord:
    """What the chunks table stores of a chunk of file ``key`` (computed where the chunk is made)."""
    c = chunk
    content = (
        key,
        c.source,
        c.ref,
        c.start_line,
        c.end_line,
        c.language,
        c.kind,
        c.context,
        c.symbol,
        c.title,
        embed_hash(c),
        pack_text(c.text),
    )
    return ChunkRecord(*content, checksum(*content))


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
    "chunk_record",
    "narrow",
    "numbers",
    "pack_text",
    "squeeze",
    "term_sum",
    "unpack_text",
    "unsqueeze",
]
