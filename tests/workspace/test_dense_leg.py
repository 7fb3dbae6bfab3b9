"""The dense leg's bookkeeping with the in-repo fake embedder (``AGENTTY_EMBED_BACKEND=fake``): the probe,
the query cache, degradation and recovery, vector coverage and the truthful mode, with no server at all.

What needs a real model (a paraphrase found only by meaning, Ollama's own failures) stays in test_dense.py.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from agentty_rag.config import load_settings
from agentty_rag.index.vectors.dense import Matrix, Role
from agentty_rag.index.vectors.fake_embedder import DIMENSION, FakeEmbedder
from agentty_rag.workspace.service import Workspace
from tests.conftest import OPEN_WORKSPACES, write

DOCS = {
    "docs/vehicles.md": "# Vehicles\n\nChange the engine oil of an automobile every ten thousand kilometres.\n",
    "docs/kitchen.md": "# Kitchen\n\nBake the bread dough at two hundred degrees until the crust is golden.\n",
    "docs/garden.md": "# Garden\n\nWater tomato seedlings every morning and stake them once they are knee high.\n",
    "docs/finance.md": "# Finance\n\nFile quarterly tax returns before the deadline to avoid penalties.\n",
}
PAGES = {f"docs/page{i:02}.md": f"# Page {i}\n\nTopic number {i} about deployments.\n" for i in range(40)}


def _ws(root: Path, **env: str) -> Workspace:
    workspace = Workspace(root, load_settings({"AGENTTY_EMBED_BACKEND": "fake", **env}))
    OPEN_WORKSPACES.append(workspace)
    return workspace


def _fake(workspace: Workspace) -> FakeEmbedder:
    embedder = workspace.dense.embedder
    assert isinstance(embedder, FakeEmbedder)
    return embedder


def test_the_fake_backend_makes_the_session_hybrid(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path)
    outcome = workspace.search_docs("engine oil automobile")
    assert outcome.result.mode == "hybrid"
    assert outcome.text.startswith("search_docs · hybrid · funnel ") and "+" in outcome.text.split("\n")[0]
    assert outcome.structured["results"][0]["path"] == "docs/vehicles.md"
    assert workspace.dense.describe() == f"ready: fake-nomic-embed-text ({DIMENSION}-d) in-process"
    status = workspace.dense_status("docs")
    assert status == {
        "state": "ready",
        "description": workspace.dense.describe(),
        "embedded": 4,
        "chunks": 4,
        "leg_check": "only code indexes are checked",
    }


def test_dense_weight_zero_gives_exactly_the_bm25_ranking(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    lexical = _ws(tmp_path, AGENTTY_RAG_DENSE="0")
    weightless = _ws(tmp_path, AGENTTY_RAG_DENSE_WEIGHT="0")
    for query in ("engine oil", "bread crust", "tax deadline penalties", "water"):
        a, b = lexical.search_docs(query).structured, weightless.search_docs(query).structured
        assert [(r["provenance"], r["score"]) for r in a["results"]] == [
            (r["provenance"], r["score"]) for r in b["results"]
        ]
        assert a["mode"] == "bm25" and b["mode"] == "bm25 (dense weight 0)"


def test_a_failed_probe_leaves_the_session_lexical_and_says_why(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path)
    _fake(workspace).failing = "connection refused at nowhere"
    outcome = workspace.search_docs("engine oil")
    assert outcome.result.mode == "bm25 (dense unavailable: connection refused at nowhere)"
    assert outcome.structured["results"][0]["path"] == "docs/vehicles.md"
    assert workspace.dense.describe() == "unavailable: connection refused at nowhere"


def test_failures_degrade_each_query_then_switch_the_leg_off_until_the_cool_down(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path, AGENTTY_RAG_DENSE_RETRY_S="1")
    assert workspace.search_docs("engine oil").result.mode == "hybrid"
    fake = _fake(workspace)
    fake.failing = "connection refused"
    modes = [workspace.search_docs(f"engine oil {i}").result.mode for i in range(5)]
    assert modes[:3] == ["bm25 (degraded: dense — connection refused)"] * 3
    assert modes[3] == "bm25 (dense unavailable: connection refused (3 failures in a row))"
    requests = fake.requests
    assert workspace.search_docs("engine oil again").result.mode == modes[3]
    assert fake.requests == requests  # switched off: no more requests
    fake.failing = ""
    assert workspace.dense.wait_available(workspace.jobs.stop).state == "ready"  # probed after the cool-down
    assert workspace.search_docs("engine oil once more").result.mode == "hybrid"


def test_query_embeddings_are_cached_and_unit_length(tmp_path: Path) -> None:
    workspace = _ws(tmp_path)
    vector, reason = workspace.dense.query_vector("refresh tokens")
    assert reason == "" and vector is not None and vector.shape == (DIMENSION,)
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-6
    fake = _fake(workspace)
    requests = fake.requests
    fake.failing = "gone"
    again, reason = workspace.dense.query_vector("refresh tokens")
    assert again is vector and reason == "" and fake.requests == requests  # from the cache, no request


def test_vectors_missing_after_a_failure_are_filled_in_later(tmp_path: Path) -> None:
    write(tmp_path, PAGES)
    workspace = _ws(tmp_path, AGENTTY_RAG_EMBED_BATCH="8")
    index = workspace.index("docs")
    index.refresh()
    workspace.dense.ensure()
    assert workspace.embed_all("docs") == 40
    assert index.vector_coverage() == (40, 40)
    write(tmp_path, {f"docs/more{i:02}.md": f"# More {i}\n\nAnother page {i} about rollbacks.\n" for i in range(40)})
    index.refresh()
    _fake(workspace).failing = "timeout"
    assert workspace.embed_all("docs") == 0
    assert index.vector_coverage() == (40, 80)
    _fake(workspace).failing = ""
    assert workspace.embed_all("docs") == 40
    assert index.vector_coverage() == (80, 80)


def test_the_command_line_leaves_a_large_backlog_to_agentty_rag_index(tmp_path: Path) -> None:
    write(tmp_path, {**PAGES, **{f"docs/extra{i:02}.md": f"# Extra {i}\n\nDeployments {i}.\n" for i in range(40)}})
    workspace = _ws(tmp_path)
    outcome = workspace.search_docs("deployments")
    assert outcome.result.mode == "bm25 (dense: 0% embedded, `agentty-rag index` embeds the rest)"
    assert workspace.index("docs").vector_coverage() == (0, 80)


def test_a_few_missing_vectors_are_embedded_before_a_command_line_search(tmp_path: Path) -> None:
    write(tmp_path, PAGES)
    workspace = _ws(tmp_path)
    assert workspace.search_docs("deployments").result.mode == "hybrid"  # 40 missing: under the limit
    write(tmp_path, {"docs/page03.md": "# Page 3\n\nNow about rollbacks instead.\n"})
    assert workspace.search_docs("rollbacks").result.mode == "hybrid"
    assert workspace.index("docs").vector_coverage() == (40, 40)


def test_the_server_embeds_in_the_background_and_says_so_meanwhile(tmp_path: Path) -> None:
    write(tmp_path, PAGES)
    workspace = _ws(tmp_path)
    workspace.background_embedding = True
    # The search holds the index while it ranks, so the thread's first vectors land after it has answered.
    first = workspace.search_docs("deployments").result.mode
    assert first == "bm25 (dense: 0% embedded, embedding the rest in the background)"
    embedding = workspace.jobs.job("embed:docs")
    assert embedding is not None and embedding.join(60)
    assert workspace.index("docs").vector_coverage() == (40, 40)
    assert workspace.search_docs("deployments").result.mode == "hybrid"


def test_a_new_embedding_model_re_embeds_but_keeps_the_chunks(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    first = _ws(tmp_path)
    first.search_docs("engine oil")
    assert first.index("docs").vector_coverage() == (4, 4)
    second = _ws(tmp_path, AGENTTY_EMBED_MODEL="other-embedder")
    report = second.index("docs").refresh()
    assert not report.rebuilt and report.rechunked_files == 0  # chunks and BM25 stay
    second.dense.ensure()
    assert second.embed_all("docs") == 4  # vectors of the new profile
    third = _ws(tmp_path)
    third.dense.ensure()
    assert third.embed_all("docs") == 0  # the first model's vectors were kept


def test_an_edit_reverted_finds_its_old_vector_without_embedding_again(tmp_path: Path) -> None:
    pages = {f"docs/page{i:02}.md": f"# Page {i}\n\nTopic number {i} about deployments.\n" for i in range(20)}
    write(tmp_path, pages)
    workspace = _ws(tmp_path)
    index = workspace.index("docs")
    index.refresh()
    workspace.dense.ensure()
    workspace.embed_all("docs")
    write(tmp_path, {"docs/page03.md": "# Page 3\n\nNow about rollbacks instead.\n"})
    assert index.refresh().changed == 1
    assert index.vector_coverage() == (19, 20)  # the edited text has no vector yet
    write(tmp_path, {"docs/page03.md": pages["docs/page03.md"]})
    assert index.refresh().changed == 1
    assert index.vector_coverage() == (20, 20)  # the reverted text's vector was kept and is found by slot


class _Loading(FakeEmbedder):
    """A server that refuses at first, then is slow to answer until ``loaded`` is set (a model loading)."""

    def __init__(self) -> None:
        super().__init__()
        self.failing = "connection refused"
        self.loaded = threading.Event()
        self.asked = threading.Event()

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if not self.failing and role == "long-probe":
            self.asked.set()
            assert self.loaded.wait(60), "the test never let the model load"
        return super().embed(texts, role)


def test_a_probe_again_waits_for_a_loading_model_without_holding_up_searches(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    embedder = _Loading()
    workspace = Workspace(tmp_path, load_settings({"AGENTTY_EMBED_BACKEND": "fake"}))
    OPEN_WORKSPACES.append(workspace)
    workspace.dense.embedder = embedder
    assert workspace.search_docs("engine oil").result.mode == "bm25 (dense unavailable: connection refused)"
    embedder.failing = ""  # the server is up, its model still loading
    probing = threading.Thread(target=workspace.dense.probe_again)
    probing.start()
    assert embedder.asked.wait(60)
    # Meanwhile a search answers lexically at once (the probe holds no lock) and asks the server nothing.
    assert workspace.search_docs("engine oil").result.mode == "bm25 (dense unavailable: connection refused)"
    embedder.loaded.set()
    probing.join(60)
    assert not probing.is_alive() and workspace.dense.status.state == "ready"
    assert workspace.search_docs("engine oil").result.mode == "hybrid"


def test_the_server_probes_again_in_the_background_until_a_failed_server_is_back(tmp_path: Path) -> None:
    """Mid-session: three failures switch the leg off; each cool-down's probe runs in a thread (a search never
    waits for it), and one that fails sets another cool-down, so the leg comes back whenever the server does."""
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path, AGENTTY_RAG_DENSE_RETRY_S="1")
    workspace.index("docs").refresh()
    assert workspace.embed_all("docs") == len(DOCS)
    workspace.background_embedding = True
    assert workspace.search_docs("engine oil").result.mode == "hybrid"
    fake = _fake(workspace)
    fake.failing = "connection refused"
    modes = [workspace.search_docs(f"engine oil {i}").result.mode for i in range(3)]
    assert modes[-1] == "bm25 (degraded: dense — connection refused)"
    assert workspace.dense.status.state == "unavailable"

    # What the server's warm-up does while the leg is down: probe whenever a probe is due, until one answers.
    waiting = workspace.jobs.start("wait-for-dense", workspace.dense.wait_available)

    def probes() -> int:
        return sum(1 for key, what in workspace.jobs.events if (key, what) == ("probe", "done"))

    for seen in range(1, 4):  # cool-downs pass while it is still down: each probe fails and sets another
        assert workspace.jobs.wait_for(lambda jobs: probes() >= seen, 120)  # noqa: B023 (used at once)
        mode = workspace.search_docs(f"engine oil still {seen}").result.mode
        assert mode.startswith("bm25 (dense unavailable: connection refused"), mode
    fake.failing = ""
    assert waiting.join(120) and workspace.dense.status.state == "ready"
    assert workspace.search_docs("engine oil again").result.mode == "hybrid"


class _Slow(FakeEmbedder):
    """Holds every batch of documents until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()
        self.holding = threading.Event()

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if role == "document":
            self.holding.set()
            assert self.go.wait(60), "the test never let the batch through"
        return super().embed(texts, role)


