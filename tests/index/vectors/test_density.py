"""Neighbourhood density: each vector's mean similarity to its nearest others, kept exact as vectors come, change
and go; and the dense leg's similarities less a share of it."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.storage.database import checksum
from agentty_rag.index.vectors import neighbour_file
from agentty_rag.index.vectors.base import DenseIndex, Ids, Matrix
from agentty_rag.index.vectors.dense import EmbeddingProfile
from agentty_rag.index.vectors.density import (
    NEIGHBOURS,
    NeighbourDensity,
    Neighbourhoods,
    sample_level,
    vector_hash,
)
from agentty_rag.index.vectors.fake_embedder import FakeEmbedder
from agentty_rag.index.vectors.sqlite import SqliteVectors
from agentty_rag.state.machine_key import machine_key
from agentty_rag.workspace.service import Workspace
from tests.conftest import FAKE_DENSE, FIXTURES, LEXICAL, write

# The key the files of neighbourhoods made here are sealed with (a workspace's is its machine's).
KEY = b"k" * 32

CODE_QUERIES = [
    json.loads(line)["query"] for line in (FIXTURES / "queries" / "code.jsonl").read_text("utf-8").splitlines()
][:40]
DOCS_QUERIES = [
    json.loads(line)["query"] for line in (FIXTURES / "queries" / "docs.jsonl").read_text("utf-8").splitlines()
][:40]


def _brute(matrix: Matrix, present: np.ndarray, k: int, cap: int = 10**9) -> dict[int, float]:
    """Each live row's mean similarity to its ``k`` nearest other live rows of the reference sample, by brute
    force."""
    live = np.flatnonzero(present)
    level = sample_level(len(live), cap)
    reference = np.asarray([row for row in live if vector_hash(matrix[row]) % (1 << level) == 0], np.intp)
    out = {}
    for row in live:
        others = reference[reference != row]
        similar = np.sort(matrix[others] @ matrix[row])[::-1][:k]
        out[int(row)] = float(similar.mean()) if len(similar) else 0.0
    return out


def _units(rng: np.random.Generator, n: int, dimension: int = 8) -> Matrix:
    vectors: Matrix = rng.normal(size=(n, dimension)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def _change(dense: DenseIndex, rng: np.random.Generator, put: bool, ids: list[int]) -> None:
    """New random vectors for ``ids`` (put), or none (drop)."""
    if put:
        unique = sorted(set(ids))
        dense.put(unique, _units(rng, len(unique)))
    else:
        dense.drop(ids)


# One change: (put or drop, the ids it touches).
_CHANGES = st.lists(st.tuples(st.booleans(), st.lists(st.integers(0, 40), min_size=1, max_size=12)), max_size=12)


@settings(max_examples=80, deadline=None)
@given(_CHANGES, st.integers(0, 2**32 - 1), st.integers(1, 6), st.sampled_from([10**9, 4, 9]))
def test_densities_kept_up_to_date_equal_those_found_afresh(
    changes: list[tuple[bool, list[int]]], seed: int, k: int, cap: int
) -> None:
    """Also past the reference cap (4 or 9 vectors here), where neighbours are sought in a hashed sample."""
    rng = np.random.default_rng(seed)
    dense = DenseIndex(8)
    dense.put(list(range(8)), _units(rng, 8))
    kept = NeighbourDensity(k, cap)
    kept.rebuild(dense.matrix, dense.present)
    for put, ids in changes:
        _change(dense, rng, put, ids)
        kept.changed(dense.matrix, dense.present, np.asarray(ids, np.intp))
        live: Ids = np.flatnonzero(dense.present)
        want = _brute(dense.matrix, dense.present, k, cap)
        assert kept.densities(live) == pytest.approx([want[int(row)] for row in live], abs=1e-5)


def test_the_sample_grows_one_bit_each_time_the_count_doubles_past_the_cap() -> None:
    assert [sample_level(n, 8192) for n in (0, 8192, 8193, 16384, 16385, 127_618)] == [0, 0, 1, 1, 2, 4]
    vector = np.asarray([0.6, 0.8], np.float32)
    assert vector_hash(vector) == vector_hash(vector.astype(np.float16).astype(np.float32))  # rounding kept


def test_a_vector_among_near_copies_is_denser_than_a_lone_one_and_a_lone_pair_has_its_partner_only() -> None:
    vectors = np.asarray([[1.0, 0.0, 0.0], [0.99, 0.141, 0.0], [0.99, 0.0, 0.141], [0.0, 0.0, 1.0]], np.float32)
    dense = DenseIndex(3)
    dense.put([0, 1, 2, 3], vectors / np.linalg.norm(vectors, axis=1)[:, None])
    densities = dense.densities(np.arange(5, dtype=np.intp))
    want = _brute(dense.matrix, dense.present, NEIGHBOURS)  # fewer than NEIGHBOURS others: all of them count
    assert densities[:4] == pytest.approx([want[row] for row in range(4)], abs=1e-5)
    assert min(densities[:3]) > 0.6 > 0.1 > densities[3] and np.isnan(densities[4])  # slot 4 holds no vector
    pair = DenseIndex(2)
    pair.put([0, 1], np.asarray([[1.0, 0.0], [0.6, 0.8]], np.float32))
    assert pair.densities(np.arange(2, dtype=np.intp)) == pytest.approx([0.6, 0.6])
    alone = DenseIndex(2)
    alone.put([3], np.asarray([[1.0, 0.0]], np.float32))
    assert alone.densities(np.asarray([3], np.intp)).tolist() == [0.0]  # no neighbour: nothing taken off


def test_the_index_takes_the_share_asked_of_each_density_off_the_similarity(tmp_path: Path) -> None:
    files = {f"pkg/m{i}.py": f"def handler_{i}(request):\n    return request + {i}\n" for i in range(NEIGHBOURS + 4)}
    write(tmp_path, files)
    index = Workspace(tmp_path, load_settings(LEXICAL)).index("code")
    index.refresh()
    index.use_embeddings(EmbeddingProfile("model", 16))
    assert index.embed_missing(FakeEmbedder("model", 16)) == len(files)
    query = _units(np.random.default_rng(3), 1, 16)[0]
    plain, corrected = index.dense_scores(query), index.dense_scores(query, hubness=0.3)
    densities = index.densities(list(range(len(files))))
    assert plain is not None and corrected is not None and not np.isnan(densities).any()
    assert corrected[: len(files)] == pytest.approx(plain[: len(files)] - 0.3 * densities, abs=1e-6)
    index.close()


def _workspace(root: Path, hubness: str) -> Workspace:
    env = {**FAKE_DENSE, "AGENTTY_RAG_LEG_CHECK": "0", "AGENTTY_RAG_HUBNESS": hubness, "HOME": str(root.parent)}
    return Workspace(root, load_settings(env))


def _tops(root: Path, name: str, queries: list[str], hubness: str) -> list[list[str]]:
    workspace = _workspace(root, hubness)
    try:
        search = workspace.search_code if name == "code" else workspace.search_docs
        return [[str(r["path"]) for r in search(query, k=5).structured["results"]] for query in queries]
    finally:
        workspace.close()


def test_the_code_index_is_corrected_for_hubs_and_the_docs_are_compared_by_plain_cosine(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "code", root / "src", ignore=shutil.ignore_patterns(".agentty"))
    shutil.copytree(FIXTURES / "docs", root / "docs", ignore=shutil.ignore_patterns(".agentty"))
    embedded = _workspace(root, "0")
    for name in ("code", "docs"):
        embedded.index(name).refresh()
        embedded.embed_all(name)
    embedded.close()  # the searches below read the stored vectors alike
    for name, queries in (("code", CODE_QUERIES), ("docs", DOCS_QUERIES)):
        plain, strong = _tops(root, name, queries, "0"), _tops(root, name, queries, "1")
        assert (plain == strong) == (name == "docs"), name


def test_identical_vectors_have_identical_densities_however_they_came() -> None:
    rng = np.random.default_rng(7)
    vectors = _units(rng, 600, 64)
    vectors[100:140] = vectors[0]  # forty copies of one chunk, in different blocks of the matrix products
    grown = DenseIndex(64)
    grown.put(list(range(300)), vectors[:300])
    grown.densities(np.arange(300, dtype=np.intp))
    grown.put(list(range(300, 600)), vectors[300:])  # taken in as a change
    fresh = DenseIndex(64)
    fresh.put(list(range(600)), vectors)
    copies = np.asarray([0, *range(100, 140)], np.intp)
    every: Ids = np.arange(600, dtype=np.intp)
    assert len(set(grown.densities(copies).tolist())) == 1
    assert np.array_equal(grown.densities(every), fresh.densities(every))


def test_a_reload_keeps_the_neighbourhoods_and_searches_again_only_what_differs() -> None:
    rng = np.random.default_rng(11)
    vectors = _units(rng, 300, 16)
    before = DenseIndex(16)
    before.put(list(range(250)), vectors[:250])
    before.densities(np.arange(250, dtype=np.intp))
    again = vectors.copy()
    again[7] = _units(rng, 1, 16)[0]  # another process changed one chunk, dropped two and added fifty
    kept = [slot for slot in range(300) if slot not in (11, 12)]
    reloaded = DenseIndex(16)
    reloaded.put(kept, again[kept])
    reloaded.carry_density(before)
    fresh = DenseIndex(16)
    fresh.put(kept, again[kept])
    every: Ids = np.arange(300, dtype=np.intp)
    assert np.allclose(reloaded.densities(every), fresh.densities(every), atol=1e-5, equal_nan=True)
    assert np.isnan(reloaded.densities(np.asarray([11, 12], np.intp))).all()


# -- neighbourhoods kept between processes ---------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(_CHANGES, st.integers(0, 2**32 - 1), st.sampled_from([10**9, 4, 9]))
def test_neighbourhoods_taken_over_and_brought_up_to_date_equal_those_found_afresh(
    changes: list[tuple[bool, list[int]]], seed: int, cap: int
) -> None:
    """Another process found them for some vectors; this one holds those changed since: only what differs is
    compared again, and the densities are the brute-force ones (also past a tiny reference cap)."""
    rng = np.random.default_rng(seed)
    dense = DenseIndex(8)
    dense.put(list(range(20)), _units(rng, 20))
    found = NeighbourDensity(NEIGHBOURS, cap)
    found.rebuild(dense.matrix, dense.present)
    data = neighbour_file.encode(found.snapshot(dense.present), KEY)
    kept, problem = neighbour_file.decode(data, KEY, cap)
    assert kept is not None and problem == ""
    assert neighbour_file.decode(data, KEY, cap + 1)[1] == "it was found with another reference sample"
    touched: set[int] = set()
    for put, ids in changes:
        _change(dense, rng, put, ids)
        touched |= set(ids)
    dense._grow(len(kept.present))
    taken = NeighbourDensity.taken_over(kept, dense.matrix, dense.present)
    live: Ids = np.flatnonzero(dense.present)
    want = _brute(dense.matrix, dense.present, NEIGHBOURS, cap)
    assert taken.densities(live) == pytest.approx([want[int(row)] for row in live], abs=1e-5)
    if not touched:
        assert taken.searched == 0 and taken.changes == 0


def test_a_file_of_neighbourhoods_round_trips_and_a_damaged_one_says_why_it_is_not_used() -> None:
    rng = np.random.default_rng(5)
    dense = DenseIndex(16)
    dense.put(list(range(40)), _units(rng, 40, 16))
    every: Ids = np.arange(40, dtype=np.intp)
    want = dense.densities(every)
    found = dense.neighbourhoods()
    assert found is not None
    data = neighbour_file.encode(found, KEY)
    kept, problem = neighbour_file.decode(data, KEY)
    assert kept is not None and problem == ""
    again = DenseIndex(16)
    again.put(list(range(40)), dense.matrix[:40])
    again.take_neighbourhoods(kept)
    assert np.array_equal(again.densities(every), want) and again._density is not None
    assert again._density.searched == 0  # nothing differed: nothing compared again
    flipped = bytearray(data)
    flipped[len(flipped) // 2] ^= 0xFF
    assert neighbour_file.decode(bytes(flipped), KEY) == (None, "it was damaged")
    assert neighbour_file.decode(data[: len(data) // 2], KEY)[1] == "it was damaged"
    assert neighbour_file.decode(b"", KEY)[1] == "it was damaged"
    strays = replace(found, whose=np.where(found.whose >= 0, found.whose + 40, found.whose).astype(np.int32))
    assert neighbour_file.decode(neighbour_file.encode(strays, KEY), KEY) == (
        None,
        "a neighbour is not one of its rows",
    )
    odd = replace(found, best=np.where(np.isfinite(found.best), 3.0, found.best).astype(np.float32))
    assert neighbour_file.decode(neighbour_file.encode(odd, KEY), KEY) == (None, "a similarity is not a cosine")
    other = replace(found, level=2)
    assert neighbour_file.decode(neighbour_file.encode(other, KEY), KEY) == (
        None,
        "it was found with another reference sample",
    )
    short = replace(found, hashes=found.hashes[:10])
    assert neighbour_file.decode(neighbour_file.encode(short, KEY), KEY) == (None, "its arrays do not fit one another")


def _code_densities(root: Path) -> tuple[list[float], int | None]:
    """A new workspace's densities of every chunk of the code index, and how many rows it compared."""
    workspace = _workspace(root, "0.2")
    try:
        index = workspace.index("code")
        index.refresh()
        workspace.embed_all("code")  # nothing left to embed: the vectors are read, their neighbourhoods found
        densities = index.densities(list(range(200)))
        assert not np.isnan(densities[:50]).any()
        return [round(float(d), 5) for d in densities], _searched(index)
    finally:
        workspace.close()


