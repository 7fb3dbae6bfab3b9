"""The generation stages (multi-query expansion, HyDE) over the in-process ``FakeGenerator``
(``AGENTTY_RAG_GEN_BACKEND=fake``): no server, so what the stages do with an answer (the queries they add, how
the lists are fused, what the header and the funnel say) and the generator's own rules (probed once, answers
remembered, a failure rests it) are checked exactly on every run. ``test_generation.py`` keeps the same
stages end to end over the compat server's echo generator, which answers as the fake does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentty_rag.config import load_settings, variable
from agentty_rag.retrieve.fake_generator import FakeGenerator, echo
from agentty_rag.retrieve.generator import BACKENDS, Generator, close_generators, generator_for
from agentty_rag.retrieve.ollama_generator import OllamaGenerator
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, OPEN_WORKSPACES, write
from tests.retrieve.test_generation import DOCS, QUERY

FAKE = {**LEXICAL, "AGENTTY_RAG_GEN_BACKEND": "fake"}


@pytest.fixture(autouse=True)
def _forget_generators() -> Iterator[None]:
    yield
    close_generators()  # (the workspaces are closed by conftest)


def _ws(root: Path, **env: str) -> Workspace:
    workspace = Workspace(root, load_settings({**FAKE, **env}))
    OPEN_WORKSPACES.append(workspace)
    return workspace


def _fake(**env: str) -> FakeGenerator:
    """The process's fake backend for these settings (the one the stages of a search ask)."""
    backend = generator_for(load_settings({**FAKE, **env})).backend
    assert isinstance(backend, FakeGenerator)
    return backend


# -- the backends and the fake's answers -----------------------------------------------------------------------


def test_every_backend_the_setting_accepts_has_a_factory_and_no_other() -> None:
    assert sorted(BACKENDS) == sorted(variable("AGENTTY_RAG_GEN_BACKEND").choices)
    assert isinstance(generator_for(load_settings({})).backend, OllamaGenerator)
    assert _fake(AGENTTY_RAG_GEN_MODEL="m").model == "fake-m"


def test_the_fake_answers_as_the_echo_server_and_stops_at_max_tokens() -> None:
    assert echo(f"Write three short alternative search queries for: {QUERY}") == (
        "1. how are sessions signed\n2. sessions signed\n3. signed sessions"
    )
    fake = FakeGenerator()
    assert fake.ask("Write: red fox", 64) == ("1. red fox\n2. red fox\n3. fox red", "")
    assert fake.ask("Write: red fox", 3) == ("1. red fox", "")


def test_the_generator_probes_once_remembers_answers_and_rests_after_a_failure() -> None:
    fake = FakeGenerator()
    generator = Generator(fake, retry_s=3600)
    fake.fail_next = 1
    failed = generator.generate("Write: a b", 8)
    assert failed.text == "" and failed.reason == "generator failed: server error 500: fake"
    # resting: the next call does not ask the backend at all
    assert generator.generate("Write: c d", 8).reason == "generator unavailable: server error 500: fake; resting 3600 s"
    assert fake.asked == 1
    again = Generator(fake, retry_s=0)
    first = again.generate("Write: red fox", 64)
    assert first.text == "1. red fox\n2. red fox\n3. fox red" and not first.cached
    second = again.generate("Write: red fox", 64)
    assert second.text == first.text and second.cached and fake.asked == 2
    assert again.describe() == "ready: fake in-process"


def test_a_fake_that_fails_its_probe_is_unavailable_and_says_why() -> None:
    fake = FakeGenerator()
    fake.failing = "connection refused at nowhere"
    generator = Generator(fake)
    assert generator.generate("Write: x", 8).reason == "generator unavailable: connection refused at nowhere"
    assert generator.describe() == "unavailable: connection refused at nowhere" and fake.asked == 0


# -- the stages in a search ------------------------------------------------------------------------------------


def test_expansion_searches_each_rewording_and_says_so(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    outcome = _ws(tmp_path, AGENTTY_RAG_EXPAND="1").search_docs(QUERY, k=3)
    assert {"stage": "expand +2 queries", "count": 2} in outcome.structured["funnel"]
    assert "note: expand: +2 queries: “sessions signed”; “signed sessions”" in outcome.text
    assert outcome.structured["results"][0]["path"] == "docs/auth.md"
    top = outcome.packed.passages[0].hit.chunk.chunk_id
    assert outcome.found_by[top] == ("expand 2/2",)


def test_hyde_searches_the_generated_passage_and_says_so(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    outcome = _ws(tmp_path, AGENTTY_RAG_HYDE="1").search_docs(QUERY, k=3)
    assert {"stage": "hyde +1 passage", "count": 2} in outcome.structured["funnel"]
    assert "note: hyde: +1 generated passage of 11 words, searched by the lexical leg" in outcome.text
    assert outcome.structured["results"][0]["path"] == "docs/auth.md"


def test_the_same_search_ranks_the_same_with_the_stages_on(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    env = {"AGENTTY_RAG_EXPAND": "1", "AGENTTY_RAG_HYDE": "1"}
    first = _ws(tmp_path, **env).search_docs("signed cookie cache", k=4).structured
    close_generators()  # a new session: probed again, nothing remembered
    second = _ws(tmp_path, **env).search_docs("signed cookie cache", k=4).structured
    assert first == second


def test_with_the_generator_unavailable_a_search_answers_as_without_the_stages_and_says_why(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    plain = _ws(tmp_path).search_docs(QUERY, k=3)
    _fake().failing = "connection refused at nowhere"
    outcome = _ws(tmp_path, AGENTTY_RAG_EXPAND="1", AGENTTY_RAG_HYDE="1").search_docs(QUERY, k=3)
    assert outcome.structured["results"] == plain.structured["results"]
    assert outcome.result.funnel == plain.result.funnel
    assert "note: expand: skipped (generator unavailable: connection refused at nowhere)" in outcome.text
    assert "note: hyde: skipped (generator unavailable: connection refused at nowhere)" in outcome.text


def test_a_generator_failing_mid_session_skips_the_stages_of_that_search_only(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    _fake().fail_next = 1
    workspace = _ws(tmp_path, AGENTTY_RAG_EXPAND="1", AGENTTY_RAG_HYDE="1")
    failed = workspace.search_docs(QUERY, k=3)
    assert "note: expand: skipped (generator failed: server error 500: fake)" in failed.text
    assert "note: hyde: skipped (generator unavailable: server error 500: fake; resting 30 s)" in failed.text
    assert failed.structured["results"][0]["path"] == "docs/auth.md"
