"""The vector seam: a ``VectorStore`` keeps vectors by chunk slot, says which chunks still lack one and
searches them; the SQLite one keeps them in the index database, by the hash of the embedded text. And the
index's own lock, held through ``reading``."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.sqlite_vectors import SqliteVectors
from agentty_rag.index.store import Store
from agentty_rag.index.vectors import DenseIndex, Matrix, VectorStore, best_of, embed_hash, embed_text
from agentty_rag.service import Workspace
from agentty_rag.types import Chunk
from tests.conftest import LEXICAL, write

FILES = {f"pkg/m{i}.py": f"def handler_{i}(request):\n    return request + {i}\n" for i in range(6)}


def _built(root: Path) -> CorpusIndex:
    write(root, FILES)
    index = Workspace(root, load_settings(LEXICAL)).index("code")
    index.refresh()
    return index


def _directions(n: int) -> Matrix:
    """``n`` unit vectors in the plane, 10 degrees apart: the first is nearest to itself, then the next."""
    angles = np.radians(10.0 * np.arange(n))
    return np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)


def _filled(store: Store, profile: str = "model|2||") -> tuple[VectorStore, Matrix]:
    """A vector store with a vector put for every chunk (slot ``i`` gets direction ``i``)."""
    vectors = SqliteVectors(lambda: store, profile, 2)
    vectors.load()
    missing = vectors.missing(100)
    matrix = _directions(len(missing))
    vectors.put([slot for slot, _, _ in missing], [text_hash for _, text_hash, _ in missing], matrix)
    return vectors, matrix


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    index = _built(tmp_path)
    index.close()
    opened = Store(index.config.db_path)
    yield opened
    opened.close()


def test_every_chunk_is_missing_a_vector_until_one_is_put_then_it_is_counted_and_searched(store: Store) -> None:
    vectors: VectorStore = SqliteVectors(lambda: store, "model|2||", 2)
    vectors.load()
    missing = vectors.missing(100)
    slots = [slot for slot, _, _ in missing]
    alive = np.ones(len(FILES), bool)
    assert slots == list(range(len(FILES))) and vectors.coverage(alive) == 0
    assert all(text_hash == embed_hash(chunk) for _, text_hash, chunk in missing)
    assert vectors.missing(2) == missing[:2]
    matrix = _directions(len(slots))
    vectors.put(slots, [text_hash for _, text_hash, _ in missing], matrix)
    assert vectors.missing(100) == [] and vectors.coverage(alive) == len(slots)
    found = best_of(vectors.similarities(matrix[0], alive), 3)
    assert [slot for slot, _ in found] == slots[:3] and found[0][1] == pytest.approx(1.0)


def test_dropped_dead_and_disallowed_chunks_are_never_found(store: Store) -> None:
    vectors, matrix = _filled(store)
    alive = np.ones(len(FILES), bool)
    vectors.drop([0])
    alive[1] = False
    allowed = np.ones(len(FILES), bool)
    allowed[2] = False
    assert [slot for slot, _ in best_of(vectors.similarities(matrix[0], alive, allowed), 10)] == [3, 4, 5]
    assert vectors.coverage(alive) == len(FILES) - 2


def test_every_slot_has_a_similarity_and_those_never_searched_have_none(store: Store) -> None:
    vectors, matrix = _filled(store)
    alive = np.ones(len(FILES) + 2, bool)  # two slots beyond the vectors held
    alive[1] = False
    allowed = np.ones(len(FILES) + 2, bool)
    allowed[2] = False
    similarities = vectors.similarities(matrix[0], alive, allowed)
    assert similarities.shape == (len(FILES) + 2,)
    assert np.isnan(similarities[[1, 2, len(FILES), len(FILES) + 1]]).all()
    for slot in (0, 3, 4, 5):
        assert similarities[slot] == pytest.approx(float(matrix[slot] @ matrix[0]), abs=1e-6)
    assert [slot for slot, _ in best_of(similarities, 3)] == [0, 3, 4]  # the nearest, past those never searched


@given(st.lists(st.one_of(st.floats(-1, 1, width=32), st.just(float("nan"))), max_size=60), st.integers(0, 70))
def test_the_best_of_a_similarity_per_slot_are_sorted_by_similarity_then_slot(values: list[float], pool: int) -> None:
    similarities = np.array(values, np.float32)
    expected = sorted(
        ((slot, float(value)) for slot, value in enumerate(similarities) if not np.isnan(value)),
        key=lambda pair: (-pair[1], pair[0]),
    )[:pool]
    assert best_of(similarities, pool) == expected


def test_stored_vectors_load_as_float16_and_belong_to_their_profile_only(store: Store) -> None:
    _, matrix = _filled(store)
    again = SqliteVectors(lambda: store, "model|2||", 2)
    again.load()
    alive = np.ones(len(FILES), bool)
    assert again.coverage(alive) == len(FILES) and again.missing(100) == []
    score = dict(best_of(again.similarities(matrix[1], alive), 10))[1]
    assert score == float(matrix[1].astype(np.float16).astype(np.float32) @ matrix[1])
    other = SqliteVectors(lambda: store, "other|2||", 2)  # a new model: every chunk is embedded again
    other.load()
    assert len(other.missing(100)) == len(FILES) and other.coverage(alive) == 0


def test_the_embedded_text_says_where_the_chunk_is_and_is_cut_at_4000_characters() -> None:
    chunk = Chunk("code", "src/a.py", 1, 2, "x" * 5000, "python", "function", "", "Server.start")
    assert embed_text(chunk).startswith("src/a.py · Server.start\nxxx")
    assert len(embed_text(chunk)) == 4000
    assert embed_hash(chunk) == embed_hash(
        Chunk("code", "src/a.py", 1, 2, "x" * 5000, "python", "function", "", "Server.start")
    )


def test_equal_scores_rank_by_slot_and_the_pool_bounds_the_answer() -> None:
    dense = DenseIndex(2)
    dense.put([4, 1, 7], np.asarray([[1, 0], [1, 0], [0, 1]], np.float32))
    alive = np.ones(8, bool)
    assert best_of(dense.similarities(np.asarray([1, 0], np.float32), alive), 2) == [(1, 1.0), (4, 1.0)]
    assert dense.count(alive) == 3


def test_reading_says_whether_the_index_was_had_and_waits_only_as_long_as_asked(tmp_path: Path) -> None:
    index = _built(tmp_path)
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:  # another thread's search or build
        with index.reading() as held:
            assert held
            holding.set()
            release.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    holding.wait(10)
    with index.reading(timeout=0) as now, index.reading(timeout=0.05) as soon:
        assert (now, soon) == (False, False)
    release.set()
    other.join()
    with index.reading(timeout=0) as held, index.reading(timeout=0) as again:  # the holder may read again
        assert held and again
        assert index.n_chunks == len(FILES)
    index.close()
