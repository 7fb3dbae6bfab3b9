"""``rag_<name>.neighbours`` under ``.agentty/``: the code index's neighbourhoods (``density.py``), kept so that
a new process (a command-line search, the proactive hook, a restarted server) starts from what another one
found instead of comparing every vector with every other again (0.4 s for 6,000 chunks, 1.2 s for 40,000).

The file is a cache: each row's vector hash says which vectors its neighbourhoods were found for, and the
process that reads it compares again only the rows that differ. A file that is missing, damaged (its checksum
leads it), of another version, or read through a link, is left alone and the neighbourhoods are found anew.
The checksum is sealed with this machine's key (``database.checksum``): a file written elsewhere (copied,
committed), whatever it holds, reads as damaged.
"""

from __future__ import annotations

import io
import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agentty_rag.fsguard import read_state_file, write_state_file
from agentty_rag.index.storage.database import checksum
from agentty_rag.index.vectors.density import REFERENCE_CAP, Neighbourhoods

_VERSION = 1
# About 90 bytes a chunk (40,000 chunks: 3.6 MB); this bounds what a read takes in (about 3 million chunks).
_MAX_BYTES = 256 << 20


def neighbours_path(state_dir: Path, name: str) -> Path:
    return state_dir / f"rag_{name}.neighbours"


def _seal(body: bytes, key: bytes) -> bytes:
    return checksum(body, key=key).encode("ascii")


def encode(kept: Neighbourhoods, key: bytes) -> bytes:
    buffer = io.BytesIO()
    np.savez(
        buffer,
        version=np.int64(_VERSION),
        hashes=kept.hashes,
        present=kept.present,
        best=kept.best,
        whose=kept.whose,
        level=np.int64(kept.level),
        cap=np.int64(kept.cap),
    )
    body = buffer.getvalue()
    return _seal(body, key) + b"\n" + body


# The arrays a file holds, with the kind and number of dimensions each must have.
_ARRAYS = {
    "version": ("i", 0),
    "level": ("i", 0),
    "cap": ("i", 0),
    "hashes": ("u", 1),
    "present": ("b", 1),
    "best": ("f", 2),
    "whose": ("i", 2),
}


_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def decode(data: bytes, key: bytes, cap: int = REFERENCE_CAP) -> tuple[Neighbourhoods | None, str]:
    """The neighbourhoods in a file's bytes, or None and why they cannot be used (a cache: nothing in it can
    raise, allocate more than the file holds, or be taken if it was found with another reference ``cap``, or
    sealed with another ``key``)."""
    digest, _, body = data.partition(b"\n")
    if digest != _seal(body, key):
        return None, "it was damaged"
    try:
        arrays = _arrays(body)
        if isinstance(arrays, str):
            return None, arrays
        if int(arrays["version"]) != _VERSION:
            return None, "it is of another version"
        kept = Neighbourhoods(
            arrays["hashes"].astype(np.uint64),
            arrays["present"].astype(np.bool_),
            arrays["best"].astype(np.float32),
            arrays["whose"].astype(np.int32),
            int(arrays["level"]),
            int(arrays["cap"]),
        )
        problem = kept.problem(cap)
    except Exception as error:  # noqa: BLE001 - a cache: whatever is wrong with it, it is found anew
        return None, f"it was damaged ({type(error).__name__})"
    return (None, problem) if problem else (kept, "")


def _arrays(body: bytes) -> dict[str, npt.NDArray[Any]] | str:
    """The arrays of an uncompressed ``.npz``, each checked against ``_ARRAYS`` before it is read (a header
    may declare any shape); a string says what is wrong."""
    arrays = {}
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        members = {member.filename: member for member in archive.infolist()}
        if sorted(members) != sorted(f"{name}.npy" for name in _ARRAYS):
            return "it is not as this version writes it"
        for name, (kind, dimensions) in _ARRAYS.items():
            member = members[f"{name}.npy"]
            if member.compress_type != zipfile.ZIP_STORED:  # never inflated: nothing outgrows the file
                return "it is not as this version writes it"
            with archive.open(member) as handle:
                header = _HEADERS.get(np.lib.format.read_magic(handle))
                if header is None:
                    return f"its {name} is not as this version writes it"
                shape, _, dtype = header(handle)
                size = math.prod(shape) * dtype.itemsize
                if dtype.kind != kind or dtype.hasobject or len(shape) != dimensions or size > member.file_size:
                    return f"its {name} is not as this version writes it"
        for name in _ARRAYS:
            with archive.open(members[f"{name}.npy"]) as handle:
                arrays[name] = np.lib.format.read_array(handle, allow_pickle=False)
    return arrays


def write(path: Path, kept: Neighbourhoods, key: bytes) -> None:
    """Write the file atomically, never through a link, never into a ``.agentty`` that links out.

    Raises:
        OSError: it cannot be written (``UnsafeFile`` for a link or a folder that links out).
    """
    write_state_file(path, encode(kept, key))


def read(path: Path, key: bytes) -> tuple[Neighbourhoods | None, str]:
    """The kept neighbourhoods (None when there are none or they cannot be used), and what was wrong."""
    data, problem = read_state_file(path, _MAX_BYTES)
    if data is None:
        return None, f"{path.name} could not be read ({problem})" if problem else ""
    kept, problem = decode(data, key)
    return kept, f"{path.name} was not used: {problem}" if problem else ""


__all__ = ["decode", "encode", "neighbours_path", "read", "write"]
