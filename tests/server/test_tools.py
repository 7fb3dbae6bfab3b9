"""The two tools and the prompt, end to end over the SDK's in-memory client: the published contract, the
answers, the errors, progress while the first build runs."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from tests.conftest import FIXTURES, fenced_passages, fixture_env, free_port, write
from tests.server.conftest import server

pytestmark = pytest.mark.anyio

# The tools return text only unless this asks for structured content as well.
STRUCTURED = {"AGENTTY_RAG_STRUCTURED": "1"}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.fixture
def code_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "code"
    shutil.copytree(FIXTURES / "code", root)
    return root


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_are_listed_read_only_with_titles_and_strict_schemas(tmp_path: Path, mode: str) -> None:
    async with Client(server(tmp_path), mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        prompts = (await client.list_prompts()).prompts
        capabilities = client.server_capabilities
    assert set(tools) == {"search_docs", "search_code"}
    assert {tool.title for tool in tools.values()} == {"Search project docs", "Search project code"}
    for tool in tools.values():
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
        assert "grep" in (tool.description or "")
        schema = tool.input_schema
        assert schema["additionalProperties"] is False and schema["required"] == ["query"]
        assert schema["properties"]["k"] == {
            "default": 8,
            "description": "How many results to return: a whole number from 1 to 50."
            if tool.name == "search_code"
            else "How many passages to return: a whole number from 1 to 50.",
            "maximum": 50,
            "minimum": 1,
            "type": "integer",
        }
        assert all("title" not in prop for prop in schema["properties"].values())
        assert tool.output_schema is None  # text only, unless AGENTTY_RAG_STRUCTURED asks for structured content
    assert [(p.name, p.title) for p in prompts] == [("context_for", "Project context for a question")]
    assert capabilities is not None and capabilities.resources is None and capabilities.tools is not None


async def test_the_tool_contract_rejects_bad_arguments_in_one_line(tmp_path: Path) -> None:
    write(tmp_path, {"docs/a.md": "# A\n\nText.\n"})
    calls: dict[str, tuple[dict[str, Any], str]] = {
        "k is a boolean": ({"query": "x", "k": True}, "k must be a whole number from 1 to 50 (got true)"),
        "k is a string": ({"query": "x", "k": "5"}, 'k must be a whole number from 1 to 50 (got "5")'),
        "k is out of range": ({"query": "x", "k": 0}, "k must be a whole number from 1 to 50 (got 0)"),
        "a misspelled name": (
            {"query": "x", "scpoe": "guide"},
            "unknown argument 'scpoe': search_docs takes query, k, scope, sources",
        ),
        "a NUL byte in scope": ({"query": "x", "scope": "gu\x00ide"}, "contains a control character"),
        "no query": ({}, "query is required"),
        "a source that is not one": ({"query": "x", "sources": ["web"]}, "sources must be a list of any of: docs"),
    }
    async with Client(server(tmp_path)) as client:
        results = {why: await client.call_tool("search_docs", args) for why, (args, _) in calls.items()}
        still_fine = await client.call_tool("search_docs", {"query": "text", "k": 3})
    for why, (_, message) in calls.items():
        text = _text(results[why])
        assert results[why].is_error and message in text, why
        assert "\n" not in text and "pydantic" not in text and "http" not in text, why
    assert not still_fine.is_error


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_prompt_and_resource_misuse_are_json_rpc_errors(tmp_path: Path, mode: str) -> None:
    codes: dict[str, int] = {}
    async with Client(server(tmp_path), mode=mode) as client:
        for name, call in (
            ("no question", client.get_prompt("context_for", {})),
            ("resources", client.list_resources()),
        ):
            try:
                await call
            except MCPError as error:
                codes[name] = error.error.code
    assert codes == {"no question": -32602, "resources": -32601}


async def test_search_docs_answers_with_header_provenance_and_the_right_passage_first(tmp_path: Path) -> None:
    async with Client(server(tmp_path, **fixture_env(tmp_path), **STRUCTURED)) as client:
        result = await client.call_tool(
            "search_docs", {"query": "how can I make the server pick up config edits without restarting it?", "k": 4}
        )
        skills = await client.call_tool("search_docs", {"query": "cut a release tag", "sources": ["skills"]})
    assert not result.is_error
    text = _text(result)
    header = text.split("\n")[0]
    assert re.fullmatch(
        r"search_docs · bm25 · funnel \d+→\d+→\d+→\d+→[234] · confidence \d\.\d\d · [\d,]+ tokens", header
    )
    assert len(header) <= 120  # about 30 tokens at the most
    stages = [step["stage"] for step in (result.structured_content or {})["funnel"]]
    assert stages == ["lexical", "fused", "reranked", "dedup/stitch", "returned", "shown"]
    passages, provenances = fenced_passages(text)
    assert [passage.split(" ", 2)[1] for passage in passages] == provenances
    assert result.structured_content is not None
    assert 2 <= len(provenances) == len(result.structured_content["results"]) <= 4
    assert all(re.fullmatch(r"(docs:[\w./-]+:\d+-\d+|skill:[\w-]+|memory:[\w-]+)", p) for p in provenances)
    assert provenances[0].startswith("docs:docs/guide/configuration.md:")
    assert "Reloading without a restart" in _title(text)
    structured = result.structured_content
    assert structured is not None and structured["results"][0]["path"] == "docs/guide/configuration.md"
    assert _title(_text(skills)).startswith("[1] skill:release-checklist")


def _title(text: str) -> str:
    """The first passage's title line (a note line may come before it)."""
    return fenced_passages(text)[0][0].split("\n")[0]