def _searched(index: CorpusIndex) -> int | None:
    """How many rows this process compared with the others to find their neighbours (None: none found yet)."""
    store = index._mirror.vectors
    assert isinstance(store, SqliteVectors)
    dense = store._dense
    return None if dense is None or dense._density is None else int(dense._density.searched)


def test_a_new_process_starts_from_the_neighbourhoods_kept_and_finds_again_only_what_changed(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "code", root / "src", ignore=shutil.ignore_patterns(".agentty"))
    embedded = _workspace(root, "0.2")
    embedded.index("code").refresh()
    embedded.embed_all("code")
    embedded.close()
    kept = root / ".agentty" / "rag_code.neighbours"
    assert kept.is_file()  # the process that embedded found them (the server's warm-up does too) and kept them
    written = kept.stat().st_mtime_ns
    first, searched = _code_densities(root)
    assert searched == 0 and kept.stat().st_mtime_ns == written  # taken over: nothing compared or written again
    kept.unlink()
    again, searched = _code_densities(root)
    assert again == first and searched is not None and searched > 50 and kept.is_file()  # from scratch, kept again
    (root / "src" / "server" / "tally.py").write_text("def tally(rows):\n    return sum(rows)\n", "utf-8")
    grown = _workspace(root, "0.2")
    grown.index("code").refresh()
    grown.embed_all("code")
    searched = _searched(grown.index("code"))
    grown.close()
    assert searched is not None and 0 < searched < 50  # the new chunk and the rows that counted it as near
    taken, searched = _code_densities(root)
    kept.unlink()
    fresh, _ = _code_densities(root)
    assert taken == fresh and searched == 0
    key = machine_key(load_settings(FAKE_DENSE).state_home)  # the workspace's machine key
    whole = neighbour_file.decode(kept.read_bytes(), key)[0]
    assert whole is not None
    crafted = _sealed({**_members(whole), "level": _npy(np.float64("inf"))}, key=key)  # its checksum right
    many = replace(  # kept for a million rows, where the index has a few hundred
        whole,
        hashes=np.zeros(10**6, np.uint64),
        present=np.zeros(10**6, bool),
        best=np.full((10**6, NEIGHBOURS), -np.inf, np.float32),
        whose=np.full((10**6, NEIGHBOURS), -1, np.int32),
        level=0,
    )
    for damage in (b"not a file of neighbourhoods", kept.read_bytes()[:100], crafted, neighbour_file.encode(many, key)):
        kept.write_bytes(damage)
        assert _code_densities(root)[0] == fresh
        assert neighbour_file.read(kept, key)[1] == ""  # written again, whole
    kept.unlink()
    (root / "elsewhere").write_bytes(b"x")
    kept.symlink_to(root / "elsewhere")
    assert _code_densities(root)[0] == fresh  # never read through a link, nor written through it
    assert (root / "elsewhere").read_bytes() == b"x"


