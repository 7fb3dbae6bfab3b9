"""Where an index's graph lives: a file beside the index's database, and one copy in memory per index.

``rag_<name>.graph.json`` under ``.agentty/`` holds the graph (``index.graph``), the fingerprint of the index
state it was built from, and a checksum over both, sealed with this machine's key (``database.checksum``): a
file made elsewhere (copied, committed) reads as damaged. The fingerprint covers the index's files and the slots of
their passages (an edited file's passages get new slots), so a change to the index makes the stored graph
stale. A stale graph is rebuilt whole rather than patched — it is a function of the index, and a rebuild
gives the same graph a first build would — within the size cap, and the build time is reported. A missing,
damaged or stale file is rebuilt and rewritten; a file that cannot be written (read-only, a link) leaves the
graph in memory for the process, and an index kept in memory never writes one.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import xxhash

from agentty_rag.fsguard import UnsafeFile, read_state_file, write_state_file
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.graph.model import GRAPH_VERSION, Graph, build
from agentty_rag.index.storage.database import checksum
from agentty_rag.index.storage.views import FileGroups

_KEPT = 4  # graphs kept in memory (one per index a process searches)
# A graph file read whole: past this it is rebuilt (a graph of the size cap's passages is tens of MB).
_MAX_BYTES = 256 << 20
_LOCK = threading.Lock()
_CACHE: OrderedDict[tuple[str, int], tuple[FileGroups, Graph]] = OrderedDict()


@dataclass(frozen=True)
class Loaded:
    """The graph and what was done to have it ("" when it was in memory or read from its file); or, when the
    index is over the size cap, no graph and why."""

    graph: Graph | None
    done: str = ""
    too_large: str = ""


def graph_path(index: CorpusIndex) -> Path:
    return index.config.state_dir / f"rag_{index.config.name}.graph.json"


def fingerprint(groups: FileGroups) -> str:
    """The index state: its files in path order, and which file each slot holds."""
    digest = xxhash.xxh3_128()
    digest.update(f"graph {GRAPH_VERSION}\0".encode())
    digest.update("\0".join(groups.refs).encode("utf-8", "surrogatepass"))
    digest.update(groups.of_slot.tobytes())
    return digest.hexdigest()


def graph_of(index: CorpusIndex, max_chunks: int) -> Loaded:
    """The index's graph as of now: from memory, from its file, or built (the caller holds the index still);
    none when the index holds more than ``max_chunks`` passages."""
    groups = index.file_groups()
    key = (str(graph_path(index)), id(index))
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is not None and cached[0] is groups:
        return Loaded(cached[1])
    state = fingerprint(groups)
    if cached is not None and cached[1].fingerprint == state:
        loaded = Loaded(cached[1])
    else:
        loaded = _read_or_build(index, state, max_chunks)
    if loaded.graph is None:
        return loaded
    with _LOCK:
        _CACHE[key] = (groups, loaded.graph)
        _CACHE.move_to_end(key)
        while len(_CACHE) > _KEPT:
            _CACHE.popitem(last=False)
    return loaded


def _read_or_build(index: CorpusIndex, state: str, max_chunks: int) -> Loaded:
    path = graph_path(index)
    persisted = index.config.persist and index.config.db_path.exists()
    key = index.config.seal_key
    stored, problem = read(path, key) if persisted else (None, "")
    if stored is not None and stored.fingerprint == state:
        return Loaded(stored)
    if index.n_chunks > max_chunks:
        return Loaded(None, too_large=f"{index.n_chunks} passages, over the cap of {max_chunks}")
    graph = build(index, state)
    why = problem or ("the index changed" if stored is not None else "")
    done = f"built in {graph.seconds:.2f} s ({graph.describe()}{'; ' + why if why else ''})"
    if persisted:
        try:
            write(path, graph, key)
        except (OSError, UnsafeFile) as error:
            done += f"; kept in memory ({error})"
    return Loaded(graph, done)


def _seal(text: bytes, key: bytes) -> bytes:
    return checksum(text, key=key).encode("ascii")


def _encode(graph: Graph, key: bytes) -> bytes:
    body = {
        "version": GRAPH_VERSION,
        "fingerprint": graph.fingerprint,
        "seconds": round(graph.seconds, 3),
        "links": {ref: [list(n) for n in found] for ref, found in graph.links.items()},
        "similar": [[slot, [list(n) for n in found]] for slot, found in sorted(graph.similar.items())],
        "community": dict(sorted(graph.community.items())),
    }
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    return _seal(text, key) + b"\n" + text


def write(path: Path, graph: Graph, key: bytes) -> None:
    """Write the graph file atomically (never through a link, never into a ``.agentty`` that links out)."""
    write_state_file(path, _encode(graph, key))


def read(path: Path, key: bytes) -> tuple[Graph | None, str]:
    """The stored graph (None when there is none or it cannot be used), and what was wrong with it."""
    data, problem = read_state_file(path, _MAX_BYTES)
    if data is None:
        return None, f"the stored graph could not be read: {problem}" if problem else ""
    digest, _, text = data.partition(b"\n")
    if digest != _seal(text, key):
        return None, "the stored graph was damaged"
    try:
        body = json.loads(text)
        if body.get("version") != GRAPH_VERSION:
            return None, "the stored graph is of another version"
        graph = Graph(
            str(body["fingerprint"]),
            {ref: tuple((str(t), str(k), float(w)) for t, k, w in found) for ref, found in body["links"].items()},
            {int(slot): tuple((int(s), float(w)) for s, w in found) for slot, found in body["similar"]},
            {str(ref): int(n) for ref, n in body["community"].items()},
            float(body["seconds"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
        return None, f"the stored graph was damaged ({type(error).__name__})"
    weights = [w for found in graph.links.values() for _, _, w in found]
    weights += [w for found in graph.similar.values() for _, w in found]
    if not all(math.isfinite(w) for w in weights):
        return None, "the stored graph was damaged (a weight that is not a number)"
    return graph, ""


def forget() -> None:
    """Drop the graphs kept in memory (a test's next search reads or builds again)."""
    with _LOCK:
        _CACHE.clear()


__all__ = ["Loaded", "fingerprint", "forget", "graph_of", "graph_path", "read", "write"]
