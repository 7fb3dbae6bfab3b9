"""The Qdrant vector store answers like the SQLite one: the committed code fixtures embedded with the fake
embedder give every chunk the same cosine similarity to every fixture query through both stores (to within
``TOLERANCE``: both are float32 dot products of the same vectors, summed in another order) and the same order
but for ties within it, after a build, after a patch (the edited file's old points gone from the shard, its
new ones written) and after a reload; the table stays the truth."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.qdrant.vectors import EdgeDense, QdrantVectors, dense_path, open_dense
from agentty_rag.index.vectors.base import Matrix, best_of
from agentty_rag.index.vectors.dense import EmbeddingProfile
from agentty_rag.index.vectors.fake_embedder import DIMENSION, FakeEmbedder
from agentty_rag.index.vectors.sqlite import SqliteVectors
from agentty_rag.index.vectors.stores import vector_backend
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, OPEN_WORKSPACES
from tests.index.qdrant.helpers import built, copied, edited

pytest.importorskip("qdrant_edge")

QUERIES = [json.loads(line)["query"] for line in (FIXTURES / "queries" / "code.jsonl").read_text("utf-8").splitlines()]
PROFILE = EmbeddingProfile("fake", DIMENSION)
EMBEDDER = FakeEmbedder("fake")
# The largest difference of one similarity between the stores; measured on the fixtures: 6e-8 (float32
# rounding). The fake embedder's vectors are word counts: many similarities are equal but for that rounding,
# and such ties may come in either order.
TOLERANCE = 1e-6


def _opened(root: Path, backend: str) -> CorpusIndex:
    """The code index of ``root`` on ``backend``, every chunk embedded with the fake embedder."""
    index = built(root, backend)
    index.use_embeddings(PROFILE)
    index.embed_missing(EMBEDDER)
    return index


def _reloaded(index: CorpusIndex) -> CorpusIndex:
    """The index with a new store of the profile, loaded from the table (as the next process loads it)."""
    index.use_embeddings(None)
    index.use_embeddings(PROFILE)
    return index


def _query(text: str) -> Matrix:
    vector: Matrix = EMBEDDER.embed([text], "query")[0]
    return vector


def _assert_same_similarities(local: CorpusIndex, qdrant: CorpusIndex, hubness: float = 0.0) -> float:
    """Every fixture query gives every slot the same similarity in both (less ``hubness`` times its
    neighbourhood density), and the same order of the best 50 but for near-ties; the largest difference."""
    assert local.vector_coverage() == qdrant.vector_coverage()
    have, live = qdrant.vector_coverage()
    assert have == live > 0
    worst = 0.0
    for text in QUERIES:
        want, got = (
            local.dense_scores(_query(text), hubness=hubness),
            qdrant.dense_scores(_query(text), hubness=hubness),
        )
        assert want is not None and got is not None
        n = max(len(want), len(got))
        want = np.pad(want, (0, n - len(want)), constant_values=np.nan)  # each mask grows its own way
        got = np.pad(got, (0, n - len(got)), constant_values=np.nan)
        assert np.array_equal(np.isnan(want), np.isnan(got)), text
        held = ~np.isnan(want)
        worst = max(worst, float(np.abs(want[held] - got[held]).max()))
        best_want, best_got = best_of(want, 50), best_of(got, 50)
        for (slot_want, score_want), (slot_got, _) in zip(best_want, best_got, strict=True):
            assert slot_want == slot_got or abs(score_want - want[slot_got]) <= TOLERANCE, text
    assert worst <= TOLERANCE
    return worst


def test_the_registry_makes_the_qdrant_store_for_the_code_index_on_the_qdrant_backend(tmp_path: Path) -> None:
    local = _opened(copied(tmp_path / "local"), "local")
    qdrant = _opened(copied(tmp_path / "qdrant"), "qdrant")
    assert local.config.vector_store == "sqlite" and qdrant.config.vector_store == "qdrant"
    assert vector_backend("qdrant") is QdrantVectors and vector_backend("sqlite") is SqliteVectors
    assert qdrant.config.qdrant is not None
    folder = dense_path(qdrant.config.qdrant, PROFILE)
    assert folder.parent == qdrant.config.qdrant.path.parent and folder.name.startswith("code-dense-")
    assert folder.is_dir() and not (tmp_path / "local" / ".agentty" / "qdrant").exists()


def test_the_qdrant_store_gives_the_sqlite_similarities_after_a_build_a_patch_and_a_reload(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = {backend: copied(tmp_path / backend) for backend in ("local", "qdrant")}
    indexes = {backend: _opened(root, backend) for backend, root in roots.items()}
    _assert_same_similarities(indexes["local"], indexes["qdrant"])

    before = set(np.flatnonzero(indexes["qdrant"].allowed("all", lambda *_: True)).tolist())
    for backend, root in roots.items():
        edited(root)
        report = indexes[backend].refresh()
        assert not report.rebuilt and report.removed == 1 and report.added == 1
        assert indexes[backend].vector_coverage()[0] < indexes[backend].vector_coverage()[1]
        assert indexes[backend].embed_missing(EMBEDDER) > 0
    _assert_same_similarities(indexes["local"], indexes["qdrant"])
    after = set(np.flatnonzero(indexes["qdrant"].allowed("all", lambda *_: True)).tolist())
    config = indexes["qdrant"].config
    assert config.qdrant is not None
    shard = open_dense(dense_path(config.qdrant, PROFILE))  # the shard the store holds (one handle a process)
    query = _query("signing key tokens")
    assert shard.nearest(query, sorted(before - after)) == []  # the old chunks' points were deleted
    assert {slot for slot, _ in shard.nearest(query, sorted(after - before))} == after - before

    # The next processes: the points were written rounded as the table keeps them, so each takes the shard as
    # it is (nothing written anew).
    resets = _count_resets(monkeypatch)
    for expected_resets in (0, 0):
        reopened = Workspace(roots["qdrant"], load_settings({**LEXICAL, "AGENTTY_RAG_BACKEND": "qdrant"}))
        OPEN_WORKSPACES.append(reopened)
        indexes["qdrant"] = reopened.index("code")
        assert not indexes["qdrant"].refresh().changed_anything
        indexes["qdrant"].use_embeddings(PROFILE)
        assert indexes["qdrant"].embed_missing(EMBEDDER) == 0  # the table kept every vector
        assert len(resets) == expected_resets
        _assert_same_similarities(_reloaded(indexes["local"]), indexes["qdrant"])
    # Both read the table's vectors now: the neighbourhood densities agree too (the Qdrant store finds them
    # in memory from the table).
    _assert_same_similarities(indexes["local"], indexes["qdrant"], hubness=0.2)


def _count_resets(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each time a dense shard is made anew from here on, its dimension."""
    made: list[int] = []
    reset = EdgeDense.reset

    def counted(shard: EdgeDense, dimension: int) -> None:
        made.append(dimension)
        reset(shard, dimension)

    monkeypatch.setattr(EdgeDense, "reset", counted)
    return made


def test_a_shard_that_lost_points_is_written_anew_from_the_table(tmp_path: Path) -> None:
    index = _opened(copied(tmp_path / "qdrant"), "qdrant")
    local = _opened(copied(tmp_path / "local"), "local")
    assert index.config.qdrant is not None
    shard = open_dense(dense_path(index.config.qdrant, PROFILE))
    shard.delete(list(range(10)))  # behind the store's back: the marker no longer names what the shard holds
    shard.set_marker("something else")
    _assert_same_similarities(_reloaded(local), _reloaded(index))  # a new store's load finds the marker differs
