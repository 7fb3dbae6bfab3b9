"""End to end over MCP stdio: a search finds a definition by its own name where chunking once hid it (a class
qualified by C++ macros, a class alone in a namespace)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from tests.chunking.test_macros import HEADER
from tests.conftest import LEXICAL, write

pytestmark = pytest.mark.anyio

CURRENCY = """\
namespace Shipyard.Billing
{
    /// <summary>How an amount is rounded when it is split.</summary>
    public enum RoundingMode
    {
        HalfEven,
        HalfUp,
    }
}
"""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _first_passage(root: Path, query: str) -> str:
    script = Path(sys.executable).with_name("agentty-rag")
    command, args = (str(script), []) if script.exists() else (sys.executable, ["-m", "agentty_rag"])
    server = StdioServerParameters(command=command, args=[*args, "--root", str(root), "serve"], env=LEXICAL)
    async with Client(server) as client:
        result = await client.call_tool("search_code", {"query": query, "k": 3})
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    assert not result.is_error, text
    return text.split("\n[2]")[0]


async def test_search_code_finds_a_class_qualified_by_macros_by_its_name(tmp_path: Path) -> None:
    write(tmp_path, {"include/fmt/args.h": HEADER, "include/fmt/base.h": "int base_value(void);\n"})
    first = await _first_passage(tmp_path, "dynamic_format_arg_store push_back")
    assert "code:include/fmt/args.h:" in first
    assert "dynamic_format_arg_store" in first.split("\n")[2]  # the passage's own line names the class


async def test_search_code_names_a_class_alone_in_its_namespace_after_the_class(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/Billing/RoundingMode.cs": CURRENCY,
            "src/Billing/Ledger.cs": "namespace Shipyard.Billing\n{\n    public class Ledger { }\n}\n",
        },
    )
    first = await _first_passage(tmp_path, "RoundingMode")
    assert "code:src/Billing/RoundingMode.cs:1-9 · Shipyard.Billing.RoundingMode · relevance" in first
