"""Reading labeled queries: categories, and query texts read the way the tools receive them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentty_rag.bench.datasets import QueriesError, as_tool_query, load_queries
from agentty_rag.config import load_settings
from agentty_rag.request import MAX_QUERY_CHARS
from agentty_rag.service import Workspace
from tests.conftest import LEXICAL, write


def test_a_query_keeps_its_category_and_a_bad_one_names_the_line(tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"id": "a", "query": "x", "relevant": ["a.py"], "category": "symbol"}\n{"id": "b", "query": "y", "relevant": ["b.py"]}\n'
    )
    assert [(q.id, q.category) for q in load_queries(queries, "code")] == [("a", "symbol"), ("b", "")]
    queries.write_text(
        '{"id": "a", "query": "x", "relevant": ["a.py"]}\n{"query": "y", "relevant": ["b.py"], "category": 3}\n'
    )
    with pytest.raises(QueriesError, match=r'q\.jsonl:2: "category" must be a string'):
        load_queries(queries, "code")


def test_a_long_multi_line_query_is_read_as_search_code_receives_it(tmp_path: Path) -> None:
    write(tmp_path, {"app.py": "def parse_header(raw):\n    return raw.split(':')\n"})
    issue = "Traceback (most recent call last):\r\n  File app.py\r\n\r\n    parse_header(raw)\n" * 200
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"query": ' + json.dumps(issue) + ', "relevant": ["app.py"]}\n')
    (query,) = load_queries(queries, "code")
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    received = workspace.search_code(issue, k=3).result.query
    workspace.close()
    assert query.text == as_tool_query(issue) == received
    assert len(query.text) == MAX_QUERY_CHARS and "\n" not in query.text
