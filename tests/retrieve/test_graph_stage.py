"""The graph stage (``AGENTTY_RAG_GRAPH``): a linked file joins the candidates and says through which hit, the
search ranks the same whether the graph was built or read back, a missing, damaged or oversized graph never
fails a search; end to end through the real MCP server over stdio, alone and with every optional stage on and
the generator down."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from agentty_rag.config import load_settings
from agentty_rag.index.graph.store import forget
from agentty_rag.retrieve.generator import close_generators
from agentty_rag.retrieve.stages import build_stages
from agentty_rag.retrieve.stages.graph import GraphExpansion
from agentty_rag.workspace.service import Workspace
from tests.conftest import LEXICAL, CompatServer, free_port, run_main, stdio_server, write

# At the workspace root (cited docs:signing.md): in a folder, its name is a term every passage shares, which with
# the link's target name would make the two pages similar passages too. Not security.md: a file named SECURITY
# is a security policy, never indexed as documentation.
DOCS = {
    "signing.md": "# Signing keys\n\nRotate the signing key with `shipyard keys rotate`. See the "
    "[rotation schedule](schedule.md).\n",
    "schedule.md": "# Schedule\n\nEvery ninety days a new pair is generated and the old pair retired after a "
    "grace period.\n",
    "cache.md": "# Caching\n\nResponses are cached for five minutes; signed URLs bypass the cache.\n",
    "logs.md": "# Logging\n\nLogs rotate daily and are kept for thirty days.\n",
}
QUERY = "rotate the signing key"
GRAPH = {"AGENTTY_RAG_GRAPH": "1"}
EVERY_STAGE = dict.fromkeys(
    (
        "AGENTTY_RAG_PRF",
        "AGENTTY_RAG_CORRECT",
        "AGENTTY_RAG_EXPAND",
        "AGENTTY_RAG_HYDE",
        "AGENTTY_RAG_GRAPH",
        "AGENTTY_RAG_LEARN",
    ),
    "1",
)

_OPEN: list[Workspace] = []


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget()
    yield
    forget()
    while _OPEN:
        _OPEN.pop().close()
    close_generators()


def _ws(root: Path, **env: str) -> Workspace:
    workspace = Workspace(root, load_settings({**LEXICAL, **env}))
    _OPEN.append(workspace)
    return workspace


# The steps the stages that need no generator write in the funnel, in pipeline order.
STEPS = ("prf", "graph +1", "reranked", "learned", "graded")


def _stages(structured: Any) -> list[str]:
    """The funnel's stage names, in pipeline order (the header has its counts only)."""
    return [step["stage"] for step in structured["funnel"]]


def test_the_stage_is_off_by_default_and_its_switch_turns_it_on() -> None:
    assert not any(isinstance(stage, GraphExpansion) for stage in build_stages(load_settings({})))
    stages = build_stages(load_settings({**GRAPH, "AGENTTY_RAG_GRAPH_SEEDS": "5"}))
    assert GraphExpansion(seeds=5) in stages


