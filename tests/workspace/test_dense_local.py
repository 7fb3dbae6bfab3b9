"""The dense leg over the in-process embedder (``AGENTTY_EMBED_BACKEND=local``): hybrid with no server, the model
loaded off the request path in the server (the job ``load-embedder``), and a model that cannot load leaving
BM25 to answer and saying how to install it.

The model is the real all-MiniLM-L6-v2 (the ``local`` extra, a test dependency); no server runs.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from agentty_rag.config import load_settings
from agentty_rag.index.vectors.dense import Matrix, Role
from agentty_rag.index.vectors.local_embedder import INSTALL, MODEL, LocalEmbedder, model_file
from agentty_rag.status.report import gather
from agentty_rag.workspace.dense_backend import DenseStatus
from agentty_rag.workspace.discovery import Located
from agentty_rag.workspace.service import Workspace
from tests.conftest import OPEN_WORKSPACES, write

DOCS = {
    "docs/vehicles.md": "# Vehicles\n\nChange the engine oil of an automobile every ten thousand kilometres and "
    "rotate the tyres at the same visit.\n",
    "docs/kitchen.md": "# Kitchen\n\nBake the bread dough at two hundred degrees for forty minutes until the crust "
    "is golden.\n",
    "docs/garden.md": "# Garden\n\nWater tomato seedlings every morning and stake them once they are knee high.\n",
    "docs/finance.md": "# Finance\n\nFile quarterly tax returns before the deadline to avoid late payment penalties.\n",
}
PARAPHRASE = "how often should my car get serviced"  # no word of it (stemmed) is in the vehicles page


def _ws(root: Path, **env: str) -> Workspace:
    workspace = Workspace(root, load_settings({"AGENTTY_EMBED_BACKEND": "local", **env}))
    OPEN_WORKSPACES.append(workspace)
    return workspace


def test_one_setting_makes_the_docs_hybrid_with_no_server(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    lexical = _ws(tmp_path, AGENTTY_RAG_DENSE="0").search_docs(PARAPHRASE)
    assert "vehicles.md" not in lexical.text
    hybrid = _ws(tmp_path).search_docs(PARAPHRASE)  # the command line: the model loads at once
    assert hybrid.result.mode == "hybrid"
    assert hybrid.structured["results"][0]["path"] == "docs/vehicles.md"


def test_the_server_loads_the_model_in_a_job(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path)
    workspace.background_embedding = True
    workspace.dense.ensure()  # a request's call: the load is a job
    assert workspace.jobs.wait_for(lambda jobs: jobs.happened("load-embedder", "done"), 120)
    status = workspace.dense.ensure()
    assert status.state == "ready" and status.profile is not None
    assert (status.profile.model, status.profile.dimension) == (MODEL, 384)
    assert workspace.dense.describe() == f"ready: {MODEL} (384-d) {workspace.dense.embedder.where}"


def test_background_work_that_asks_for_the_leg_waits_for_the_model(tmp_path: Path) -> None:
    """The warm-up (a job) asks first: it waits for the load and goes on with a ready leg, so it embeds."""
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path)
    workspace.background_embedding = True
    seen: list[DenseStatus] = []
    asked = workspace.jobs.start("asks", lambda stop: seen.append(workspace.dense.ensure()))
    assert asked.join(120) and [s.state for s in seen] == ["ready"]
    assert workspace.jobs.happened("load-embedder", "done")


def test_a_model_that_cannot_load_leaves_bm25_answering_and_says_how_to_install_it(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(model_file(), tampered)
    with open(tampered, "ab") as f:
        f.write(b"\0")
    workspace = _ws(tmp_path)
    workspace.dense.embedder = LocalEmbedder(model_path=tampered)
    found = workspace.search_docs("engine oil")
    assert found.result.mode.startswith("bm25 (dense unavailable: model.onnx is not the known all-MiniLM-L6-v2")
    assert found.result.mode.endswith(f"reinstall it: `{INSTALL}`)")
    assert found.structured["results"][0]["path"] == "docs/vehicles.md"
    steps = gather(workspace, Located(tmp_path, tmp_path, "--root")).next
    assert any(INSTALL in step and "in-process embedder" in step for step in steps), steps


def test_the_sessions_first_search_finds_the_model_loaded_when_it_loads_within_a_probes_time(tmp_path: Path) -> None:
    """The first search waits for the load job as long as a server's probe may: the model (loaded once per
    process, so at once here) is ready for it, and the index's embedding starts."""
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path)
    workspace.background_embedding = True
    first = workspace.search_docs("engine oil").result.mode
    assert first.startswith(("bm25 (dense: 0% embedded", "hybrid")), first  # not plain bm25: the leg was ready
    assert workspace.dense.status.state == "ready"


def test_no_search_waits_longer_than_a_probe_while_the_server_loads_the_model(tmp_path: Path) -> None:
    """While the load job runs, searches answer lexically: the first after waiting as long as a server's probe
    may, the later ones at once; none holds the load's lock."""
    write(tmp_path, DOCS)
    workspace = _ws(tmp_path)
    workspace.background_embedding = True
    entered, release = threading.Event(), threading.Event()

    class _Held(LocalEmbedder):
        def embed(self, texts: list[str], role: Role) -> Matrix:
            if role == "long-probe":  # the load's probe: held until the test lets it go
                entered.set()
                assert release.wait(120)
            return super().embed(texts, role)

    workspace.dense.embedder = _Held()
    assert workspace.dense.ensure().state == "unprobed"
    assert entered.wait(120)
    assert workspace.dense.describe().startswith(f"loading {MODEL} in-process")
    assert workspace.search_docs("engine oil").result.mode == "bm25"
    release.set()
    assert workspace.jobs.wait_for(lambda jobs: jobs.happened("load-embedder", "done"), 120)
    assert workspace.dense.status.state == "ready"
