"""A chunk's terms as the index keeps them: per field, term ids (ascending) and counts, packed small.

The blob is what an update reads back to patch the in-memory index, and what a search reads to know every
term a candidate holds, without tokenizing its text again. Its layout: one byte giving the width of every
number that follows (1, 2 or 4 bytes, the narrowest that holds them), the size of each field (uint32), then
per field its ids as gaps from the previous id (the first from 0) and its counts. Ids ascending make the gaps
small: most chunks fit in two bytes a number, half the size of plain int32. A file's blobs are stored one
after the other and compressed together (``records.FileText``).

A full build counts a file's terms in a worker process with ids of the file's own (``FileTerms``); the
writer maps them to the index's ids for the whole file at once (``FileLayout``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.lexical.protocol import FieldTerms

IntArray = npt.NDArray[np.int32]
_WIDTHS: dict[int, np.dtype[Any]] = {1: np.dtype("<u1"), 2: np.dtype("<u2"), 4: np.dtype("<u4")}
_SIZE = np.dtype("<u4")
_NONE: IntArray = np.zeros(0, np.int32)


def _width(values: npt.NDArray[np.int64]) -> int:
    top = int(values.max()) if len(values) else 0
    return 1 if top < 1 << 8 else 2 if top < 1 << 16 else 4


def _pack(sizes: Sequence[int], numbers: npt.NDArray[np.int64]) -> bytes:
    width = _width(numbers)
    head = bytes((width,)) + np.asarray(sizes, _SIZE).tobytes()
    return head + numbers.astype(_WIDTHS[width]).tobytes()


def _gaps(ids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    return np.diff(ids, prepend=0)


def encode_terms(fields: Sequence[str], terms: Mapping[str, FieldTerms]) -> bytes:
    """Pack a chunk's per-field (ids ascending, counts)."""
    sizes = [len(terms[f][0]) if f in terms else 0 for f in fields]
    parts: list[npt.NDArray[np.int64]] = [np.zeros(0, np.int64)]
    for name, size in zip(fields, sizes, strict=True):
        if size:
            ids, counts = terms[name]
            parts.extend((_gaps(ids.astype(np.int64)), counts.astype(np.int64)))
    return _pack(sizes, np.concatenate(parts))


def decode_terms(fields: Sequence[str], blob: bytes) -> dict[str, FieldTerms]:
    """The per-field (ids, counts) of an ``encode_terms`` blob; ``IndexCorrupt`` when it is damaged."""
    n = len(fields)
    head = 1 + 4 * n
    if len(blob) < head or blob[0] not in _WIDTHS:
        raise IndexCorrupt("a chunk's term list is truncated")
    dtype = _WIDTHS[blob[0]]
    sizes = np.frombuffer(blob, _SIZE, count=n, offset=1).tolist()
    if (len(blob) - head) % dtype.itemsize or (len(blob) - head) // dtype.itemsize != 2 * sum(sizes):
        raise IndexCorrupt("a chunk's term list has the wrong length")
    data = np.frombuffer(blob, dtype, offset=head).astype(np.int64)
    out: dict[str, FieldTerms] = {}
    offset = 0
    for name, size in zip(fields, sizes, strict=True):
        if size:
            ids = np.cumsum(data[offset : offset + size])
            if ids[-1] >= 1 << 31:
                raise IndexCorrupt("a chunk's term list holds an impossible term id")
            out[name] = (ids.astype(np.int32), data[offset + size : offset + 2 * size].astype(np.int32))
            offset += 2 * size
    return out


@dataclass(frozen=True)
class FileTerms:
    """The term counts of a file's chunks, with ids of the file's own: ``terms`` in order of first occurrence
    (chunk by chunk, field by field), and per field the ids, the counts and how many terms each chunk has."""

    terms: list[str]
    fields: dict[str, tuple[IntArray, IntArray, IntArray]]

    @classmethod
    def of(cls, counted: Sequence[Mapping[str, Counter[str]]]) -> FileTerms:
        """From each chunk's term counts per field (in the order a full build numbers new terms)."""
        local: dict[str, int] = {}
        columns: dict[str, tuple[list[int], list[int], list[int]]] = {}
        for number, counts in enumerate(counted):
            for name, counter in counts.items():
                ids, tfs, sizes = columns.setdefault(name, ([], [], [0] * len(counted)))
                sizes[number] = len(counter)
                ids.extend(local.setdefault(term, len(local)) for term in counter)
                tfs.extend(counter.values())
        fields = {
            name: (np.asarray(ids, np.int32), np.asarray(tfs, np.int32), np.asarray(sizes, np.int32))
            for name, (ids, tfs, sizes) in columns.items()
        }
        return cls(list(local), fields)


