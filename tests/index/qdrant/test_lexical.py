"""The Qdrant backend scores like the SQLite backend: the committed code fixtures built both ways give every
chunk and every file the same BM25 (to float32 precision) and the same order for every fixture query, after
a build, after a patch and after a reload; through both client adapters (Qdrant's engine in-process, and
qdrant-client's local mode) every question of the ``LexicalIndex`` protocol has the SQLite backend's answer."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agentty_rag.config import load_settings
from agentty_rag.errors import BackendUnavailable
from agentty_rag.index.engine import CorpusIndex
from agentty_rag.index.lexical.protocol import LexicalIndex, LexicalQuery
from agentty_rag.index.lexical.sqlite import SqliteLexical
from agentty_rag.index.qdrant.collection import ClientCollection, EdgeCollection, SparseCollection
from agentty_rag.index.qdrant.encoding import dimension
from agentty_rag.index.qdrant.lexical import QdrantLexical
from agentty_rag.index.storage.store import Store
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, OPEN_WORKSPACES
from tests.index.qdrant.helpers import built, copied, edited

pytest.importorskip("qdrant_edge")

QUERIES = [json.loads(line)["query"] for line in (FIXTURES / "queries" / "code.jsonl").read_text("utf-8").splitlines()]
# float32 vectors against float64 sums: each score within this share of the query's best
RELATIVE = 1e-6


def _weights(index: CorpusIndex, number: int, query: str) -> dict[str, float]:
    """The query's terms, weighted unevenly (as the requery legs weight them)."""
    return {term: 1.0 + 0.25 * ((number + i) % 3) for i, term in enumerate(dict.fromkeys(index.tokenize(query)))}


def _assert_same_scores(local: CorpusIndex, qdrant: CorpusIndex) -> dict[str, float]:
    """Every fixture query scores every live slot and every file alike, in the same order; the figures."""
    live = np.flatnonzero(local.allowed("all", lambda *_: True))
    # (a mask's length is the backend's own: the SQLite one grows by doubling)
    assert np.array_equal(live, np.flatnonzero(qdrant.allowed("all", lambda *_: True)))
    slots = np.arange(int(live.max()) + 1)
    assert local.file_groups().refs == qdrant.file_groups().refs
    files = range(len(local.file_groups().refs))
    worst_chunk = worst_file = 0.0
    for number, query in enumerate(QUERIES):
        terms = _weights(local, number, query)
        expected, got = local.lexical_scores(terms, files=True), qdrant.lexical_scores(terms, files=True)
        want, have = expected.at(slots), got.at(slots)
        assert np.abs(want - have).max() <= RELATIVE * max(want.max(), 1e-9), query
        assert [s for s, _ in expected.leg(len(slots))] == [s for s, _ in got.leg(len(slots))], query
        want_files = np.array([expected.of_file(f) for f in files])
        have_files = np.array([got.of_file(f) for f in files])
        assert np.abs(want_files - have_files).max() <= RELATIVE * max(want_files.max(), 1e-9), query
        assert expected.best_files(len(files)) == got.best_files(len(files)), query
        worst_chunk = max(worst_chunk, float(np.abs(want - have).max() / max(want.max(), 1e-9)))
        worst_file = max(worst_file, float(np.abs(want_files - have_files).max() / max(want_files.max(), 1e-9)))
    return {"chunks": worst_chunk, "files": worst_file}


def test_the_fixture_index_built_on_qdrant_scores_every_chunk_and_file_like_sqlite(tmp_path: Path) -> None:
    local = built(copied(tmp_path / "local"), "local")
    qdrant = built(copied(tmp_path / "qdrant"), "qdrant")
    assert qdrant.config.lexical == "qdrant" and local.config.lexical == "sqlite"
    figures = _assert_same_scores(local, qdrant)
    assert figures["chunks"] <= RELATIVE and figures["files"] <= RELATIVE


def test_a_patched_qdrant_index_still_scores_like_sqlite(tmp_path: Path) -> None:
    roots = {backend: copied(tmp_path / backend) for backend in ("local", "qdrant")}
    indexes = {backend: built(root, backend) for backend, root in roots.items()}
    for backend, root in roots.items():
        edited(root)
        report = indexes[backend].refresh()
        assert not report.rebuilt and report.removed == 1 and report.added == 1
    _assert_same_scores(indexes["local"], indexes["qdrant"])


