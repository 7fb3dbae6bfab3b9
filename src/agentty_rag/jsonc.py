"""Surgical edits of JSON and JSONC (comments, trailing commas) configuration files.

A client's configuration is the user's file: ``agentty-rag init`` must change only its own entry and keep
every other byte — other servers, hooks, comments, key order, indentation. So a file is parsed into nodes
that remember where they sit in the text, and an edit splices text at those places: inserting a member
is undone exactly by removing it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agentty_rag.errors import JsoncError


@dataclass
class Node:
    """A value and its place in the text: ``start``/``end`` span it; objects and arrays list their slots."""

    kind: str  # "object", "array" or "scalar"
    start: int
    end: int
    value: object
    slots: list[Slot] = field(default_factory=list)


@dataclass
class Slot:
    """A member of an object (``key`` set) or an item of an array.

    ``lead`` is the position just after the ``{``, ``[`` or ``,`` before it; ``comma`` the position of the
    comma after it (-1 when none).
    """

    key: str | None
    lead: int
    node: Node
    comma: int = -1


_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_WORDS = {"true": True, "false": False, "null": None}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> JsoncError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return JsoncError(f"{message} at line {line}, column {column}")

    def skip(self) -> None:
        """Skip whitespace and comments."""
        text = self.text
        while self.pos < len(text):
            if text[self.pos] in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline + 1
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise self.fail("unclosed comment")
                self.pos = close + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("a value is missing")
        char = self.text[self.pos]
        if char == "{":
            return self.container("object", "}")
        if char == "[":
            return self.container("array", "]")
        start = self.pos
        if char == '"':
            return Node("scalar", start, self.string_end(), json.loads(self.text[start : self.pos]))
        for word, meaning in _WORDS.items():
            if self.text.startswith(word, start):
                self.pos += len(word)
                return Node("scalar", start, self.pos, meaning)
        match = _NUMBER.match(self.text, start)
        if match is None:
            raise self.fail(f"unexpected {char!r}")
        self.pos = match.end()
        return Node("scalar", start, self.pos, json.loads(match.group()))

    def string_end(self) -> int:
        text, pos = self.text, self.pos + 1
        while pos < len(text):
            if text[pos] == "\\":
                pos += 2
            elif text[pos] == '"':
                self.pos = pos + 1
                return self.pos
            elif text[pos] == "\n":
                break
            else:
                pos += 1
        raise self.fail("unterminated string")

    def container(self, kind: str, close: str) -> Node:
        node = Node(kind, self.pos, -1, {} if kind == "object" else [])
        self.pos += 1
        while True:
            lead = self.pos
            self.skip()
            if self.text.startswith(close, self.pos):
                self.pos += 1
                node.end = self.pos
                node.value = {s.key: s.node.value for s in node.slots} if kind == "object" else node.value
                if kind == "array":
                    node.value = [s.node.value for s in node.slots]
                return node
            if node.slots and node.slots[-1].comma < 0:
                raise self.fail(f"expected ',' or '{close}'")
            key = None
            if kind == "object":
                if not self.text.startswith('"', self.pos):
                    raise self.fail("expected a quoted key")
                start = self.pos
                key = json.loads(self.text[start : self.string_end()])
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise self.fail("expected ':'")
                self.pos += 1
            slot = Slot(key, lead, self.value())
            node.slots.append(slot)
            self.skip()
            if self.text.startswith(",", self.pos):
                slot.comma = self.pos
                self.pos += 1


def parse(text: str) -> Node:
    """Parse JSON or JSONC; raises ``JsoncError`` with the line and column of the first problem."""
    parser = _Parser(text)
    node = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the value")
    return node


def _indent_unit(text: str) -> str:
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[start:]).group()  # type: ignore[union-attr]


def _dumps(value: object, unit: str) -> str:
    """JSON with one member per line, and lists of plain values (``["serve"]``) kept on one line."""
    if isinstance(value, dict) and value:
        members = [f"{json.dumps(k)}: {_dumps(v, unit)}" for k, v in value.items()]
        return "{\n" + ",\n".join(unit + m.replace("\n", "\n" + unit) for m in members) + "\n}"
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        items = [_dumps(v, unit) for v in value]
        return "[\n" + ",\n".join(unit + i.replace("\n", "\n" + unit) for i in items) + "\n]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _render(value: object, indent: str, unit: str) -> str:
    """``value`` as JSON laid out like the file: nested lines indented from ``indent`` by ``unit``."""
    return _dumps(value, unit).replace("\n", "\n" + indent)


def _child(node: Node, key: str) -> Slot | None:
    return next((s for s in node.slots if s.key == key), None)


def _one_line(text: str, node: Node) -> bool:
    return "\n" not in text[node.start : node.end]


def _insert_first(text: str, node: Node, piece: str) -> str:
    """Insert ``piece`` (a member ``"k": v`` or an item) as the first slot of ``node``."""
    unit = _indent_unit(text)
    outer = _line_indent(text, node.start)
    inner = outer + unit
    body = piece.replace("\n", "\n" + inner)
    after_open = node.start + 1
    if not node.slots:
        between = text[after_open : node.end - 1]
        if between.strip():  # only comments: keep them after our slot
            return text[:after_open] + f"\n{inner}{body}," + text[after_open:]
        if _one_line(text, node) and node.start != 0 and "\n" not in piece:
            return text[:after_open] + piece + text[node.end - 1 :]
        return text[:after_open] + f"\n{inner}{body}\n{outer}" + text[node.end - 1 :]
    if _one_line(text, node):
        return text[:after_open] + re.sub(r"\n\s*", " ", piece) + ", " + text[after_open:].lstrip(" ")
    return text[:after_open] + f"\n{inner}{body}," + text[after_open:]


def _remove_slot(text: str, node: Node, index: int) -> str:
    slot = node.slots[index]
    if len(node.slots) == 1:
        end = node.end - 1
        kept = text[slot.node.end : end]
        if slot.comma >= 0:
            kept = text[slot.comma + 1 : end]
        return text[: node.start + 1] + ("" if not kept.strip() else kept) + text[end:]
    if index < len(node.slots) - 1:
        return text[: slot.lead] + text[node.slots[index + 1].lead :]
    previous = node.slots[index - 1]
    return text[: previous.comma] + text[slot.node.end :]


def _path(root: Node, keys: tuple[str, ...]) -> list[Node] | None:
    """The nodes from the root down through ``keys`` (None when a key is missing or not an object)."""
    nodes = [root]
    for key in keys:
        slot = _child(nodes[-1], key)
        if slot is None or nodes[-1].kind != "object":
            return None
        nodes.append(slot.node)
    return nodes


def _nest(keys: tuple[str, ...], leaf: object) -> object:
    for key in reversed(keys):
        leaf = {key: leaf}
    return leaf


def set_member(text: str, keys: tuple[str, ...], key: str, value: object) -> str:
    """Set ``key`` to ``value`` in the object at ``keys`` (created when missing), keeping all other text."""
    text = text if text.strip() else "{}\n"
    root = parse(text)
    if root.kind != "object":
        raise JsoncError("the file's top level is not an object")
    node = root
    for depth, name in enumerate(keys):
        slot = _child(node, name)
        if slot is None:
            piece = json.dumps(name) + ": " + _dumps(_nest((*keys[depth + 1 :], key), value), _indent_unit(text))
            return _insert_first(text, node, piece)
        if slot.node.kind != "object":
            raise JsoncError(f"{'.'.join(keys[: depth + 1])} is not an object")
        node = slot.node
    existing = _child(node, key)
    unit = _indent_unit(text)
    if existing is None:
        return _insert_first(text, node, json.dumps(key) + ": " + _render(value, "", unit))
    indent = _line_indent(text, existing.node.start)
    return text[: existing.node.start] + _render(value, indent, unit) + text[existing.node.end :]


def is_plain(text: str) -> bool:
    """Whether ``text`` is plain JSON (no comments, no trailing commas), as every JSON reader accepts it."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def get(text: str, keys: tuple[str, ...]) -> object:
    """The value at ``keys`` (None when missing)."""
    nodes = _path(parse(text), keys)
    return nodes[-1].value if nodes is not None else None


def remove_member(text: str, keys: tuple[str, ...], key: str) -> str:
    """Remove ``key`` from the object at ``keys``; containers it leaves empty are removed too."""
    nodes = _path(parse(text), keys)
    if nodes is None or nodes[-1].kind != "object":
        return text
    index = next((i for i, s in enumerate(nodes[-1].slots) if s.key == key), None)
    if index is None:
        return text
    text = _remove_slot(text, nodes[-1], index)
    return _prune(text, keys)


def insert_item(text: str, keys: tuple[str, ...], item: object) -> str:
    """Insert ``item`` first in the array at ``keys`` (the array and its parents are created when missing)."""
    text = text if text.strip() else "{}\n"
    nodes = _path(parse(text), keys)
    if nodes is None:
        return set_member(text, keys[:-1], keys[-1], [item])
    array = nodes[-1]
    if array.kind != "array":
        raise JsoncError(f"{'.'.join(keys)} is not a list")
    return _insert_first(text, array, _render(item, "", _indent_unit(text)))


def remove_items(text: str, keys: tuple[str, ...], ours: Callable[[object], bool]) -> str:
    """Remove the items of the array at ``keys`` that ``ours`` recognises; empty containers go too."""
    while True:
        nodes = _path(parse(text), keys)
        if nodes is None or nodes[-1].kind != "array":
            return text
        index = next((i for i, s in enumerate(nodes[-1].slots) if ours(s.node.value)), None)
        if index is None:
            return _prune(text, keys)
        text = _remove_slot(text, nodes[-1], index)


def _prune(text: str, keys: tuple[str, ...]) -> str:
    """Remove the deepest containers along ``keys`` that are empty, from the bottom up."""
    for depth in range(len(keys), 0, -1):
        nodes = _path(parse(text), keys[:depth])
        if nodes is None or nodes[-1].slots or text[nodes[-1].start + 1 : nodes[-1].end - 1].strip():
            return text
        parent = nodes[-2]
        index = next(i for i, s in enumerate(parent.slots) if s.key == keys[depth - 1])
        text = _remove_slot(text, parent, index)
    return text


def is_empty(text: str) -> bool:
    """Whether the file holds nothing but an empty object (no member, no comment)."""
    try:
        root = parse(text)
    except JsoncError:
        return False
    return root.kind == "object" and not root.slots and not text[root.start + 1 : root.end - 1].strip()


__all__ = [
    "JsoncError",
    "get",
    "insert_item",
    "is_empty",
    "is_plain",
    "parse",
    "remove_items",
    "remove_member",
    "set_member",
]