def test_a_linked_file_joins_the_candidates_and_explain_says_through_which_hit(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    done = run_main("agentty_rag", tmp_path, ("search-docs", "--explain", QUERY), GRAPH)
    assert done.returncode == 0, done.stderr
    as_json = run_main("agentty_rag", tmp_path, ("search-docs", "--json", QUERY), GRAPH)
    assert "graph +1" in _stages(json.loads(as_json.stdout))
    assert "note: graph: built in " in done.stdout
    explained = done.stdout.split("\nexplain: ", 1)[1].split("\n")
    at = next(i for i, line in enumerate(explained) if "docs:schedule.md" in line)
    # the schedule holds no word of the query: only the signing page's link brings it
    assert explained[at + 2] == "      legs: lexical (not in its list) 0.00"
    assert explained[at + 3] == "      found by graph via signing.md (link), new to the pool"


def test_the_graph_read_back_ranks_as_the_graph_built(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    built = _ws(tmp_path, **GRAPH).search_docs(QUERY, k=4)
    forget()  # a new session: the graph comes from its file
    read_back = _ws(tmp_path, **GRAPH).search_docs(QUERY, k=4)
    assert "note: graph: built in " in built.text and "note: graph:" not in read_back.text
    assert read_back.structured["results"] == built.structured["results"]
    assert read_back.result.funnel == built.result.funnel


def test_a_damaged_graph_file_is_rebuilt_and_the_search_answers(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    plain = _ws(tmp_path, **GRAPH).search_docs(QUERY, k=4)
    forget()
    (tmp_path / ".agentty" / "rag_docs.graph.json").write_bytes(b"\x00garbage")
    outcome = _ws(tmp_path, **GRAPH).search_docs(QUERY, k=4)
    assert "; the stored graph was damaged)" in outcome.text
    assert outcome.structured["results"] == plain.structured["results"]


def test_an_index_over_the_cap_is_searched_without_a_graph_and_says_why(tmp_path: Path) -> None:
    write(tmp_path, {f"docs/note{i:03d}.md": f"# Note {i}\n\nThe signing key of region {i}.\n" for i in range(120)})
    plain = _ws(tmp_path).search_docs(QUERY, k=5)
    capped = _ws(tmp_path, **GRAPH, AGENTTY_RAG_GRAPH_MAX_CHUNKS="100").search_docs(QUERY, k=5)
    assert "note: graph: skipped (120 passages, over the cap of 100: AGENTTY_RAG_GRAPH_MAX_CHUNKS)" in capped.text
    assert capped.structured["results"] == plain.structured["results"]
    assert not (tmp_path / ".agentty" / "rag_docs.graph.json").exists()


# -- end to end: the real server over stdio ------------------------------------------------------------------


_server = stdio_server


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_server_expands_by_the_graph_and_builds_it_once(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    async with Client(_server(tmp_path, **GRAPH, AGENTTY_RAG_STRUCTURED="1")) as client:
        first = await client.call_tool("search_docs", {"query": QUERY, "k": 4})
        second = await client.call_tool("search_docs", {"query": QUERY, "k": 4})
    assert not first.is_error and not second.is_error
    assert "graph +1" in _stages(first.structured_content) and "graph +1" in _stages(second.structured_content)
    assert "note: graph: built in " in _text(first)
    assert "note: graph:" not in _text(second)  # kept in memory: built once per index state
    assert first.structured_content is not None and second.structured_content is not None
    assert first.structured_content["results"] == second.structured_content["results"]
    assert (tmp_path / ".agentty" / "rag_docs.graph.json").is_file()


@pytest.mark.anyio
async def test_every_stage_on_with_the_generator_down_still_answers_and_says_what_it_skipped(
    tmp_path: Path,
) -> None:
    write(tmp_path, DOCS)
    host = f"127.0.0.1:{free_port()}"  # nothing listens there
    env = {
        **EVERY_STAGE,
        "AGENTTY_OLLAMA_HOST": host,
        "AGENTTY_RAG_GEN_TIMEOUT_MS": "500",
        "AGENTTY_RAG_STRUCTURED": "1",
    }
    async with Client(_server(tmp_path, **env)) as client:
        result = await client.call_tool("search_docs", {"query": QUERY, "k": 4})
    text = _text(result)
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["results"][0]["path"] == "signing.md"
    refused = f"generator unavailable: connection refused at http://{host}"
    assert f"note: expand: skipped ({refused})" in text
    assert f"note: hyde: skipped ({refused})" in text
    # the stages that need no generator ran, in pipeline order
    stages = _stages(result.structured_content)
    at = {step: next((i for i, stage in enumerate(stages) if stage.startswith(step)), -1) for step in STEPS}
    assert all(position >= 0 for position in at.values()), stages
    assert at["prf"] < at["graph +1"] < at["learned"] < at["graded"]


def test_every_stage_on_with_a_stalled_generator_waits_one_timeout_and_says_so(
    tmp_path: Path, compat_server: Callable[..., CompatServer]
) -> None:
    write(tmp_path, DOCS)
    server = compat_server("--generator", "echo", "--delay-ms", "20000", "--delay-scope", "generate")
    env = {**EVERY_STAGE, "AGENTTY_OLLAMA_HOST": server.host, "AGENTTY_RAG_GEN_TIMEOUT_MS": "300"}
    outcome = _ws(tmp_path, **env).search_docs(QUERY, k=4)
    # the bound, as the header states it: one timeout of 0.3 s, then HyDE does not wait again
    assert "note: expand: skipped (generator failed: timeout after 0.3 s)" in outcome.text
    assert "note: hyde: skipped (generator unavailable: timeout after 0.3 s; resting 30 s)" in outcome.text
    assert "graph +1" in _stages(outcome.structured)
    assert outcome.structured["results"][0]["path"] == "signing.md"


def test_every_stage_on_with_the_fake_generator_runs_each_in_pipeline_order(tmp_path: Path) -> None:
    write(tmp_path, DOCS)
    outcome = _ws(tmp_path, **EVERY_STAGE, AGENTTY_RAG_GEN_BACKEND="fake").search_docs(QUERY, k=4)
    stages = _stages(outcome.structured)
    order = ("prf", "expand +", "hyde +", "graph +1", "learned", "graded")
    at = [next((i for i, stage in enumerate(stages) if stage.startswith(step)), -1) for step in order]
    assert all(position >= 0 for position in at) and at == sorted(at), stages
    assert "skipped" not in outcome.text
    assert outcome.structured["results"][0]["path"] == "signing.md"