def test_a_second_workspace_reads_the_collection_the_first_wrote(tmp_path: Path) -> None:
    local = built(copied(tmp_path / "local"), "local")
    root = copied(tmp_path / "qdrant")
    built(root, "qdrant")
    again = Workspace(root, load_settings({**LEXICAL, "AGENTTY_RAG_BACKEND": "qdrant", "HOME": str(tmp_path)}))
    OPEN_WORKSPACES.append(again)
    reopened = again.index("code")
    assert not reopened.refresh().changed_anything
    _assert_same_scores(local, reopened)


# -- the protocol, through each adapter --------------------------------------------------------------------


@pytest.fixture(params=["edge", "client-local"])
def collection(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SparseCollection]:
    if request.param == "edge":
        yield EdgeCollection(tmp_path / "shard")
        return
    qdrant_client = pytest.importorskip("qdrant_client")
    client = qdrant_client.QdrantClient(":memory:")
    yield ClientCollection(client, "agentty_code_test")
    client.close()


def test_every_question_of_the_protocol_has_the_sqlite_answer(tmp_path: Path, collection: SparseCollection) -> None:
    index = built(copied(tmp_path / "repo"), "local")
    store = Store(index.config.db_path, index.config.seal_key)
    try:
        meta = store.meta()
        sqlite: LexicalIndex = SqliteLexical(index.config.field_names, lambda: store)
        sqlite.load(store, meta)
        qdrant: LexicalIndex = QdrantLexical(index.config, lambda: store, collection)
        qdrant.load(store, meta)
        assert np.array_equal(np.flatnonzero(sqlite.alive), qdrant.live_slots()) and sqlite.n_live == qdrant.n_live
        groups = index.file_groups()
        scoring, weights = index.config.scoring, {f.name: f.weight for f in index.config.fields}
        for number, text in enumerate(QUERIES[:40]):
            ids = sqlite.term_ids(index.tokenize(text))
            assert qdrant.term_ids(index.tokenize(text)) == ids
            terms = {term_id: 1.0 + 0.5 * (i % 2) for i, term_id in enumerate(sorted(ids.values()))}
            chunks = LexicalQuery(terms, weights, scoring.k1, scoring.b)
            files = LexicalQuery(terms, {**weights, **scoring.file_weights}, scoring.file_k1, scoring.file_b)
            want = sqlite.score(chunks)
            np.testing.assert_allclose(qdrant.score(chunks), want, rtol=0, atol=RELATIVE * max(want.max(), 1e-9))
            some = np.array([number, 3, -1, number + 7, len(want) + 5, 3], np.int64).astype(np.int32)
            np.testing.assert_allclose(qdrant.score(chunks, some), sqlite.score(chunks, some), rtol=RELATIVE)
            np.testing.assert_allclose(qdrant.score_files(files, groups), sqlite.score_files(files, groups), rtol=1e-6)
            for term_id in list(terms)[:3]:
                for field in index.config.field_names:
                    assert np.array_equal(qdrant.holders(field, term_id), sqlite.holders(field, term_id))
                    assert qdrant.document_frequency(field, term_id) == sqlite.document_frequency(field, term_id)
            slot = int(np.flatnonzero(sqlite.alive)[number % sqlite.n_live])
            counts = {"body": {t: 1 + i for i, t in enumerate(terms)}, "path": {next(iter(terms), 0): 1}}
            lengths = {"body": 40.0, "path": 3.0, "symbol": 0.0}
            assert qdrant.score_outside((counts, lengths), chunks) == pytest.approx(
                sqlite.score_outside((counts, lengths), chunks), rel=1e-12
            )
            file = int(groups.of_slot[slot])
            assert qdrant.score_file_outside(file, {slot: (counts, lengths)}, files, groups) == pytest.approx(
                sqlite.score_file_outside(file, {slot: (counts, lengths)}, files, groups), rel=1e-12
            )
    finally:
        store.close()


def test_without_its_extra_the_backend_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "qdrant_edge", None)
    with pytest.raises(BackendUnavailable, match=r"pip install 'agentty-rag\[qdrant\]'"):
        EdgeCollection(tmp_path / "shard")


def test_a_term_past_the_sparse_dimensions_is_refused() -> None:
    assert dimension(2, 5) == 2 << 24 | 5
    with pytest.raises(ValueError, match="at most 2\\^24 terms"):
        dimension(0, 1 << 24)


def test_switching_backends_rebuilds_the_index_for_the_other(tmp_path: Path) -> None:
    root = copied(tmp_path / "repo")
    built(root, "qdrant")
    workspace = Workspace(root, load_settings({**LEXICAL, "HOME": str(tmp_path)}))
    OPEN_WORKSPACES.append(workspace)
    switched = workspace.index("code")
    report = switched.refresh()
    assert report.rebuilt and "backend" in report.reason
    _assert_same_scores(built(copied(tmp_path / "reference"), "local"), switched)
