"""The generation stages (multi-query expansion, HyDE) and their generator client, against the Ollama-compatible
server in ../shared/tools with its deterministic ``--generator echo`` (no model: the answer is built from the
prompt's words, so what the stages do with it can be checked exactly) and its fault flags.

The echo answer to a prompt ending ``…: how are sessions signed`` is
``1. how are sessions signed\\n2. sessions signed\\n3. signed sessions``. The in-process ``FakeGenerator``
answers the same (``test_fake_generator.py`` runs the stages over it, without a server).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.retrieve.generator import Generator, close_generators
from agentty_rag.retrieve.ollama_generator import OllamaGenerator
from agentty_rag.retrieve.stages import build_stages
from agentty_rag.retrieve.stages.expand import Expand, prompt, rewordings
from agentty_rag.retrieve.stages.hyde import Hyde, passage
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, OPEN_WORKSPACES, CompatServer, free_port, run_main, write

DOCS = {
    "docs/auth.md": "# Authentication\n\nEvery session cookie is signed with the server's secret key, so a "
    "tampered cookie is rejected.\n",
    "docs/deploy.md": "# Deploying\n\nA deployment rolls out one replica at a time and waits for its health check.\n",
    "docs/cache.md": "# Caching\n\nResponses are cached for five minutes; signed URLs bypass the cache.\n",
    "docs/logs.md": "# Logging\n\nLogs rotate daily and are kept for thirty days.\n",
}
QUERY = "how are sessions signed"
ECHO = ("--generator", "echo")


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    while OPEN_WORKSPACES:
        OPEN_WORKSPACES.pop().close()
    close_generators()


def _ws(root: Path, host: str, **env: str) -> Workspace:
    settings = load_settings({**LEXICAL, "AGENTTY_OLLAMA_HOST": host, **env})
    workspace = Workspace(root, settings)
    OPEN_WORKSPACES.append(workspace)
    return workspace


def _closed_host() -> str:
    return f"127.0.0.1:{free_port()}"  # nothing listens there


# -- pure parts ----------------------------------------------------------------------------------------------


def test_the_stages_are_off_by_default() -> None:
    kinds = {type(stage) for stage in build_stages(load_settings({}))}
    assert Expand not in kinds and Hyde not in kinds
    on = build_stages(load_settings({"AGENTTY_RAG_EXPAND": "1", "AGENTTY_RAG_HYDE": "1"}))
    assert [type(stage).__name__ for stage in on][:3] == ["Fuse", "Expand", "Hyde"]


def test_a_malformed_switch_warns_and_keeps_the_stage_off() -> None:
    settings = load_settings({"AGENTTY_RAG_EXPAND": "maybe", "AGENTTY_RAG_GEN_TIMEOUT_MS": "5"})
    assert settings.expand is False and settings.gen_timeout_ms == 100
    assert any("AGENTTY_RAG_EXPAND" in w for w in settings.warnings)
    assert any("AGENTTY_RAG_GEN_TIMEOUT_MS" in w for w in settings.warnings)


def test_rewordings_drop_markers_preambles_the_query_itself_and_repeats() -> None:
    answer = (
        'Here are three alternative search queries for "x":\n'
        "1. **How are sessions signed**\n"
        "2. session cookie signature\n"
        '- "secret key for cookies"\n'
        "3. session cookie signature\n"
        "\n"
        "4. hmac of the session\n"
        "5. one too many\n"
    )
    assert rewordings(answer, QUERY) == ["session cookie signature", "secret key for cookies", "hmac of the session"]
    assert rewordings("1. how are sessions signed", QUERY) == []
    assert rewordings("x" * 300, QUERY) == []


def test_the_prompt_ends_with_the_query_on_one_line() -> None:
    assert prompt("how are\n  sessions signed", code=False).endswith(": how are sessions signed")
    assert "source code" in prompt("parse a header", code=True)


def test_the_hypothetical_passage_loses_its_code_fences_and_is_capped() -> None:
    assert passage("```python\ndef sign(session):\n    return hmac(session)\n```") == (
        "def sign(session):\n    return hmac(session)"
    )
    assert len(passage("word " * 1000)) == 1500


# -- the generator client --------------------------------------------------------------------------------------


def test_the_generator_answers_deterministically_and_remembers(
    compat_server: Callable[..., CompatServer],
) -> None:
    server = compat_server(*ECHO)
    generator = Generator(OllamaGenerator(server.host, "qwen2.5:0.5b", 2.0))
    first = generator.generate(f"Write three alternative search queries for: {QUERY}", 64)
    assert first.text == "1. how are sessions signed\n2. sessions signed\n3. signed sessions"
    assert first.reason == "" and not first.cached
    again = generator.generate(f"Write three alternative search queries for: {QUERY}", 64)
    assert again.text == first.text and again.cached
    generator.close()


def test_a_generator_nobody_serves_is_unavailable_and_says_why() -> None:
    host = _closed_host()
    generator = Generator(OllamaGenerator(host, "qwen2.5:0.5b", 2.0))
    answer = generator.generate("Write: anything", 64)
    assert answer.text == ""
    assert answer.reason == f"generator unavailable: connection refused at http://{host}"


def test_a_model_that_only_embeds_or_is_missing_is_refused_by_the_probe(
    compat_server: Callable[..., CompatServer],
) -> None:
    server = compat_server(*ECHO)
    embedder = Generator(OllamaGenerator(server.host, "all-minilm", 2.0)).generate("Write: x", 8)
    assert embedder.reason == "generator unavailable: model all-minilm does not generate text (it offers embedding)"
    missing = Generator(OllamaGenerator(server.host, "no-such-model", 2.0)).generate("Write: x", 8)
    assert missing.reason.startswith("generator unavailable: model no-such-model is not available")


def test_a_failing_server_fails_the_probe(compat_server: Callable[..., CompatServer]) -> None:
    server = compat_server(*ECHO, "--fail")
    answer = Generator(OllamaGenerator(server.host, "qwen2.5:0.5b", 2.0)).generate("Write: x", 8)
    assert answer.reason.startswith("generator unavailable: server error 500")


def test_a_failed_call_rests_the_generator_then_it_tries_again(compat_server: Callable[..., CompatServer]) -> None:
    server = compat_server(*ECHO, "--fail-first", "1")
    resting = Generator(OllamaGenerator(server.host, "qwen2.5:0.5b", 2.0), retry_s=3600)
    failed = resting.generate("Write: a b", 8)
    assert failed.text == "" and failed.reason.startswith("generator failed: server error 500")
    # the next call within the rest does not ask the server at all
    assert resting.generate("Write: c d", 8).reason.startswith("generator unavailable: server error 500")
    resting.close()
    server = compat_server(*ECHO, "--fail-first", "1")
    retrying = Generator(OllamaGenerator(server.host, "qwen2.5:0.5b", 2.0), retry_s=0)
    assert retrying.generate("Write: red fox", 64).text == ""
    assert retrying.generate("Write: red fox", 64).text == "1. red fox\n2. red fox\n3. fox red"
    retrying.close()


def test_a_slow_generator_times_out_within_its_bound(compat_server: Callable[..., CompatServer]) -> None:
    server = compat_server(*ECHO, "--delay-ms", "20000", "--delay-scope", "generate")
    generator = Generator(OllamaGenerator(server.host, "qwen2.5:0.5b", 0.3))
    started = time.monotonic()
    answer = generator.generate("Write: a b", 8)
    # a loose bound, far below the server's 20 s delay: the call gave up at its own timeout
    assert time.monotonic() - started < 10
    assert answer.reason == "generator failed: timeout after 0.3 s"
    generator.close()


# -- the stages in a search ------------------------------------------------------------------------------------


def test_expansion_searches_each_rewording_and_says_so(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO)
    outcome = _ws(tmp_path, server.host, AGENTTY_RAG_EXPAND="1").search_docs(QUERY, k=3)
    assert {"stage": "expand +2 queries", "count": 2} in outcome.structured["funnel"]
    assert "note: expand: +2 queries: “sessions signed”; “signed sessions”" in outcome.text
    assert outcome.structured["results"][0]["path"] == "docs/auth.md"
    top = outcome.packed.passages[0].hit.chunk.chunk_id
    assert outcome.found_by[top] == ("expand 2/2",)


def test_explain_shows_what_the_stages_found_for_each_hit(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO)
    env = {"AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_RAG_EXPAND": "1", "AGENTTY_RAG_HYDE": "1"}
    done = run_main("agentty_rag", tmp_path, ("search-docs", "--explain", QUERY), env)
    assert done.returncode == 0, done.stderr
    explained = done.stdout.split("\nexplain: ", 1)[1]
    assert "docs:docs/auth.md" in explained.split("\n")[1]
    assert explained.split("\n")[3].startswith("      legs: lexical #")  # where it stood in the lexical leg
    assert explained.split("\n")[4] == "      found by expand 2/2; hyde 1/1"


def test_hyde_searches_the_generated_passage_and_says_so(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO)
    outcome = _ws(tmp_path, server.host, AGENTTY_RAG_HYDE="1").search_docs(QUERY, k=3)
    assert {"stage": "hyde +1 passage", "count": 2} in outcome.structured["funnel"]
    assert "note: hyde: +1 generated passage of 11 words, searched by the lexical leg" in outcome.text
    assert outcome.structured["results"][0]["path"] == "docs/auth.md"


def test_the_same_search_ranks_the_same_with_the_stages_on(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO)
    env = {"AGENTTY_RAG_EXPAND": "1", "AGENTTY_RAG_HYDE": "1"}
    first = _ws(tmp_path, server.host, **env).search_docs("signed cookie cache", k=4).structured
    close_generators()  # a new session: probed again, nothing remembered
    second = _ws(tmp_path, server.host, **env).search_docs("signed cookie cache", k=4).structured
    assert first == second


def test_with_the_generator_down_a_search_answers_as_without_the_stages_and_says_why(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    host = _closed_host()
    plain = _ws(tmp_path, host).search_docs(QUERY, k=3)
    outcome = _ws(tmp_path, host, AGENTTY_RAG_EXPAND="1", AGENTTY_RAG_HYDE="1").search_docs(QUERY, k=3)
    assert outcome.structured["results"] == plain.structured["results"]
    assert outcome.result.funnel == plain.result.funnel
    refused = f"generator unavailable: connection refused at http://{host}"
    assert f"note: expand: skipped ({refused})" in outcome.text
    assert f"note: hyde: skipped ({refused})" in outcome.text


def test_a_slow_generator_costs_one_timeout_per_search_at_most(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO, "--delay-ms", "20000", "--delay-scope", "generate")
    workspace = _ws(
        tmp_path, server.host, AGENTTY_RAG_EXPAND="1", AGENTTY_RAG_HYDE="1", AGENTTY_RAG_GEN_TIMEOUT_MS="300"
    )
    started = time.monotonic()
    outcome = workspace.search_docs(QUERY, k=3)
    # a loose bound, far below the server's delay: expansion timed out once and HyDE did not wait again
    assert time.monotonic() - started < 10
    assert "note: expand: skipped (generator failed: timeout after 0.3 s)" in outcome.text
    assert "note: hyde: skipped (generator unavailable: timeout after 0.3 s; resting 30 s)" in outcome.text
    assert outcome.structured["results"][0]["path"] == "docs/auth.md"


def test_a_generator_failing_mid_session_skips_that_search_only_then_recovers(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO, "--fail-first", "1")
    workspace = _ws(tmp_path, server.host, AGENTTY_RAG_EXPAND="1")
    failed = workspace.search_docs(QUERY, k=3)
    assert "note: expand: skipped (generator failed: server error 500" in failed.text
    assert failed.structured["results"][0]["path"] == "docs/auth.md"


def test_hyde_embeds_its_passage_when_the_dense_leg_is_up(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO)
    settings = load_settings(
        {"AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_EMBED_MODEL": "all-minilm", "AGENTTY_RAG_HYDE": "1"}
    )
    workspace = Workspace(tmp_path, settings)
    OPEN_WORKSPACES.append(workspace)
    workspace.embed_all("docs")
    outcome = workspace.search_docs(QUERY, k=3)
    assert outcome.result.mode == "hybrid"
    assert "note: hyde: +1 generated passage of 11 words, searched by the dense and lexical legs" in outcome.text


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None, reason="llama-cpp-python is not installed")
def test_a_real_small_model_expands_within_its_bound(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    # SmolLM2-135M (served as qwen2.5:0.5b): its wording is not checked, only that the stage answers in time
    write(tmp_path, DOCS)
    server = compat_server("--generator", "llama")
    workspace = _ws(tmp_path, server.host, AGENTTY_RAG_EXPAND="1", AGENTTY_RAG_GEN_TIMEOUT_MS="10000")
    outcome = workspace.search_docs(QUERY, k=3)
    assert "note: expand: " in outcome.text
    assert outcome.structured["results"]


def test_status_names_the_generation_stages_and_their_model(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server(*ECHO)
    done = run_main("agentty_rag", tmp_path, ("status",), {"AGENTTY_OLLAMA_HOST": server.host})
    assert "generation:" not in done.stdout
    env = {"AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_RAG_EXPAND": "1"}
    done = run_main("agentty_rag", tmp_path, ("status",), env)
    assert f"generation: expand on; ready: qwen2.5:0.5b at http://{server.host}" in done.stdout
    env = {"AGENTTY_OLLAMA_HOST": _closed_host(), "AGENTTY_RAG_HYDE": "1"}
    done = run_main("agentty_rag", tmp_path, ("status",), env)
    assert "generation: hyde on; unavailable: connection refused at http://" in done.stdout
