"""Reading labeled queries: categories, and query texts read the way the tools receive them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from agentty_rag.bench.datasets import Label, QueriesError, Query, as_tool_query, load_queries, reconcile
from agentty_rag.config import load_settings
from agentty_rag.types import Hit
from agentty_rag.workspace.request import MAX_QUERY_CHARS
from agentty_rag.workspace.service import Workspace
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


# A class too large for one chunk: its header (the docstring) is one chunk, each method another.
RUNNER = (
    "class CliRunner:\n"
    '    """Runs commands in isolation for tests.\n\n'
    + "".join(f"    Detail line {i} about the runner's isolation of streams and environment.\n" for i in range(30))
    + '    """\n\n'
    "    def __init__(self, charset='utf-8'):\n        self.charset = charset\n\n"
    "    def isolation(self, input=None):\n"
    + "".join(f"        stream_{i} = swap(input, {i})\n" for i in range(30))
    + "        return stream_0\n\n"
    "    def invoke(self, cli, args=None):\n"
    + "".join(f"        result_{i} = cli.main(args, {i})\n" for i in range(30))
    + "        return result_0\n"
)
NOTIFIER = (
    "module Notifier\n  class DigestQueue\n    def quiet?(hour)\n      hour >= 22 || hour <= 7\n    end\n\n"
    "    def push(item)\n      @items << item\n    end\n  end\nend\n"
)
TINY = "class Tiny:\n    def isolation(self):\n        return 'kept whole'\n\n    def other(self):\n        return 1\n"


def _label_matches(tmp_path: Path, label: str, answers: tuple[str, ...] = ()) -> dict[str, bool]:
    """Each chunk of the labeled file (by symbol) and whether the label, read against the corpus, matches it."""
    write(tmp_path, {"runner.py": RUNNER, "tiny.py": TINY})
    workspace = Workspace(tmp_path, load_settings({**LEXICAL, "AGENTTY_RAG_CODE_CHUNK_CHARS": "1200"}))
    index = workspace.index("code")
    index.refresh()
    chunks = index.all_chunks()
    workspace.close()
    (query,), warnings = reconcile([Query("q", "x", (Label.parse(label, "code"),), answers)], chunks, "code")
    assert warnings == []
    (read,) = query.labels
    own = [c for c in chunks if c.ref == read.path]
    return {c.symbol or f"{c.start_line}-{c.end_line}": read.matches_passage(Hit(c, 1.0), answers) for c in own}


def test_a_member_label_is_matched_by_its_own_chunk_not_by_its_classs_other_chunks(tmp_path: Path) -> None:
    matched = _label_matches(tmp_path, "runner.py:CliRunner.isolation")
    assert matched["CliRunner.isolation"] is True
    assert matched["CliRunner"] is False  # the class header (its docstring says "isolation" too)
    assert not any(v for k, v in matched.items() if k != "CliRunner.isolation")


def test_a_member_label_is_matched_by_a_passage_spanning_its_lines(tmp_path: Path) -> None:
    write(tmp_path, {"runner.py": RUNNER})
    workspace = Workspace(tmp_path, load_settings({**LEXICAL, "AGENTTY_RAG_CODE_CHUNK_CHARS": "1200"}))
    index = workspace.index("code")
    index.refresh()
    chunks = index.all_chunks()
    workspace.close()
    (query,), _ = reconcile([Query("q", "x", (Label.parse("runner.py:CliRunner.isolation", "code"),))], chunks, "code")
    (label,) = query.labels
    member = next(c for c in chunks if c.symbol == "CliRunner.isolation")
    header = next(c for c in chunks if c.symbol == "CliRunner")
    assert label.symbol_spans == ((member.start_line, member.end_line),)
    stitched = Hit(replace(header, end_line=member.end_line, symbol=""), 1.0)  # a window over header and member
    assert label.matches_passage(stitched) and not label.matches_passage(Hit(header, 1.0))


def test_a_member_of_a_class_kept_whole_is_matched_by_the_chunk_holding_its_lines(tmp_path: Path) -> None:
    assert _label_matches(tmp_path, "tiny.py:Tiny.isolation") == {"Tiny": True}
    write(tmp_path, {"notifier.rb": NOTIFIER})
    workspace = Workspace(tmp_path, load_settings(LEXICAL))
    index = workspace.index("code")
    index.refresh()
    chunks = [c for c in index.all_chunks() if c.ref == "notifier.rb"]
    workspace.close()
    assert [c.symbol for c in chunks] == ["Notifier"]  # the module holds the class, and the class its methods
    labels = [Label.parse(f"notifier.rb:DigestQueue.{m}", "code") for m in ("quiet?", "push", "missing")]
    queries, warnings = reconcile([Query("q", "x", tuple(labels))], chunks, "code")
    quiet, push, missing = queries[0].labels
    assert quiet.symbol_spans == ((3, 5),) and push.symbol_spans == ((7, 9),) and missing.symbol_spans == ()
    assert quiet.matches_passage(Hit(chunks[0], 1.0)) and not missing.matches_passage(Hit(chunks[0], 1.0))
    assert warnings == ["query q: the symbol 'DigestQueue.missing' names no passage of code:notifier.rb"]