def _sealed(members: dict[str, bytes], compress: int = zipfile.ZIP_STORED, key: bytes = KEY) -> bytes:
    """A file of neighbourhoods holding ``members`` (name -> .npy bytes), its checksum right."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compress) as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    body = buffer.getvalue()
    return checksum(body, key=key).encode("ascii") + b"\n" + body


def _npy(array: npt.ArrayLike) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _members(found: Neighbourhoods) -> dict[str, bytes]:
    """The arrays of a file of ``found``, as this version writes them."""
    return {
        "version": _npy(np.int64(1)),
        "hashes": _npy(found.hashes),
        "present": _npy(found.present),
        "best": _npy(found.best),
        "whose": _npy(found.whose),
        "level": _npy(np.int64(found.level)),
        "cap": _npy(np.int64(found.cap)),
    }


def test_a_file_whose_checksum_holds_but_whose_arrays_do_not_is_refused_without_reading_them() -> None:
    rng = np.random.default_rng(9)
    dense = DenseIndex(8)
    dense.put(list(range(30)), _units(rng, 30))
    dense.densities(np.arange(30, dtype=np.intp))
    found = dense.neighbourhoods()
    assert found is not None
    good = _members(found)
    assert neighbour_file.decode(_sealed(good), KEY)[0] is not None
    huge = io.BytesIO()  # a header declaring 40 TiB of floats, and nothing after it
    np.lib.format.write_array_header_1_0(huge, {"descr": "<f4", "fortran_order": False, "shape": (2**40, 10)})
    crafted = {
        "a level that is not a number": {**good, "level": _npy(np.float64("inf"))},
        "present with no dimension": {**good, "present": _npy(np.bool_(True))},
        "present with two": {**good, "present": _npy(found.present[:, None])},
        "a header declaring far more than the file": {**good, "best": huge.getvalue()},
        "objects": {**good, "whose": _npy(np.asarray([object()] * 30))},
        "an array missing": {name: data for name, data in good.items() if name != "cap"},
        "an array too many": {**good, "extra": _npy(np.int64(0))},
    }
    for what, members in crafted.items():
        kept, problem = neighbour_file.decode(_sealed(members), KEY)
        assert kept is None and problem, what
    assert neighbour_file.decode(_sealed(good, zipfile.ZIP_DEFLATED), KEY)[1] == "it is not as this version writes it"


def test_kept_neighbours_that_do_not_hold_for_the_vectors_are_found_again() -> None:
    """A file that passes every check but lists a row as its own neighbour, a neighbour that left or is
    repeated, a similarity that is not theirs, or too few: those rows are compared again."""
    rng = np.random.default_rng(13)
    dense = DenseIndex(8)
    dense.put(list(range(40)), _units(rng, 40))
    every: Ids = np.arange(40, dtype=np.intp)
    want = dense.densities(every)
    found = dense.neighbourhoods()
    assert found is not None
    whose, best = found.whose.copy(), found.best.copy()
    whose[0, 0] = 0  # itself
    whose[1, :2] = whose[1, 0]  # a repeat
    best[2, 3] = 0.999  # not its similarity
    whose[3, 4], best[3, 4] = -1, -np.inf  # one too few
    whose[4, 0] = 39  # another's similarity to a row that is not the one given
    poisoned = replace(found, whose=whose, best=best)
    assert poisoned.problem() == ""  # each check of the file passes
    again = DenseIndex(8)
    again.put(list(range(40)), dense.matrix[:40])
    again.take_neighbourhoods(poisoned)
    assert np.array_equal(again.densities(every), want)
    assert again._density is not None and 5 <= again._density.searched < 40


def test_neighbourhoods_kept_for_far_more_rows_than_the_index_holds_are_not_taken() -> None:
    rng = np.random.default_rng(17)
    dense = DenseIndex(8)
    dense.put(list(range(30)), _units(rng, 30))
    rows = 10**6
    many = Neighbourhoods(
        np.zeros(rows, np.uint64),
        np.zeros(rows, bool),
        np.full((rows, NEIGHBOURS), -np.inf, np.float32),
        np.full((rows, NEIGHBOURS), -1, np.int32),
        0,
        8192,
    )
    assert many.problem() == ""
    dense.take_neighbourhoods(many)
    assert dense.density_changes() is None and len(dense.present) < 1000  # nothing taken, nothing grown
