"""The ``Embedder`` seam: the factory, the probe, the fake's guarantees, and the Ollama client's own failures."""

from __future__ import annotations

import numpy as np
import pytest

from agentty_rag.config import load_settings, variable
from agentty_rag.index.vectors.dense import Embedder, EmbeddingError, probe
from agentty_rag.index.vectors.embedders import BACKENDS, make_embedder
from agentty_rag.index.vectors.fake_embedder import DIMENSION, FakeEmbedder
from agentty_rag.index.vectors.ollama_embedder import OllamaEmbedder
from agentty_rag.ollama_api.client import normalise_host
from tests.conftest import free_port


def test_every_backend_the_setting_accepts_has_a_factory_and_no_other() -> None:
    assert sorted(BACKENDS) == sorted(variable("AGENTTY_EMBED_BACKEND").choices)


def test_the_factory_builds_the_configured_backend() -> None:
    assert isinstance(make_embedder(load_settings({})), OllamaEmbedder)
    fake = make_embedder(load_settings({"AGENTTY_EMBED_BACKEND": "FAKE", "AGENTTY_EMBED_MODEL": "m"}))
    assert isinstance(fake, FakeEmbedder) and fake.model == "fake-m"
    malformed = load_settings({"AGENTTY_EMBED_BACKEND": "onnx"})
    assert malformed.embed_backend == "ollama"
    assert malformed.warnings == (
        "AGENTTY_EMBED_BACKEND='onnx' is not one of ollama, fake; using the default (ollama)",
    )


def test_both_backends_satisfy_the_protocol() -> None:
    backends: list[Embedder] = [FakeEmbedder(), OllamaEmbedder("127.0.0.1:1", "all-minilm")]
    assert [b.where for b in backends] == ["in-process", "at http://127.0.0.1:1"]


def test_fake_vectors_are_unit_length_deterministic_and_closer_for_shared_words() -> None:
    fake = FakeEmbedder()
    rows = fake.embed(["rotate the tyres", "rotate the tyres", "bake bread dough", ""], "document")
    assert rows.shape == (4, DIMENSION) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows[:3], axis=1), 1.0) and not rows[3].any()
    assert np.array_equal(rows[0], FakeEmbedder().embed(["rotate the tyres"], "document")[0])  # any instance
    query = fake.embed(["when should I rotate tyres"], "query")[0]
    assert float(rows[0] @ query) > float(rows[2] @ query)
    assert fake.embed([], "document").shape == (0, 0)


def test_fake_probe_reports_its_profile_or_its_failure() -> None:
    fake = FakeEmbedder("fake-x", dimension=8)
    result = probe(fake)
    assert (
        result.ok and result.profile is not None and (result.profile.model, result.profile.dimension) == ("fake-x", 8)
    )
    assert fake.requests == 0  # a probe is no request of a search or a build
    fake.failing = "connection refused"
    assert probe(fake).reason == "connection refused"
    with pytest.raises(EmbeddingError, match="connection refused"):
        fake.embed(["x"], "query")


def test_ollama_names_a_refusal() -> None:
    embedder = OllamaEmbedder(f"127.0.0.1:{free_port()}", "all-minilm")
    result = probe(embedder)
    assert not result.ok and result.reason.startswith("connection refused at http://127.0.0.1:")
    with pytest.raises(EmbeddingError, match="connection refused"):
        embedder.embed(["text"], "document")
    embedder.close()


def test_hosts_get_a_scheme_unless_they_have_one() -> None:
    assert normalise_host(" 127.0.0.1:11434/ ") == "http://127.0.0.1:11434"
    assert normalise_host("https://embed.example:443") == "https://embed.example:443"
