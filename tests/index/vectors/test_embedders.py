"""The ``Embedder`` seam: the factory, the probe, the fake's guarantees, and the Ollama client's own failures."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from agentty_rag.config import load_settings, variable
from agentty_rag.errors import EMBEDDING_REASON_CHARS
from agentty_rag.index.vectors.dense import Embedder, EmbeddingError, checked_vectors, of_shape, probe
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
        "AGENTTY_EMBED_BACKEND='onnx' is not one of local, ollama, openai, fake; using the default (ollama)",
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


# -- what a server's answer must be before its vectors are used ----------------------------------------------


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        ([[1.0, 0.0]], "the server returned 1 vectors for 2 texts"),
        ({"a": 1}, "the server returned dict vectors for 2 texts"),
        ([[1.0, 0.0], [1.0]], "the server returned vectors of different lengths (1, 2)"),
        ([[], []], "the server returned empty vectors"),
        ([[1.0, 0.0], 3.0], "the server's vectors are not lists of numbers"),
        ([["a", "b"], [1.0, 2.0]], "the server's vectors are not lists of numbers"),
        ([[1.0, float("nan")], [1.0, 2.0]], "the server returned vectors with NaN or infinite values"),
        ([[1.0, 2.0], [float("-inf"), 2.0]], "the server returned vectors with NaN or infinite values"),
        ([[1.0, 2.0], [0.0, 0.0]], "the server returned an all-zero vector"),
    ],
)
def test_an_answer_that_is_not_one_vector_of_numbers_per_text_is_a_failure_saying_why(
    rows: object, reason: str
) -> None:
    with pytest.raises(EmbeddingError) as raised:
        checked_vectors(rows, 2)
    assert raised.value.reason == reason


@given(
    st.lists(
        st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), min_size=3, max_size=3).filter(
            lambda row: any(row)
        ),
        min_size=1,
        max_size=5,
    )
)
@example([[0.0, 0.0, 1.3747115488181447e-22]])  # its float32 square loses digits
@example([[3e38, 3e38, 0.0]])  # its float32 square overflows
def test_any_finite_non_zero_rows_become_unit_vectors_pointing_the_same_way(rows: list[list[float]]) -> None:
    unit = checked_vectors(rows, len(rows))
    assert unit.dtype == np.float32 and unit.shape == (len(rows), 3)
    assert np.allclose(np.linalg.norm(unit, axis=1), 1, atol=1e-5)
    wide = np.asarray(rows, np.float64)
    assert np.allclose(unit, wide / np.linalg.norm(wide, axis=1, keepdims=True), atol=1e-6)


def test_a_batch_unlike_the_probe_is_a_failure_and_a_reason_is_one_short_line() -> None:
    with pytest.raises(EmbeddingError, match="the server returned 128-d vectors where its probe answered 384-d"):
        of_shape(np.ones((2, 128), np.float32), 2, 384)
    with pytest.raises(EmbeddingError, match="the embedder returned 1 vectors for 2 texts"):
        of_shape(np.ones((1, 384), np.float32), 2, 384)
    long = EmbeddingError("server error 500: " + "a very long\nmessage " * 5000)
    assert "\n" not in long.reason and len(long.reason) == EMBEDDING_REASON_CHARS and long.reason.endswith("…")