async def test_the_optional_stages_say_what_they_did_in_the_structured_funnel_and_the_header_counts(
    tmp_path: Path,
) -> None:
    env = {**fixture_env(tmp_path), **STRUCTURED, "AGENTTY_RAG_PRF": "1", "AGENTTY_RAG_CORRECT": "1"}
    async with Client(server(tmp_path, **env)) as client:
        result = await client.call_tool(
            "search_docs", {"query": "shipyard sits behind nginx and following logs keeps disconnecting", "k": 5}
        )
    assert not result.is_error
    header = _text(result).split("\n")[0]
    assert " · funnel 30→30→20→20→5 · " in header  # lexical, fused, reranked, dedup/stitch, shown
    assert result.structured_content is not None
    funnel = result.structured_content["funnel"]
    assert {"stage": "prf +8 terms"} in funnel  # a note: what the step did, no count
    assert {"stage": "lexical", "count": 30} in funnel


async def test_search_code_finds_the_definition(code_workspace: Path) -> None:
    async with Client(server(code_workspace, **STRUCTURED)) as client:
        result = await client.call_tool(
            "search_code", {"query": "how does the native CRC code handle a file too big to load at once?", "k": 3}
        )
        scoped = await client.call_tool("search_code", {"query": "retry", "k": 3, "language": "go"})
    text = _text(result)
    assert text.startswith("search_code · bm25 · funnel ")
    first = result.structured_content["results"][0] if result.structured_content else {}
    assert first["path"] == "native/checksum/crc32.c" and "crc32_file" in first["symbol"].split(", ")
    assert re.search(r"^\[1\] code:native/checksum/crc32\.c:\d+-\d+ · [\w, ]*crc32_file[\w, ]* · relevance", text, re.M)
    assert scoped.structured_content is not None
    assert {r["language"] for r in scoped.structured_content["results"]} == {"go"}


async def test_bad_input_is_a_tool_error_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nText.\n")
    async with Client(server(tmp_path, AGENTTY_RAG_OUTPUT_BYTES="abc")) as client:
        empty = await client.call_tool("search_docs", {"query": "  "})
        escape = await client.call_tool("search_docs", {"query": "x", "scope": "../../etc"})
        language = await client.call_tool("search_code", {"query": "x", "language": "klingon"})
        big_k = await client.call_tool("search_docs", {"query": "x", "k": 999})
        still_fine = await client.call_tool("search_docs", {"query": "text"})
    assert empty.is_error and "query is empty" in _text(empty)
    assert escape.is_error and "outside the workspace root" in _text(escape)
    assert language.is_error and "unknown language 'klingon'; known:" in _text(language)
    assert big_k.is_error and "50" in _text(big_k)
    assert not still_fine.is_error and "[1] docs:docs/a.md:1-3" in _text(still_fine)


