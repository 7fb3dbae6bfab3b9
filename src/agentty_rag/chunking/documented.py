"""Documented definitions of a source file: each function's first doc sentence, and the span that holds its
docs, so that a caller can hide them (the docstring queries of rag-bench, the dense leg's self-check).

Python docstrings are read from the syntax tree; other languages' doc comments are the comment lines directly
above a function or method (``///``, ``/** */``, ``#``, ``--``, ``;``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from agentty_rag.chunking.code import Definition, find_definitions, load_grammar
from agentty_rag.chunking.languages import LanguageSpec, language_of

_COMMENT_MARKERS = re.compile(r"^\s*(///?|/\*\*?|\*/?|#|--+|;+)\s?")
# A sentence ends at . ! or ? followed by a space and a capital letter (or the end): "e.g. x" does not end one.
_SENTENCE = re.compile(r"(.+?[.!?])(?=\s+[A-Z(`\"']|\s*$)", re.S)


@dataclass(frozen=True)
class DocumentedFunction:
    """One documented function of a file: its symbol path, its first doc sentence, and its docs' span.

    Args:
        mask: (start byte, end byte, replacement) of the doc text to hide; the replacement keeps the line
            count, so line numbers after it do not move.
    """

    path: str
    symbol: str
    sentence: str
    mask: tuple[int, int, str]


def first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = _SENTENCE.match(flat)
    return (match.group(1) if match else flat).strip()


def _python_docstrings(source: bytes, root: Node) -> list[tuple[str, Node]]:
    """(symbol path, docstring node) of every Python function with a docstring."""
    found: list[tuple[str, Node]] = []
    stack: list[tuple[Node, str]] = [(root, "")]
    while stack:
        node, prefix = stack.pop()
        for child in node.named_children:
            target = child
            if child.type == "decorated_definition":
                inner = child.child_by_field_name("definition")
                target = inner if inner is not None else child
            if target.type in ("function_definition", "class_definition"):
                name_node = target.child_by_field_name("name")
                name = name_node.text.decode("utf-8", "replace") if name_node and name_node.text else ""
                path = f"{prefix}.{name}" if prefix else name
                body = target.child_by_field_name("body")
                if target.type == "function_definition" and body is not None and body.named_children:
                    first = body.named_children[0]
                    if first.type == "expression_statement" and first.named_children:
                        first = first.named_children[0]  # older grammars wrap the docstring in a statement
                    if first.type == "string":
                        found.append((path, first))
                if body is not None:
                    stack.append((body, path))
            elif child.type not in ("string", "comment"):
                stack.append((child, prefix))
    return found


def _comment_functions(text: str, spec: LanguageSpec) -> list[tuple[str, int, int]]:
    """(symbol path, first comment row, head row) of functions with a doc comment directly above them."""
    loaded = load_grammar(spec)
    if loaded is None:
        return []
    parser, cursor = loaded
    lines = text.split("\n")
    tree = parser.parse(text.encode("utf-8"))
    out: list[tuple[str, int, int]] = []

    def visit(definitions: list[Definition], prefix: str) -> None:
        for definition in definitions:
            path = f"{prefix}.{definition.name}" if prefix else definition.name
            if definition.kind in ("function", "method") and definition.start < definition.head:
                rows = [
                    r
                    for r in range(definition.start, definition.head)
                    if _COMMENT_MARKERS.match(lines[r]) and not lines[r].lstrip().startswith(("#[", "@"))
                ]
                if rows:
                    out.append((path, rows[0], rows[-1]))
            visit(definition.children, path)

    visit(find_definitions(tree.root_node, cursor, spec, lines), "")
    return out


def documented_functions(path: str, text: str) -> list[DocumentedFunction]:
    """Functions of one file whose docs can become a query, with what to mask."""
    spec = language_of(path, text)
    if spec is None or not spec.grammar:
        return []
    data = text.encode("utf-8")
    out: list[DocumentedFunction] = []
    if spec.name == "python":
        loaded = load_grammar(spec)
        if loaded is None:
            return []
        tree = loaded[0].parse(data)
        for symbol, node in _python_docstrings(data, tree.root_node):
            raw = node.text.decode("utf-8", "replace") if node.text else ""
            body = raw.strip("rRuUbBfF").strip("\"'")
            sentence = first_sentence(body)
            replacement = '""' + "\n" * raw.count("\n")
            out.append(DocumentedFunction(path, symbol, sentence, (node.start_byte, node.end_byte, replacement)))
        return out
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")) + 1)
    for symbol, first, last in _comment_functions(text, spec):
        comment = " ".join(_COMMENT_MARKERS.sub("", lines[r]).strip() for r in range(first, last + 1))
        sentence = first_sentence(comment.replace("*/", " "))
        start, end = offsets[first], offsets[last + 1] - 1
        out.append(DocumentedFunction(path, symbol, sentence, (start, end, "\n" * (last - first))))
    return out


__all__ = ["DocumentedFunction", "documented_functions", "first_sentence"]
