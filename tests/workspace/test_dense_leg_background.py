"""The server's dense leg while it embeds in the background, with the in-repo fake embedder: the order of what is
embedded, each distinct text once, a query's time-out behind a batch not counted as the server's failure, the
cool-down after real failures, and what the leg tells ``status`` in another process."""

from __future__ import annotations

import threading
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.errors import EmbeddingError
from agentty_rag.index.vectors.dense import Matrix, Role
from agentty_rag.index.vectors.fake_embedder import FakeEmbedder
from agentty_rag.status.report import dense_state, gather
from agentty_rag.workspace.discovery import Located
from agentty_rag.workspace.service import Workspace
from tests.conftest import OPEN_WORKSPACES, write

DOCS = {
    "docs/vehicles.md": "# Vehicles\n\nChange the engine oil prose of an automobile every ten thousand kilometres.\n",
    "docs/kitchen.md": "# Kitchen\n\nBake the bread dough prose at two hundred degrees until golden.\n",
}
# Definitions (a function each) and files of top-level statements only (a block each: "the rest").
CODE = {
    **{f"src/defs_{n}.py": f"def defined_{n}(value):\n    return value + {n}\n" for n in range(6)},
    **{f"scripts/run_{n}.py": f"import os\ntoplevel_{n} = os.getcwd()\nprint(toplevel_{n})\n" for n in range(4)},
}


def _ws(root: Path, **env: str) -> Workspace:
    workspace = Workspace(root, load_settings({"AGENTTY_EMBED_BACKEND": "fake", "AGENTTY_RAG_LEG_CHECK": "0", **env}))
    OPEN_WORKSPACES.append(workspace)
    return workspace


def _use(workspace: Workspace, embedder: FakeEmbedder) -> None:
    workspace.dense.embedder = embedder
    workspace.dense.paced.inner = embedder  # what the background sends through


class _Recording(FakeEmbedder):
    """Every document request's texts, in the order the server got them; the first one held until ``go``."""

    def __init__(self, model: str = "fake") -> None:
        super().__init__(model)
        self.sent: list[list[str]] = []
        self.holding, self.go = threading.Event(), threading.Event()
        self._lock = threading.Lock()

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if role == "document":
            with self._lock:
                self.sent.append(list(texts))
                first = len(self.sent) == 1
            if first:
                self.holding.set()
                assert self.go.wait(60), "the test never let the first request through"
        return super().embed(texts, role)


def _tier(text: str) -> str:
    return "definitions" if "defined_" in text else "docs" if "prose" in text else "rest"


def test_code_definitions_are_embedded_first_then_the_docs_then_the_rest_of_the_code(tmp_path: Path) -> None:
    write(tmp_path, {**DOCS, **CODE})
    workspace = _ws(tmp_path, AGENTTY_RAG_EMBED_BATCH="2")
    for name in ("docs", "code"):
        workspace.index(name).refresh()
    recording = _Recording()
    _use(workspace, recording)
    workspace.background_embedding = True
    code = threading.Thread(target=workspace.embed_all, args=("code",))
    code.start()
    assert recording.holding.wait(60)  # the code index's first definitions are being embedded
    docs = threading.Thread(target=workspace.embed_all, args=("docs",))
    docs.start()
    assert workspace.dense.turns.await_waiting(1, 60)  # the docs wait for their turn
    recording.go.set()
    code.join(60)
    docs.join(60)
    tiers = [_tier(text) for request in recording.sent for text in request]
    assert tiers == ["definitions"] * 6 + ["docs"] * 2 + ["rest"] * 4
    assert workspace.index("code").vector_coverage() == (10, 10)


def test_the_command_line_embeds_definitions_first_too_and_in_the_same_order_every_time(tmp_path: Path) -> None:
    write(tmp_path, CODE)
    orders = []
    for model in ("first-model", "second-model"):  # each embeds every chunk: its vectors are its own
        workspace = _ws(tmp_path, AGENTTY_RAG_EMBED_BATCH="3")
        workspace.index("code").refresh()
        recording = _Recording(model)
        recording.go.set()
        _use(workspace, recording)
        assert workspace.embed_all("code") == 10
        orders.append([text.split("\n")[0] for request in recording.sent for text in request])
    assert [_tier(text) for text in orders[0]] == ["definitions"] * 6 + ["rest"] * 4
    assert orders[0] == orders[1]


def test_chunks_whose_embedded_text_is_the_same_share_one_text_of_a_request(tmp_path: Path) -> None:
    same = "The deployment window opens at noon and closes at midnight prose."
    write(tmp_path, {"docs/twice.md": f"# Window\n\n{same}\n\n# Window\n\n{same}\n", **DOCS})
    workspace = _ws(tmp_path)
    index = workspace.index("docs")
    index.refresh()
    recording = _Recording()
    recording.go.set()
    _use(workspace, recording)
    live = index.vector_coverage()[1]
    assert workspace.embed_all("docs") == live
    texts = [text for request in recording.sent for text in request]
    assert len(texts) == len(set(texts)) == live - 1  # the two sections are one text, sent once
    assert index.vector_coverage() == (live, live)


