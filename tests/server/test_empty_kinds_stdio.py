"""A search_docs scoped to memory or skills when there are none says so, and how to add one, over the real
``agentty-rag serve`` on stdio with the official MCP client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.conftest import stdio_server, write

pytestmark = pytest.mark.anyio

NO_MEMORY = "no memory facts — none in ./.agentty/memory (add a fact as a Markdown file there"
NO_SKILLS = "no skills installed — none in ./.agentty/skills, ~/.agentty/skills (a skill is a folder holding a SKILL.md"
FILTERED = "no matches (bm25) within the given filters"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


_server = stdio_server


def _reason(result: Any) -> str:
    """The answer's last line: why nothing came back."""
    assert not result.is_error
    text = "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")
    return text.rstrip("\n").split("\n")[-1]


async def test_a_search_of_memory_or_skills_when_there_are_none_says_so_and_how_to_add_one(tmp_path: Path) -> None:
    write(tmp_path, {"docs/guide.md": "# Guide\n\nDeploy the service with the release train.\n"})
    async with Client(_server(tmp_path)) as client:

        async def reason(*sources: str) -> str:
            return _reason(await client.call_tool("search_docs", {"query": "release train", "sources": [*sources]}))

        missing = await reason("memory")
        (tmp_path / ".agentty" / "memory").mkdir(parents=True, exist_ok=True)
        empty = await reason("memory")
        skills = await reason("skills")
        both = await reason("skills", "memory")
        write(tmp_path, {".agentty/memory/tabs.md": "Indent the project's YAML files with two spaces.\n"})
        unmatched = await reason("memory")
        docs = await client.call_tool("search_docs", {"query": "release train", "sources": ["docs"]})
        mixed = _reason(await client.call_tool("search_docs", {"query": "zebra", "sources": ["docs", "skills"]}))
    assert missing.startswith(NO_MEMORY) and empty.startswith(NO_MEMORY), missing
    assert skills.startswith(NO_SKILLS), skills
    assert both.startswith(NO_SKILLS) and NO_MEMORY in both, both
    assert FILTERED not in missing + empty + skills + both
    assert unmatched == FILTERED  # facts there, none relevant: the filter's own words
    assert mixed == FILTERED  # docs asked for too, and there are docs
    assert "docs:docs/guide.md" in "\n".join(block.text for block in docs.content if hasattr(block, "text"))


async def test_an_empty_workspace_scoped_to_memory_names_the_memory_folder_not_the_docs(tmp_path: Path) -> None:
    """Nothing at all indexed: the answer of a memory search is memory's, not "no docs indexed"."""
    async with Client(_server(tmp_path)) as client:
        result = await client.call_tool("search_docs", {"query": "tabs or spaces", "sources": ["memory"]})
    assert _reason(result).startswith(NO_MEMORY), _reason(result)


async def test_memory_switched_off_says_which_setting_turns_it_off(tmp_path: Path) -> None:
    write(tmp_path, {"docs/guide.md": "# Guide\n\nDeploy the service with the release train.\n"})
    async with Client(_server(tmp_path, AGENTTY_RAG_MEMORY="0")) as client:
        result = await client.call_tool("search_docs", {"query": "release train", "sources": ["memory"]})
    assert _reason(result) == "no memory facts — AGENTTY_RAG_MEMORY=0 turns memory off"
