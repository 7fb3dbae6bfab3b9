"""A chunk's terms as the chunks table keeps them: per field, term ids and counts, packed as int32.

The blob is what an update reads back to patch the in-memory index, and what a search reads to know every
term a candidate holds, without tokenizing its text again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.lexical import FieldTerms


def encode_terms(fields: Sequence[str], terms: Mapping[str, FieldTerms]) -> bytes:
    """Pack a chunk's per-field (ids, counts) as int32: field sizes, then each field's ids and counts."""
    sizes = [len(terms[f][0]) if f in terms else 0 for f in fields]
    parts: list[npt.NDArray[np.int32]] = [np.asarray(sizes, np.int32)]
    for name, size in zip(fields, sizes, strict=True):
        if size:
            parts.extend((terms[name][0].astype(np.int32), terms[name][1].astype(np.int32)))
    return np.concatenate(parts).tobytes()


def decode_terms(fields: Sequence[str], blob: bytes) -> dict[str, FieldTerms]:
    """The per-field (ids, counts) of an ``encode_terms`` blob; ``IndexCorrupt`` when it is damaged."""
    if len(blob) % 4:
        raise IndexCorrupt("a chunk's term list is truncated")
    data = np.frombuffer(blob, np.int32)
    n = len(fields)
    if len(data) < n:
        raise IndexCorrupt("a chunk's term list is truncated")
    sizes = data[:n].tolist()
    out: dict[str, FieldTerms] = {}
    offset = n
    for name, size in zip(fields, sizes, strict=True):
        if size:
            out[name] = (data[offset : offset + size], data[offset + size : offset + 2 * size])
            offset += 2 * size
    if offset != len(data):
        raise IndexCorrupt("a chunk's term list has the wrong length")
    return out


__all__ = ["decode_terms", "encode_terms"]