class _BehindABatch(FakeEmbedder):
    """A server busy with a batch when a query comes: the batch is answered and its request done, then the query's
    own time runs out."""

    def __init__(self) -> None:
        super().__init__()
        self.batch_in, self.batch_go, self.batch_done = threading.Event(), threading.Event(), threading.Event()

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if role == "document":
            self.batch_in.set()
            assert self.batch_go.wait(60)
        if role == "query":
            self.batch_go.set()
            assert self.batch_done.wait(60)
            raise EmbeddingError("timeout")
        return super().embed(texts, role)


def test_a_query_that_timed_out_behind_a_batch_answered_meanwhile_is_not_the_servers_failure(tmp_path: Path) -> None:
    workspace = _ws(tmp_path)
    dense = workspace.dense
    assert dense.ensure().state == "ready"
    for attempt in range(4):  # more than the failures that switch the leg off
        server = _BehindABatch()
        _use(workspace, server)

        def batch(server: _BehindABatch = server) -> None:
            dense.paced.embed(["a batch of the background"], "document")
            server.batch_done.set()

        sending = threading.Thread(target=batch)
        sending.start()
        assert server.batch_in.wait(60)
        vector, reason = dense.query_vector(f"rotate the ledger {attempt}")
        sending.join(60)
        assert vector is None and reason == "timeout (the server is embedding the index)"
    assert dense.status.state == "ready"


def test_after_three_failures_a_probe_that_answers_brings_the_leg_back_within_seconds(tmp_path: Path) -> None:
    """The cool-down's first probe comes after 2 s (not after AGENTTY_RAG_DENSE_RETRY_S, 60 s by default)."""
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path)
    workspace.index("docs").refresh()
    assert workspace.embed_all("docs") == len(DOCS)
    workspace.background_embedding = True
    fake = workspace.dense.embedder
    assert isinstance(fake, FakeEmbedder)
    fake.failing = "timeout"
    modes = [workspace.search_docs(f"engine oil {i}").result.mode for i in range(4)]
    assert modes[-1] == "bm25 (dense unavailable: timeout (3 failures in a row))"
    assert 0 < (workspace.dense.probe_in_s() or 0) <= 2  # not the 60 s of AGENTTY_RAG_DENSE_RETRY_S
    fake.failing = ""
    assert workspace.dense.wait_available(workspace.jobs.stop).state == "ready"  # the probe that comes then
    assert workspace.search_docs("engine oil again").result.mode == "hybrid"


class _SlowProbe(FakeEmbedder):
    """Answers every probe, but a long probe only after ``delay_s`` (a server too slow for a query's time-out)."""

    def __init__(self, delay_s: float) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.never = threading.Event()

    def embed(self, texts: list[str], role: Role) -> Matrix:
        if role == "long-probe":
            self.never.wait(self.delay_s)  # the model's work
        return super().embed(texts, role)


def test_a_cooling_leg_stays_off_while_the_server_answers_slower_than_a_query_may_wait(tmp_path: Path) -> None:
    workspace = _ws(tmp_path, AGENTTY_RAG_EMBED_TIMEOUT_MS="100")
    dense = workspace.dense
    dense.background = True
    assert dense.ensure().state == "ready"
    fake = dense.embedder
    assert isinstance(fake, FakeEmbedder)
    fake.failing = "timeout"
    for attempt in range(3):
        dense.query_vector(f"query {attempt}")
    assert dense.status.state == "unavailable"
    slow = _SlowProbe(0.3)
    _use(workspace, slow)
    assert dense.probe_again().state == "unavailable"
    assert dense.status.reason.startswith("the server answers, but a probe took 0.")
    slow.delay_s = 0
    assert dense.probe_again().state == "ready"


def test_status_in_another_process_reads_the_servers_leg_counts_its_vectors_and_says_when_it_probes_again(
    tmp_path: Path,
) -> None:
    write(tmp_path, DOCS)
    server = _ws(tmp_path)
    server.background_embedding = True
    server.index("docs").refresh()
    assert server.embed_all("docs") == len(DOCS)
    fake = server.dense.embedder
    assert isinstance(fake, FakeEmbedder)
    fake.failing = "timeout"
    for attempt in range(3):
        server.dense.query_vector(f"query {attempt}")
    assert server.dense.status.state == "unavailable"

    status = _ws(tmp_path)  # the status command's own workspace, whose probe is not answered
    status_fake = status.dense.embedder
    assert isinstance(status_fake, FakeEmbedder)
    status_fake.failing = "timeout"
    report = gather(status, Located(tmp_path, tmp_path, "--root"))
    assert report.dense.state == "unavailable" and not report.dense.answering
    assert report.dense.server_state == "unavailable"
    assert "cooling down after failures, probes again in " in report.dense.server
    assert report.dense.probe_in_s is not None and 0 <= report.dense.probe_in_s <= 2
    vectors = report.indexes["docs"].dense
    assert vectors.counted and (vectors.embedded, vectors.chunks) == (len(DOCS), len(DOCS))
    server.close()
    assert dense_state(status, None).server == ""  # the server stopped: its record is gone
    assert gather(status, Located(tmp_path, tmp_path, "--root")).dense.server == ""
