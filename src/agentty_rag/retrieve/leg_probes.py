"""The probes of a leg check (``retrieve.legs``): up to ``PROBE_LIMIT`` of an index's own documented
definitions, picked in a fixed pseudo-random order, so that the same index always yields the same probes.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

import xxhash

from agentty_rag.chunking.documented import DocumentedFunction, documented_functions
from agentty_rag.fsguard import UnsafeFile, read_regular
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.vectors.base import embed_hash
from agentty_rag.retrieve.legs import Probe
from agentty_rag.types import Chunk

PROBE_LIMIT = 48
# Documented definitions gathered before the pick: enough to choose from, few files parsed in a large index.
_GATHER = 3 * PROBE_LIMIT
_MIN_WORDS = 4
_MAX_FILE_BYTES = 1 << 20


def _order(key: str) -> int:
    """A fixed pseudo-random order: the same index always yields the same probes."""
    return xxhash.xxh3_64_intdigest(key.encode("utf-8", "surrogatepass"))


def probe_of(function: DocumentedFunction, text: str, chunks: dict[int, Chunk]) -> Probe | None:
    """The probe a documented function of a file makes, given the file's chunks by slot (None: unusable —
    too short a sentence, a test, or docs its chunks do not hold as the file does)."""
    if len(function.sentence.split()) < _MIN_WORDS or function.symbol.split(".")[-1].startswith("test"):
        return None
    start, end, replacement = function.mask
    docs = text.encode("utf-8")[start:end].decode("utf-8", "replace").strip()
    if not docs:
        return None
    holders = {slot: chunk for slot, chunk in chunks.items() if docs in chunk.text}
    answer = _answer(function.symbol, chunks, holders)
    if not answer & holders.keys():
        return None
    masked = {
        slot: replace(chunk, text=chunk.text.replace(docs, replacement.strip())) for slot, chunk in holders.items()
    }
    held = tuple((slot, embed_hash(chunk)) for slot, chunk in sorted(holders.items()))
    return Probe(function.sentence, answer, masked, held)


def _answer(symbol: str, chunks: dict[int, Chunk], holders: dict[int, Chunk]) -> frozenset[int]:
    """The chunks of a definition; a method of a type kept whole in one chunk is answered by that chunk (as
    rag-bench's labels count it)."""
    own = frozenset(slot for slot, chunk in chunks.items() if chunk.symbol == symbol)
    if own:
        return own
    return frozenset(slot for slot, chunk in holders.items() if chunk.symbol and symbol.startswith(chunk.symbol + "."))


def _read(root: str, ref: str) -> str | None:
    try:
        data = read_regular(os.path.join(root, ref), root, _MAX_FILE_BYTES)
    except (OSError, UnsafeFile):
        return None
    return None if len(data) > _MAX_FILE_BYTES else data.decode("utf-8", "replace")


def pick_probes(index: CorpusIndex, deadline: float, limit: int = PROBE_LIMIT) -> list[Probe]:
    """Up to ``limit`` probes of the index's documented definitions, the same for the same index."""
    root = index.config.roots.get("workspace", "")
    groups = index.file_groups()
    found: list[tuple[int, Probe]] = []
    for number in sorted(range(len(groups.refs)), key=lambda f: _order(groups.refs[f])):
        if len(found) >= _GATHER or time.monotonic() > deadline:
            break
        ref = groups.refs[number]
        chunks = index.chunks(groups.slots_of(number).tolist())
        if not root or not chunks or not next(iter(chunks.values())).spec.code:
            continue
        text = _read(root, ref)
        for function in documented_functions(ref, text) if text is not None else ():
            probe = probe_of(function, text or "", chunks)
            if probe is not None:
                found.append((_order(f"{ref}\0{function.symbol}\0{function.mask[0]}"), probe))
    return [probe for _, probe in sorted(found, key=lambda pair: pair[0])[:limit]]


__all__ = ["PROBE_LIMIT", "pick_probes", "probe_of"]