async def test_a_long_first_build_reports_progress_to_a_client_that_asked(tmp_path: Path) -> None:
    body = "\n\n".join(f"def handler_{j}(request):\n    return request.value + {j}\n" for j in range(40))
    for i in range(900):
        path = tmp_path / "pkg" / f"module_{i:04}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    updates: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total, message))

    # The search waits for the whole build (20 s by default is short on a loaded 2-core machine).
    async with Client(server(tmp_path, AGENTTY_RAG_BUILD_WAIT_MS="300000")) as client:
        result = await client.call_tool(
            "search_code", {"query": "handler request value"}, progress_callback=on_progress
        )
    assert not result.is_error and "pkg/module_" in _text(result)
    assert updates, "a search that waited for the first build should have reported progress"
    assert all(total == 900 for _, total, _ in updates)
    assert all(message and message.startswith("indexing code:") for _, _, message in updates)
    assert [p for p, _, _ in updates] == sorted(p for p, _, _ in updates)


def _embedding_server(backend: str, host: str) -> dict[str, str]:
    """Settings that point the server at the embedding server at ``host`` over ``backend``'s API."""
    env = {"AGENTTY_RAG_DENSE": "1", "AGENTTY_EMBED_MODEL": "all-minilm"}
    if backend == "openai":
        return {**env, "AGENTTY_EMBED_BACKEND": "openai", "AGENTTY_OPENAI_BASE_URL": f"http://{host}/v1"}
    return {**env, "AGENTTY_OLLAMA_HOST": host}


@pytest.mark.parametrize("backend", ["ollama", "openai"])
async def test_hybrid_over_mcp_against_a_real_embedding_server(
    tmp_path: Path, compat_server: Any, backend: str
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vehicles.md").write_text(
        "# Vehicles\n\nChange the engine oil of an automobile every ten thousand "
        "kilometres and rotate the tyres at the same visit.\n"
    )
    (docs / "kitchen.md").write_text("# Kitchen\n\nBake the bread dough at two hundred degrees for forty minutes.\n")
    embedder = compat_server()
    env = _embedding_server(backend, embedder.host)
    async with Client(server(tmp_path, **env, **STRUCTURED)) as client:
        result = None
        for _ in range(40):  # the warm-up embeds in the background; BM25 answers meanwhile
            result = await client.call_tool("search_docs", {"query": "how often should my car get serviced"})
            if _text(result).startswith("search_docs · hybrid ·"):
                break
            await anyio.sleep(0.25)
    assert result is not None and _text(result).startswith("search_docs · hybrid · funnel ")
    assert "+" in _text(result).split("\n")[0]  # the two legs' counts, joined
    assert result.structured_content is not None
    assert result.structured_content["results"][0]["path"] == "docs/vehicles.md"


async def test_the_context_for_prompt_returns_the_retrieved_block(tmp_path: Path) -> None:
    async with Client(server(tmp_path, **fixture_env(tmp_path))) as client:
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}
        result = await client.get_prompt(
            "context_for", {"question": "which bucket permissions does the artifact store need?"}
        )
        off_topic = await client.get_prompt("context_for", {"question": "write a haiku about autumn leaves"})
    assert "context_for" in prompts
    text = result.messages[0].content.text  # type: ignore[union-attr]
    assert text.startswith("[retrieved context · bm25 · confidence ") and "docs:docs/guide/artifacts.md:" in text
    assert off_topic.messages[0].content.text.startswith("No confident project context")  # type: ignore[union-attr]


@pytest.mark.parametrize("backend", ["ollama", "openai"])
async def test_an_embedding_server_started_after_the_agent_makes_the_session_hybrid(
    tmp_path: Path, compat_server: Any, backend: str
) -> None:
    """Nothing listens when the server starts: it answers lexically and says why, then probes again in the
    background; once the embedding server is up, the same session embeds and answers hybrid, no restart."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vehicles.md").write_text("# Vehicles\n\nChange the engine oil of an automobile every ten thousand km.\n")
    (docs / "kitchen.md").write_text("# Kitchen\n\nBake the bread dough at two hundred degrees for forty minutes.\n")
    port = free_port()
    env = _embedding_server(backend, f"127.0.0.1:{port}")
    query = {"query": "how often should my car get serviced"}
    async with Client(server(tmp_path, **env)) as client:
        first = _text(await client.call_tool("search_docs", query))
        assert first.startswith("search_docs · bm25 (dense unavailable) ·") and "connection refused" in first
        compat_server(port=port)
        answer = first
        for _ in range(480):  # the probes come after 2, 4, 8 … s; a loaded machine is slow to start the model
            answer = _text(await client.call_tool("search_docs", query))
            if answer.startswith("search_docs · hybrid ·"):
                break
            await anyio.sleep(0.25)
    assert answer.startswith("search_docs · hybrid · funnel "), answer.splitlines()[:2]
