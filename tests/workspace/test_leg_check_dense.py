"""The leg check with a real embedding model (all-MiniLM-L6-v2 behind the Ollama-compatible test server on
loopback) over a real small corpus, the committed code fixtures: the verdict is made by ``agentty-rag
index``, kept beside the index, shown by ``status`` and in every header, and made again once damaged (by the
server's embedding thread). Which way the verdict goes is the model's business: the tests hold the tool to
saying and doing what its verdict says.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.render import header_mode
from agentty_rag.state.machine_key import machine_key
from agentty_rag.workspace.leg_check import PROBE_LIMIT, load, verdict_path
from agentty_rag.workspace.service import Workspace
from tests.conftest import FIXTURES, CompatServer, run_module

# Embedding the fixture code with a real model on a loaded 2-core machine, then three searches per probe: the
# timeout guards against a hang, not against a slow machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

QUERY = "rotate the signing keys before they expire"


def _key() -> bytes:
    """The session's machine key, which seals the verdicts its workspaces keep."""
    return machine_key(Path(os.environ["XDG_STATE_HOME"]))


def test_the_verdict_is_made_shown_followed_and_made_again_after_damage(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "code", root)
    server = compat_server()
    env = {"AGENTTY_RAG_DENSE": "1", "AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_EMBED_MODEL": "all-minilm"}

    indexed = run_module("agentty_rag", root, ("index", "code"), env, timeout=600)
    assert indexed.returncode == 0, indexed.stderr
    workspace = Workspace(root, load_settings({**env, "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}))
    path = verdict_path(workspace.index("code"))
    stored = load(path, _key())
    assert stored is not None and stored.verdict.probes == PROBE_LIMIT and stored.profile.startswith("all-minilm")
    said = stored.verdict.describe()
    assert f"code: leg check: {said}" in indexed.stdout

    status = run_module("agentty_rag", root, ("status",), env)
    assert f"  leg check: {said}" in status.stdout

    searched = run_module("agentty_rag", root, ("search-code", QUERY, "--explain"), env)
    header = searched.stdout.splitlines()[0]
    modes = {"lexical": f"bm25 ({said})", "hybrid": "hybrid", "dense-led": "hybrid (dense-led)"}
    mode = modes[stored.verdict.lead]
    assert header.startswith(f"search_code · {header_mode(mode)[0]} · funnel "), header

    path.write_text('{"version": 1, "verdict": ', encoding="utf-8")  # cut short
    workspace.background_embedding = True  # the server: the check is made again by its embedding thread
    try:
        first = workspace.search_code(QUERY).result.mode
        assert first == "hybrid"  # no verdict meanwhile: the search is not kept waiting
        embedding = workspace.jobs.job("embed:code")
        assert embedding is not None and embedding.join(300)
        remade = load(path, _key())
        assert remade is not None and remade.held == stored.held
        assert (remade.verdict.probes, remade.verdict.lead) == (stored.verdict.probes, stored.verdict.lead)
        assert workspace.search_code(QUERY).result.mode == mode
    finally:
        workspace.close()
