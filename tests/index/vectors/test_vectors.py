"""The vector seam: a ``VectorStore`` keeps vectors by chunk id, says which chunks still lack one and gives
their similarities to a query; the SQLite one keeps them in the index database, by the hash of the embedded
text, and the registry makes it. And the index's own lock, held through ``reading``."""

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
from agentty_rag.index.storage.store import Store
from agentty_rag.index.vectors.base import DenseIndex, Ids, Matrix, VectorStore, best_of, embed_hash, embed_text
from agentty_rag.index.vectors.dense import EmbeddingProfile
from agentty_rag.index.vectors.fake_embedder import FakeEmbedder
from agentty_rag.index.vectors.sqlite import SqliteVectors
from agentty_rag.index.vectors.stores import VECTOR_STORES, vector_backend
from agentty_rag.types import Chunk
from agentty_rag.workspace.service import Workspace
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


MODEL = EmbeddingProfile("model", 2)


def _filled(store: Store, profile: EmbeddingProfile = MODEL) -> tuple[VectorStore, Matrix]:
    """A vector store with a vector put for every chunk (chunk ``i`` gets direction ``i``)."""
    vectors = SqliteVectors(lambda: store, profile)
    vectors.load()
    missing = _missing(store, vectors, 100)
    matrix = _directions(len(missing))
    vectors.put([chunk for chunk, _ in missing], [text_hash for _, text_hash in missing], matrix)
    return vectors, matrix


def _missing(store: Store, vectors: VectorStore, limit: int) -> list[tuple[int, str]]:
    """(id, embed hash) of the chunks ``vectors`` lacks, as the index reads them."""
    chunks = store.chunks(vectors.missing(limit))
    return [(chunk, embed_hash(chunks[chunk])) for chunk in sorted(chunks)]


def _similarities(vectors: VectorStore, query: Matrix, size: int, left_out: tuple[int, ...] = ()) -> Matrix:
    """A similarity per id below ``size`` (NaN for those ``left_out``), as the index asks for them."""
    ids: Ids = np.asarray([i for i in range(size) if i not in left_out], np.intp)
    out = np.full(size, np.nan, np.float32)
    out[ids] = vectors.similarities(query, ids)
    return out


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    index = _built(tmp_path)
    index.close()
    opened = Store(index.config.db_path, index.config.seal_key)
    yield opened
    opened.close()


def test_the_registry_makes_the_sqlite_store() -> None:
    assert vector_backend("sqlite") is SqliteVectors and list(VECTOR_STORES) == ["sqlite", "qdrant"]
    with pytest.raises(ValueError, match="no vector store 'faiss' \\(known: sqlite, qdrant\\)"):
        vector_backend("faiss")


def test_every_chunk_is_missing_a_vector_until_one_is_put_then_it_is_counted_and_searched(store: Store) -> None:
    vectors: VectorStore = SqliteVectors(lambda: store, MODEL)
    vectors.load()
    ids = vectors.missing(100)
    every: Ids = np.arange(len(FILES))
    assert ids == list(range(len(FILES))) and vectors.coverage(every) == 0
    assert vectors.missing(2) == ids[:2]
    missing = _missing(store, vectors, 100)
    matrix = _directions(len(ids))
    vectors.put(ids, [text_hash for _, text_hash in missing], matrix)
    assert vectors.missing(100) == [] and vectors.coverage(every) == len(ids)
    found = best_of(vectors.similarities(matrix[0], every), 3)
    assert [chunk for chunk, _ in found] == ids[:3] and found[0][1] == pytest.approx(1.0)


def test_dropped_chunks_and_those_not_asked_for_are_never_found(store: Store) -> None:
    vectors, matrix = _filled(store)
    vectors.drop([0])
    similarities = _similarities(vectors, matrix[0], len(FILES), left_out=(1, 2))
    assert [chunk for chunk, _ in best_of(similarities, 10)] == [3, 4, 5]
    assert vectors.coverage(np.asarray([0, 1, 2, 3, 4, 5])) == len(FILES) - 1
    assert vectors.coverage(np.asarray([1, 3])) == 2


def test_every_id_asked_for_has_a_similarity_in_order_and_those_with_no_vector_have_none(store: Store) -> None:
    vectors, matrix = _filled(store)
    ids: Ids = np.asarray([0, 3, 4, 5, len(FILES), len(FILES) + 1])  # two ids beyond the vectors held
    similarities = vectors.similarities(matrix[0], ids)
    assert similarities.shape == (len(ids),)
    assert np.isnan(similarities[-2:]).all()
    stored = matrix.astype(np.float16).astype(np.float32)  # held as stored, as a process reading them back holds them
    for position, chunk in enumerate(ids[:4]):
        assert similarities[position] == pytest.approx(float(stored[chunk] @ matrix[0]), abs=1e-6)


def test_the_index_asks_for_its_live_and_allowed_chunks_only(tmp_path: Path) -> None:
    index = _built(tmp_path)
    index.use_embeddings(MODEL)
    assert index.embed_missing(FakeEmbedder("model", 2)) == len(FILES)
    query = _directions(2)[1]
    every = index.dense_scores(query)
    allowed = np.ones(len(FILES) + 2, bool)
    allowed[2] = False
    similarities = index.dense_scores(query, allowed)
    assert every is not None and similarities is not None and similarities.shape == every.shape
    assert np.isnan(similarities[2]) and np.isnan(similarities[len(FILES) :]).all()
    kept = [0, 1, 3, 4, 5]
    assert np.array_equal(similarities[kept], every[kept]) and not np.isnan(every[kept]).any()
    assert index.vector_coverage() == (len(FILES), len(FILES))
    index.close()


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
    again = SqliteVectors(lambda: store, MODEL)
    again.load()
    every: Ids = np.arange(len(FILES))
    assert again.coverage(every) == len(FILES) and again.missing(100) == []
    score = dict(best_of(again.similarities(matrix[1], every), 10))[1]
    assert score == float(matrix[1].astype(np.float16).astype(np.float32) @ matrix[1])
    other = SqliteVectors(lambda: store, EmbeddingProfile("other", 2))  # a new model: every chunk is embedded again
    other.load()
    assert len(other.missing(100)) == len(FILES) and other.coverage(every) == 0


def test_the_embedded_text_says_where_the_chunk_is_and_is_cut_at_4000_characters() -> None:
    chunk = Chunk("code", "src/a.py", 1, 2, "x" * 5000, "python", "function", "", "Server.start")
    assert embed_text(chunk).startswith("src/a.py · Server.start\nxxx")
    assert len(embed_text(chunk)) == 4000
    assert embed_hash(chunk) == embed_hash(
        Chunk("code", "src/a.py", 1, 2, "x" * 5000, "python", "function", "", "Server.start")
    )


def test_equal_scores_rank_by_id_and_the_pool_bounds_the_answer() -> None:
    dense = DenseIndex(2)
    dense.put([4, 1, 7], np.asarray([[1, 0], [1, 0], [0, 1]], np.float32))
    every: Ids = np.arange(9)
    assert best_of(dense.similarities(np.asarray([1, 0], np.float32), every), 2) == [(1, 1.0), (4, 1.0)]
    assert dense.count(every) == 3


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