def test_an_index_is_embedded_by_one_thread_at_a_time(tmp_path: Path) -> None:
    """The server's warm-up and a search's background thread both want the same missing vectors: the second
    leaves them to the first instead of sending every batch again."""
    write(tmp_path, DOCS)
    workspace = Workspace(tmp_path, load_settings({"AGENTTY_EMBED_BACKEND": "fake", "AGENTTY_RAG_LEG_CHECK": "0"}))
    OPEN_WORKSPACES.append(workspace)
    slow = _Slow()
    workspace.dense.embedder = slow
    index = workspace.index("docs")
    index.refresh()
    first: list[int] = []
    warming = threading.Thread(target=lambda: first.append(workspace.embed_all("docs")))
    warming.start()
    assert slow.holding.wait(60)
    assert workspace.embed_all("docs") == 0  # claimed: nothing sent
    slow.go.set()
    warming.join(60)
    assert first == [len(DOCS)] and index.vector_coverage() == (len(DOCS), len(DOCS))
    assert slow.requests == 1  # one batch, sent once


def test_closing_the_workspace_ends_its_embedding_job_before_the_next_request(tmp_path: Path) -> None:
    """A server shutting down while its background job embeds: the request in flight is answered, the job
    sends no other and ends (it does not keep the process's exit waiting for a whole index)."""
    write(tmp_path, PAGES)
    workspace = Workspace(
        tmp_path,
        load_settings({"AGENTTY_EMBED_BACKEND": "fake", "AGENTTY_RAG_LEG_CHECK": "0", "AGENTTY_RAG_EMBED_BATCH": "4"}),
    )
    OPEN_WORKSPACES.append(workspace)
    slow = _Slow()
    workspace.dense.embedder = workspace.dense.paced.inner = slow  # the server's requests go through paced
    workspace.background_embedding = True
    index = workspace.index("docs")
    index.refresh()
    job = workspace.dense.embed_in_background(index)
    assert slow.holding.wait(60)  # the first request is in flight
    workspace.jobs.stop.set()  # what close() does first
    slow.go.set()
    assert job.join(60)
    assert slow.requests == 1 and workspace.jobs.happened("embed:docs", "stopped")
    assert 0 < index.vector_coverage()[0] < index.vector_coverage()[1]


def test_until_the_embedding_server_first_answers_the_server_probes_at_least_every_15_seconds(tmp_path: Path) -> None:
    """An embedding server started after the agent is found within seconds, whenever it starts: the waits
    between the server's probes grow (2, 4, 8 s) but never past 15 s before the first answer."""
    workspace = _ws(tmp_path, AGENTTY_RAG_DENSE_RETRY_S="600")
    workspace.background_embedding = True
    _fake(workspace).failing = "connection refused"
    assert workspace.dense.ensure().state == "unavailable"
    waits = []
    for _ in range(8):
        wait = workspace.dense.probe_in_s()
        assert wait is not None
        waits.append(round(wait))
        workspace.dense.probe_again()  # what the probe job runs when the wait is over
    assert waits == [2, 4, 8, 15, 15, 15, 15, 15]
    _fake(workspace).failing = ""
    assert workspace.dense.probe_again().state == "ready"
