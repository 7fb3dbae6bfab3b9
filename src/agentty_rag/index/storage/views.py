"""What searches read again and again from one state of an index, worked out once per state.

Which file each chunk comes from, filter masks, and chunk rows with their term ids: each is kept until the
next reload or commit (the files' BM25 statistics are the lexical backend's). Everything here runs under the
index's lock.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from agentty_rag.errors import IndexCorrupt
from agentty_rag.index.lexical.chunk_terms import decode_terms
from agentty_rag.index.lexical.protocol import LexicalIndex
from agentty_rag.index.storage.store import Store
from agentty_rag.types import Chunk

# Chunk rows kept in memory between searches (a few MB).
ROW_CACHE = 8192
_T = TypeVar("_T")


@dataclass(frozen=True)
class FileGroups:
    """The files of an index: ``refs`` in path order, each slot's position in it (-1: no chunk there), and
    each file's slots: ``slots[starts[f]:starts[f + 1]]``, in slot order."""

    of_slot: npt.NDArray[np.int32]
    refs: tuple[str, ...]
    slots: npt.NDArray[np.int32]
    starts: npt.NDArray[np.int64]

    def slots_of(self, file: int) -> npt.NDArray[np.int32]:
        return self.slots[int(self.starts[file]) : int(self.starts[file + 1])]


