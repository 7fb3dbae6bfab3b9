"""The shared collection is a real BM25 index, and a machine seeded from it holds the index it would build.

Published from the committed code fixtures (qdrant-client's local mode), a Qdrant query of the ``bm25`` sparse
vector gives every fixture query's best chunks the local index's BM25 scores, in the same order; a workspace
seeded from the collection answers every fixture query with the same text as one built from its files; a
collection published with other index settings is refused with a reason, and the files answer."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.lexical.protocol import LexicalQuery
from agentty_rag.index.qdrant.shared import Provenance, bm25_query
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, LEXICAL, OPEN_WORKSPACES, run_main

pytest.importorskip("qdrant_client")

QUERIES = [json.loads(line)["query"] for line in (FIXTURES / "queries" / "code.jsonl").read_text("utf-8").splitlines()]


def _copy(root: Path) -> Path:
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    return root


def _env(folder: Path) -> dict[str, str]:
    return {
        **LEXICAL,
        "AGENTTY_RAG_BACKEND": "qdrant",
        "AGENTTY_QDRANT_URL": f"file:{folder}",
        "AGENTTY_QDRANT_COLLECTION": "fixtures",
    }


def _workspace(root: Path, env: dict[str, str]) -> Workspace:
    workspace = Workspace(root, load_settings({**env, "HOME": str(root.parent)}))
    OPEN_WORKSPACES.append(workspace)
    return workspace


def test_the_sparse_vectors_score_as_the_local_bm25(tmp_path: Path) -> None:
    workspace = _workspace(_copy(tmp_path / "ci"), _env(tmp_path / "qdrant"))
    index = workspace.index("code")
    index.refresh()
    index.publish(Provenance("abc", "main", "fixtures"))
    mirror = index._mirror
    store = mirror.store()
    slot_of = {}
    for key in store.files():
        for ordinal, slot in enumerate(sorted(store.slots_of_files([key]))):
            slot_of[(key, ordinal)] = slot
    assert index.shared is not None
    with index.shared.opened() as collection:
        compared = 0
        for query in QUERIES:
            terms = list(dict.fromkeys(index.tokenize(query)))
            ids = store.lookup_terms(terms)
            scoring = index.config.scoring
            asked = LexicalQuery(dict.fromkeys(ids.values(), 1.0), index.weights, scoring.k1, scoring.b)
            local = mirror.lexical.score(asked)
            found = collection.search(*bm25_query([t for t in terms if t in ids], index.weights), limit=10)
            best = np.argsort(-local, kind="stable")[: len(found)]
            shared_scores = np.asarray([score for _, _, score in found])
            assert shared_scores == pytest.approx(local[best], rel=1e-5), query
            # the same chunks: each one Qdrant found scores locally at least the tenth best (ties may swap)
            floor = local[best[-1]] * (1 - 1e-5)
            assert all(local[slot_of[(key, ordinal)]] >= floor for key, ordinal, _ in found), query
            compared += len(found)
    assert compared > 500


def test_a_seeded_workspace_answers_as_one_built_from_its_files(tmp_path: Path) -> None:
    env = _env(tmp_path / "qdrant")
    ci = _copy(tmp_path / "ci")
    assert run_main("agentty_rag", ci, ("index", "code", "--backend", "qdrant"), env).returncode == 0
    local, seeded = _copy(tmp_path / "local"), _copy(tmp_path / "seeded")
    for query in QUERIES[:40]:
        args = ("search-code", query, "-k", "5")
        want = run_main("agentty_rag", local, args, LEXICAL)
        got = run_main("agentty_rag", seeded, args, env)
        assert got.stdout == want.stdout, query
    assert "overlay: 0 files" in run_main("agentty_rag", seeded, ("status",), env).stdout


def test_a_collection_of_other_index_settings_is_refused(tmp_path: Path) -> None:
    env = _env(tmp_path / "qdrant")
    assert (
        run_main("agentty_rag", _copy(tmp_path / "ci"), ("index", "code", "--backend", "qdrant"), env).returncode == 0
    )
    other = {**env, "AGENTTY_RAG_CODE_CHUNK_CHARS": "900"}
    dev = _copy(tmp_path / "dev")
    done = run_main("agentty_rag", dev, ("index", "code"), other)
    assert done.returncode == 0
    assert "the Qdrant collection fixtures was published with other index settings: answered from the local index" in (
        done.stderr
    )
    assert "(83 added, 0 changed, 0 removed, 83 re-chunked)" in done.stdout  # built from its files


@pytest.mark.parametrize(
    ("kind", "payload", "reason"),
    [
        ("chunk", {"terms": "garbage"}, "holds a point this version cannot read"),
        ("chunk", {"path": "../../etc/passwd"}, "leaves the workspace"),
        ("file", {"key": "code:/etc/passwd"}, "leaves the workspace"),
        ("file", {"size": None}, "holds a point this version cannot read"),
    ],
)
def test_a_damaged_or_hostile_collection_is_refused_and_the_files_answer(
    tmp_path: Path, kind: str, payload: dict[str, object], reason: str
) -> None:
    from qdrant_client import QdrantClient, models

    folder = tmp_path / "qdrant"
    env = _env(folder)
    assert (
        run_main("agentty_rag", _copy(tmp_path / "ci"), ("index", "code", "--backend", "qdrant"), env).returncode == 0
    )
    client = QdrantClient(path=str(folder))
    kind_is = models.Filter(must=[models.FieldCondition(key="kind", match=models.MatchValue(value=kind))])
    point = client.scroll("fixtures", scroll_filter=kind_is, limit=1)[0][0]
    client.set_payload("fixtures", payload, points=[point.id])
    client.close()
    dev = _copy(tmp_path / "dev")
    done = run_main("agentty_rag", dev, ("index", "code"), env)
    assert done.returncode == 0, done.stderr
    assert reason in done.stderr and "answered from the local index" in done.stderr
    assert "(83 added, 0 changed, 0 removed, 83 re-chunked)" in done.stdout
    found = run_main("agentty_rag", dev, ("search-code", "password hashing", "-k", "3"), env).stdout
    assert not [line for line in found.splitlines() if line.startswith("[") and "passwd" in line.split(" · ")[0]]
    assert "[1] code:server/auth/passwords.py" in found


def test_a_url_that_names_no_server_is_said_plainly(tmp_path: Path) -> None:
    env = {**_env(tmp_path / "qdrant"), "AGENTTY_QDRANT_URL": "qdrant.internal:6333"}
    dev = _copy(tmp_path / "dev")
    done = run_main("agentty_rag", dev, ("index", "code"), env)
    assert done.returncode == 0
    assert "AGENTTY_QDRANT_URL=qdrant.internal:6333 is not a Qdrant server" in done.stderr
    assert "(83 added" in done.stdout
    published = run_main("agentty_rag", dev, ("index", "code", "--backend", "qdrant"), env)
    assert published.returncode == 1 and "is not a Qdrant server" in published.stderr


def test_a_file_whose_chunks_gained_vectors_is_sent_again(tmp_path: Path) -> None:
    env = {**_env(tmp_path / "qdrant"), "AGENTTY_EMBED_BACKEND": "fake"}
    del env["AGENTTY_RAG_DENSE"]
    ci = _copy(tmp_path / "ci")
    first = run_main("agentty_rag", ci, ("index", "code", "--backend", "qdrant"), env, lexical=False)
    assert "83 files sent (447 chunks, 447 with a dense vector)" in first.stdout, first.stdout + first.stderr
    database = sqlite3.connect(ci / ".agentty" / "rag_code.ragdb")
    with database:
        database.execute(
            "DELETE FROM vectors WHERE hash IN (SELECT embed_hash FROM chunks WHERE file_key = 'code:server/main.py')"
        )
    database.close()
    lexical = {**env, "AGENTTY_RAG_DENSE": "0"}  # publishes what the index holds, embeds nothing
    fewer = run_main("agentty_rag", ci, ("index", "code", "--backend", "qdrant"), lexical, lexical=False)
    assert "patched — 1 files sent" in fewer.stdout, fewer.stdout + fewer.stderr
    again = run_main("agentty_rag", ci, ("index", "code", "--backend", "qdrant"), env, lexical=False)
    assert "patched — 1 files sent" in again.stdout and "82 unchanged" in again.stdout, again.stdout
    # a machine that started from the collection before starts again from the version with every vector
    dev = _copy(tmp_path / "dev")
    started = run_main("agentty_rag", dev, ("index", "code"), env, lexical=False)
    assert "embedded 0 chunks" in started.stdout, started.stdout