@dataclass(frozen=True)
class FieldColumn:
    """One field of a file's chunks in index ids: each chunk's ids ascending, their counts, and where each
    chunk's run starts (``bounds``, one more than there are chunks)."""

    ids: IntArray
    counts: IntArray
    bounds: npt.NDArray[np.int64]

    def chunk_of_each(self) -> npt.NDArray[np.int64]:
        return np.repeat(np.arange(len(self.bounds) - 1), np.diff(self.bounds))


class FileLayout:
    """A file's terms mapped to the index's ids (``index_ids``: the index id of each of the file's own)."""

    def __init__(self, fields: Sequence[str], terms: FileTerms, index_ids: IntArray, n_chunks: int) -> None:
        self.field_names = tuple(fields)
        self.n_chunks = n_chunks
        self.columns = {name: self._column(terms, name, index_ids) for name in self.field_names}

    def _column(self, terms: FileTerms, name: str, index_ids: IntArray) -> FieldColumn:
        local, counts, sizes = terms.fields.get(name, (_NONE, _NONE, np.zeros(self.n_chunks, np.int32)))
        ids = index_ids[local]
        chunk = np.repeat(np.arange(self.n_chunks), sizes)
        order = np.lexsort((ids, chunk))
        bounds = np.zeros(self.n_chunks + 1, np.int64)
        np.cumsum(sizes, out=bounds[1:])
        return FieldColumn(ids[order].astype(np.int32), counts[order].astype(np.int32), bounds)

    def blobs(self) -> list[bytes]:
        """Each chunk's ``encode_terms`` blob, made for the whole file at once: every chunk's numbers in blob
        order (field by field: id gaps, then counts), then each chunk's slice at its width."""
        n_fields = len(self.field_names)
        sizes = np.stack([np.diff(c.bounds) for c in self.columns.values()], axis=1).astype(np.int64)
        values: list[npt.NDArray[np.int64]] = []
        keys: list[npt.NDArray[np.int64]] = []
        for f, column in enumerate(self.columns.values()):
            ids = column.ids.astype(np.int64)
            gaps = np.diff(ids, prepend=0)
            starts = column.bounds[:-1][sizes[:, f] > 0]
            gaps[starts] = ids[starts]  # each chunk's first id counts from 0
            chunk = column.chunk_of_each()
            values += (gaps, column.counts.astype(np.int64))
            keys += (chunk * 2 * n_fields + 2 * f, chunk * 2 * n_fields + 2 * f + 1)
        numbers = np.concatenate([np.zeros(0, np.int64), *values])
        numbers = numbers[np.argsort(np.concatenate([np.zeros(0, np.int64), *keys]), kind="stable")]
        ends = np.cumsum(2 * sizes.sum(axis=1))
        starts = ends - 2 * sizes.sum(axis=1)
        tops = np.maximum.reduceat(np.append(numbers, 0), np.minimum(starts, len(numbers)))[: self.n_chunks]
        tops[starts == ends] = 0
        widths = np.where(tops < 1 << 8, 1, np.where(tops < 1 << 16, 2, 4)).tolist()
        packed = {w: numbers.astype(dtype).tobytes() for w, dtype in _WIDTHS.items() if w in widths}
        heads = sizes.astype(_SIZE).tobytes()
        head = 4 * n_fields
        return [
            bytes((w,)) + heads[i * head : (i + 1) * head] + packed[w][a * w : b * w]
            for i, (w, a, b) in enumerate(zip(widths, starts.tolist(), ends.tolist(), strict=True))
        ]

    def lengths(self, name: str) -> npt.NDArray[np.float64]:
        """Each chunk's length in a field: the sum of its counts."""
        column = self.columns[name]
        lengths: npt.NDArray[np.float64] = np.bincount(
            column.chunk_of_each(), weights=column.counts, minlength=self.n_chunks
        ).astype(np.float64)
        return lengths


__all__ = ["FieldColumn", "FileLayout", "FileTerms", "decode_terms", "encode_terms"]
