"""``rag_<name>.neighbours`` under ``.agentty/``: the code index's neighbourhoods (``density.py``), kept so that
a new process (a command-line search, the proactive hook, a restarted server) starts from what another one
found instead of comparing every vector with every other again (0.4 s for 6,000 chunks, 1.2 s for 40,000).

The file is a cache: each row's vector hash says which vectors its neighbourhoods were found for, and the
process that reads it compares again only the rows that differ. A file that is missing, damaged (its checksum
leads it), of another version, or read through a link, is left alone and the neighbourhoods are found anew.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import xxhash

from agentty_rag.fsguard import read_state_file, write_state_file
from agentty_rag.index.vectors.density import Neighbourhoods

_VERSION = 1
# 40,000 chunks take 3.6 MB; this bounds what a read takes in (about ten million chunks).
_MAX_BYTES = 1 << 30


def neighbours_path(state_dir: Path, name: str) -> Path:
    return state_dir / f"rag_{name}.neighbours"


def encode(kept: Neighbourhoods) -> bytes:
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
    return xxhash.xxh3_64_hexdigest(body).encode("ascii") + b"\n" + body


def decode(data: bytes) -> tuple[Neighbourhoods | None, str]:
    """The neighbourhoods in a file's bytes, or None and why they cannot be used."""
    digest, _, body = data.partition(b"\n")
    if digest.decode("ascii", "replace") != xxhash.xxh3_64_hexdigest(body):
        return None, "it was damaged"
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:  # stored, never inflated: no member outgrows the file
            if any(member.compress_type != zipfile.ZIP_STORED for member in archive.infolist()):
                return None, "it is not as this version writes it"
        with np.load(io.BytesIO(body), allow_pickle=False) as arrays:
            if int(arrays["version"]) != _VERSION:
                return None, "it is of another version"
            kept = Neighbourhoods(
                np.asarray(arrays["hashes"], np.uint64),
                np.asarray(arrays["present"], np.bool_),
                np.asarray(arrays["best"], np.float32),
                np.asarray(arrays["whose"], np.int32),
                int(arrays["level"]),
                int(arrays["cap"]),
            )
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as error:
        return None, f"it was damaged ({type(error).__name__})"
    problem = kept.problem()
    return (None, problem) if problem else (kept, "")


def write(path: Path, kept: Neighbourhoods) -> None:
    """Write the file atomically, never through a link, never into a ``.agentty`` that links out.

    Raises:
        OSError: it cannot be written (``UnsafeFile`` for a link or a folder that links out).
    """
    write_state_file(path, encode(kept))


def read(path: Path) -> tuple[Neighbourhoods | None, str]:
    """The kept neighbourhoods (None when there are none or they cannot be used), and what was wrong."""
    data, problem = read_state_file(path, _MAX_BYTES)
    if data is None:
        return None, f"{path.name} could not be read ({problem})" if problem else ""
    kept, problem = decode(data)
    return kept, f"{path.name} was not used: {problem}" if problem else ""


__all__ = ["decode", "encode", "neighbours_path", "read", "write"]
