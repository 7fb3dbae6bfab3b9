"""Where a source file's definitions are: tree-sitter finds the nodes, the language's rules say which count.

Each definition spans its decorators and doc comments above it and its body; definitions nest by
containment (a class holds its methods). The parser and compiled query of each language are loaded once per
thread.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field

from tree_sitter import Node, Parser, Query, QueryCursor

from agentty_rag.chunking.language_spec import LanguageSpec
from agentty_rag.chunking.naming import definition_kind, definition_name
from agentty_rag.chunking.rules import Spans

log = logging.getLogger(__name__)


@dataclass
class Definition:
    """A definition's rows (0-based, inclusive; ``start`` includes its decorators and doc comments)."""

    start: int
    end: int
    head: int  # row of the definition keyword itself, for the signature
    kind: str
    name: str
    start_byte: int
    end_byte: int
    children: list[Definition] = field(default_factory=list)


class _Grammars(threading.local):
    """Parsers and compiled queries per language, one set per thread (parsers are not thread-safe)."""

    def __init__(self) -> None:
        self.cache: dict[str, tuple[Parser, QueryCursor] | None] = {}


_grammars = _Grammars()


def load_grammar(spec: LanguageSpec) -> tuple[Parser, QueryCursor] | None:
    """The parser and definition query of a language (cached; None when its grammar cannot be loaded)."""
    if spec.name in _grammars.cache:
        return _grammars.cache[spec.name]
    loaded: tuple[Parser, QueryCursor] | None = None
    try:
        from tree_sitter_language_pack import get_language

        language = get_language(spec.grammar)  # type: ignore[arg-type]
        patterns = [f"({t}) @def" for t in (*spec.containers, *spec.functions, *spec.others)]
        valid = []
        for pattern in (*patterns, *spec.extra_patterns):
            try:
                Query(language, pattern)
                valid.append(pattern)
            except Exception:  # a node type this grammar version lacks
                log.debug("pattern %s not valid for %s", pattern, spec.grammar)
        loaded = (Parser(language), QueryCursor(Query(language, "\n".join(valid))))
    except Exception as error:  # a missing or broken grammar: fall back to line windows
        log.warning("no tree-sitter grammar for %s (%s); indexing its files as line windows", spec.name, error)
    _grammars.cache[spec.name] = loaded
    return loaded


_CLASS_KINDS = frozenset({"class", "interface", "impl", "struct", "enum"})


def _row_end(node: Node) -> int:
    """Last row a node occupies (a node ending at column 0 ends on the row before)."""
    row = node.end_point.row
    return row - 1 if node.end_point.column == 0 and row > node.start_point.row else row


def _extent(node: Node, spec: LanguageSpec) -> tuple[Node, Node]:
    """The first and last node a definition spans: its wrappers above, a trailing body beside it."""
    outer = node
    while outer.parent is not None and outer.parent.type in spec.wrappers:
        outer = outer.parent
    after = outer.next_named_sibling if spec.trailing else None
    return outer, after if after is not None and after.type in spec.trailing else outer


_CLAUSE_KINDS = frozenset({"function", "method", "macro"})


def _merge_clauses(definitions: list[Definition]) -> list[Definition]:
    """Consecutive definitions of one name and kind become one: a signature with its equations, clauses."""
    merged: list[Definition] = []
    for definition in definitions:
        definition.children = _merge_clauses(definition.children)
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and definition.kind in _CLAUSE_KINDS
            and (previous.name, previous.kind) == (definition.name, definition.kind)
        ):
            previous.end, previous.end_byte = definition.end, definition.end_byte
            previous.children.extend(definition.children)
        else:
            merged.append(definition)
    return merged


def find_definitions(tree_root: Node, cursor: QueryCursor, spec: LanguageSpec, lines: list[str]) -> list[Definition]:
    """Named definitions of a parsed file, nested by containment, in source order."""
    seen: dict[tuple[int, int], Node] = {}
    captures = cursor.captures(tree_root)
    for node in captures.get("def", []):
        seen.setdefault((node.start_byte, node.end_byte), node)
    quotes = Spans(captures.get("quote", []))
    candidates = [(node, *_extent(node, spec)) for node in seen.values()]
    candidates.sort(key=lambda found: (found[1].start_byte, -found[2].end_byte))
    roots: list[Definition] = []
    stack: list[Definition] = []
    for node, outer, last in candidates:
        while stack and stack[-1].end_byte <= outer.start_byte:
            stack.pop()
        parent = stack[-1] if stack else None
        quoted = quotes.hold(node)
        name = definition_name(node, spec, quoted)
        if not name:
            continue
        inside_class = parent is not None and parent.kind in _CLASS_KINDS
        start = outer.start_point.row
        previous = outer.prev_named_sibling
        while previous is not None and previous.type in spec.prefixes and _row_end(previous) >= start - 1:
            line = lines[previous.start_point.row] if previous.start_point.row < len(lines) else ""
            if line[: previous.start_point.column].strip():
                break  # a trailing comment of the line above, not a doc comment
            start = previous.start_point.row
            previous = previous.prev_named_sibling
        kind = definition_kind(node, spec, inside_class, quoted)
        if kind == "function" and spec.name == "cpp" and "." in name:
            kind = "method"  # an out-of-line member: void Pool::submit() {...}
        definition = Definition(
            start, _row_end(last), node.start_point.row, kind, name, outer.start_byte, last.end_byte
        )
        if parent is not None and parent.start_byte <= outer.start_byte and last.end_byte <= parent.end_byte:
            # A member's doc comment never reaches above its container's own first row.
            definition.start = max(definition.start, parent.head + 1)
            parent.children.append(definition)
        else:
            roots.append(definition)
        stack.append(definition)
    return _merge_clauses(roots) if spec.clauses else roots


__all__ = ["Definition", "find_definitions", "load_grammar"]