class Views:
    """The per-state views of one index.

    Args:
        store: the index database as it is now (opened on first use).
        field_names: the index's fields, in the order of its term blobs.
        row_cache: chunk rows kept between searches.
    """

    def __init__(self, store: Callable[[], Store], field_names: tuple[str, ...], row_cache: int = ROW_CACHE) -> None:
        self._store = store
        self._row_cache = row_cache
        self._field_names = field_names
        self._attributes: dict[int, tuple[str, str, str]] | None = None
        self._groups: FileGroups | None = None
        self._numbers: dict[str, int] | None = None  # each file's number in the groups, once an edit asked
        self._rows: OrderedDict[int, tuple[Chunk, frozenset[int]]] = OrderedDict()
        self._rows_generation = -1
        self._masks: dict[str, npt.NDArray[np.bool_]] = {}

    def forget(self) -> None:
        """The index changed: work everything out again when next asked."""
        self._attributes = None
        self._rows.clear()
        self._groups = None
        self._numbers = None
        self._masks = {}

    def patched(self, removed: Sequence[int], added: Mapping[int, tuple[str, str, str]], size: int) -> None:
        """A patch was committed: update the chunks' attributes and the file groups in place when the patch
        re-chunked files the groups already hold (an edit), else work them out again when next asked; the
        rest is forgotten. Reading every chunk's attributes again costs O(chunks) after each edit.

        Args:
            removed: the slots whose chunks the patch deleted.
            added: (source, ref, language) of each chunk it added, by slot.
            size: the number of slots now (``len(lexical.alive)``).
        """
        attributes, groups, numbers = self._attributes, self._groups, self._numbers
        self.forget()
        if attributes is None:
            return
        gone = {attributes[s][1] for s in removed if s in attributes}
        for slot in removed:
            attributes.pop(slot, None)
        attributes.update(added)
        self._attributes = attributes
        if groups is None or gone != {ref for _, ref, _ in added.values()}:
            return  # a file appeared or lost every chunk: the files themselves changed
        number = numbers if numbers is not None else {ref: i for i, ref in enumerate(groups.refs)}
        if any(ref not in number for ref in gone):
            return
        self._numbers = number  # the same files: their numbers hold for the next edit too
        of_slot = np.full(size, -1, np.int32)
        kept = min(size, len(groups.of_slot))
        of_slot[:kept] = groups.of_slot[:kept]
        of_slot[[s for s in removed if s < size]] = -1
        for slot, (_, ref, _) in added.items():
            if slot < size:
                of_slot[slot] = number[ref]
        self._groups = _grouped(of_slot, groups.refs)

    def attributes(self) -> dict[int, tuple[str, str, str]]:
        """(source, ref, language) of every chunk, by slot."""
        if self._attributes is None:
            self._attributes = {s: (src, ref, lang) for s, src, ref, lang in self._store().chunk_attributes()}
        return self._attributes

    def file_groups(self, alive: npt.NDArray[np.bool_]) -> FileGroups:
        """Which file each chunk comes from."""
        if self._groups is not None and len(self._groups.of_slot) == len(alive):
            return self._groups
        attributes = self.attributes()
        refs = sorted({ref for _, ref, _ in attributes.values()})
        number = {ref: i for i, ref in enumerate(refs)}
        of_slot = np.full(len(alive), -1, np.int32)
        for slot, (_, ref, _) in attributes.items():
            if slot < len(of_slot):
                of_slot[slot] = number[ref]
        self._groups = _grouped(of_slot, tuple(refs))
        return self._groups

    def rows(
        self, lexical: LexicalIndex, generation: int, slots: Sequence[int]
    ) -> dict[int, tuple[Chunk, frozenset[int]]]:
        """Chunks and their term ids, read (and checked) once per index generation: a slot's row never
        changes until the next commit, and consecutive searches read many of the same candidates.

        Every row asked for is in the answer, however many: the cache keeps the ``row_cache`` most recently
        used, and is trimmed only after the answer holds its rows."""
        if self._rows_generation != generation:
            self._rows.clear()
            self._rows_generation = generation
        found: dict[int, tuple[Chunk, frozenset[int]]] = {}
        missing: list[int] = []
        for slot in slots:
            row = self._rows.get(slot)
            if row is None:
                missing.append(slot)
            else:
                self._rows.move_to_end(slot)
                found[slot] = row
        if missing:
            store = self._store()
            for slot, (chunk, blob) in _all_live(
                store, lexical, generation, missing, store.chunk_rows(missing)
            ).items():
                fields = decode_terms(self._field_names, blob)
                terms = frozenset(int(t) for ids, _ in fields.values() for t in ids.tolist())
                found[slot] = self._rows[slot] = (chunk, terms)
        while len(self._rows) > self._row_cache:
            self._rows.popitem(last=False)
        return {slot: found[slot] for slot in slots if slot in found}

    def allowed(
        self, alive: npt.NDArray[np.bool_], key: str, keep: Callable[[str, str, str], bool]
    ) -> npt.NDArray[np.bool_]:
        """A mask over slots of the chunks ``keep(source, ref, language)`` admits."""
        mask = self._masks.get(key)
        if mask is not None and len(mask) == len(alive):
            return mask
        mask = np.zeros(len(alive), bool)
        for slot, (source, ref, language) in self.attributes().items():
            if slot < len(mask) and keep(source, ref, language):
                mask[slot] = True
        self._masks[key] = mask
        return mask


def _all_live(
    store: Store, lexical: LexicalIndex, generation: int, slots: Sequence[int], found: dict[int, _T]
) -> dict[int, _T]:
    """``found``, when it holds every live slot asked for. A live slot the database lacks, while no other
    process changed the index, is corruption: a damaged row key hides its row from every lookup."""
    alive = lexical.alive
    missing = [s for s in slots if s not in found and 0 <= s < len(alive) and alive[s]]
    if missing and store.generation() == generation:
        raise IndexCorrupt(f"chunk {missing[0]} is missing from {store.path.name}")
    return found


def _grouped(of_slot: npt.NDArray[np.int32], refs: tuple[str, ...]) -> FileGroups:
    """The file groups of ``refs`` from each slot's file number (-1: no chunk)."""
    held = np.flatnonzero(of_slot >= 0)
    slots = held[np.argsort(of_slot[held], kind="stable")].astype(np.int32)
    starts = np.zeros(len(refs) + 1, np.int64)
    np.cumsum(np.bincount(of_slot[held], minlength=len(refs)), out=starts[1:])
    return FileGroups(of_slot, refs, slots, starts)


__all__ = ["ROW_CACHE", "FileGroups", "Views"]
