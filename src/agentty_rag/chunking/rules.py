"""Names and kinds of definitions in languages whose grammars do not state them plainly.

For most grammars a definition's node type says its kind and its ``name`` field says its name; the generic
rules in ``naming.py`` cover those. The languages here need more: a Zig ``Decl`` is a function or a struct by
what it holds, an Elixir definition is a ``call`` whose target is ``def`` or ``defmodule``, a Haskell instance
is named after the type it is for. Each describer returns ``(name, kind)`` for the nodes it knows and None
for the nodes it leaves to the generic rules. A kind of ``function`` becomes ``method`` inside a class.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable

from tree_sitter import Node

Described = tuple[str, str]


def node_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def first_child_of(node: Node, types: tuple[str, ...]) -> Node | None:
    return next((c for c in node.named_children if c.type in types), None)


def _first_named(node: Node | None) -> Node | None:
    return node.named_children[0] if node is not None and node.named_children else None


def _first_descendant(node: Node | None, types: tuple[str, ...]) -> Node | None:
    """The first node of one of ``types`` under ``node``, breadth first."""
    queue = list(node.named_children) if node is not None else []
    while queue:
        current = queue.pop(0)
        if current.type in types:
            return current
        queue.extend(current.named_children)
    return None


def _zig(node: Node) -> Described | None:
    """``Decl`` holds a function (``FnProto`` + ``Block``) or a constant whose value is a container."""
    if node.type != "Decl":
        return None
    prototype = first_child_of(node, ("FnProto",))
    if prototype is not None:
        return node_text(prototype.child_by_field_name("function")), "function"
    variable = first_child_of(node, ("VarDecl",))
    name = node_text(variable.child_by_field_name("variable_type_function") if variable else None)
    value = _first_descendant(variable, ("ContainerDecl", "ErrorSetDecl"))
    if value is not None and value.type == "ErrorSetDecl":
        return name, "enum"  # `error{ OutOfMemory, Invalid }`: a set of named values
    declared = first_child_of(value, ("ContainerDeclType",)) if value is not None else None
    keyword = declared.children[0].type if declared is not None and declared.children else ""
    return name, {"enum": "enum", "opaque": "type"}.get(keyword, "struct")


_ELIXIR_KINDS = {
    "defmodule": "module",
    "defprotocol": "interface",
    "defimpl": "impl",
    "def": "function",
    "defp": "function",
    "defdelegate": "function",
    "defmacro": "macro",
    "defmacrop": "macro",
    "defguard": "macro",
    "defguardp": "macro",
}
ELIXIR_DEFINERS = tuple(_ELIXIR_KINDS)


def _elixir_function_name(head: Node | None) -> str:
    """``call(conn, opts)``, ``call(conn) when ...``, or a bare ``name``; "" for operators and ``unquote``."""
    if (
        head is not None
        and head.type == "binary_operator"
        and node_text(head.child_by_field_name("operator")) == "when"
    ):
        head = head.child_by_field_name("left")
    if head is not None and head.type == "call":
        head = head.child_by_field_name("target")
    return node_text(head) if head is not None and head.type == "identifier" else ""


def _elixir_impl_target(arguments: Node) -> str:
    """The ``for:`` module of ``defimpl Proto, for: Type``; "" when absent or a list."""
    for pair in (p for k in arguments.named_children if k.type == "keywords" for p in k.named_children):
        if node_text(pair.child_by_field_name("key")).rstrip(": ") == "for":
            value = pair.child_by_field_name("value")
            return node_text(value) if value is not None and value.type == "alias" else ""
    return ""


def _elixir(node: Node) -> Described | None:
    """Definitions are calls: ``defmodule Phoenix.Router do``, ``def call(conn, opts) do``."""
    kind = _ELIXIR_KINDS.get(node_text(node.child_by_field_name("target"))) if node.type == "call" else None
    if kind is None:
        return None
    arguments = first_child_of(node, ("arguments",))
    head = _first_named(arguments)
    if kind not in ("module", "interface", "impl"):
        return _elixir_function_name(head), kind
    name = node_text(head) if head is not None and head.type == "alias" else ""
    target = _elixir_impl_target(arguments) if kind == "impl" and arguments is not None else ""
    # The module Elixir defines for `defimpl Proto, for: Type` is Proto.Type.
    return (f"{name}.{target}" if name and target else name), kind


_HASKELL_TYPES = ("data_type", "newtype", "type_synomym", "type_family", "data_family")


def _haskell(node: Node) -> Described | None:
    """Signatures and equations are functions; an instance is named after the type it is for."""
    kind = node.type
    if kind in ("function", "bind", "signature"):
        named = node.child_by_field_name("name") or _first_named(node.child_by_field_name("names"))
        # An operator (`(<+>) ::`, `a <+> b = ...`) has no name a symbol path can hold.
        return (node_text(named) if named is not None and named.type == "variable" else ""), "function"
    if kind == "class":
        return node_text(node.child_by_field_name("name")), "class"
    if kind == "instance":
        for_type = _first_descendant(node.child_by_field_name("patterns"), ("name",))
        return node_text(for_type or node.child_by_field_name("name")), "impl"
    if kind in _HASKELL_TYPES:
        return node_text(node.child_by_field_name("name")), "type"
    return None


def _erlang(node: Node) -> Described | None:
    """Each clause of a function is a ``fun_decl``; its ``-spec`` names it in ``fun``."""
    kind = node.type
    if kind == "fun_decl":
        clause = node.child_by_field_name("clause")
        return node_text(clause.child_by_field_name("name") if clause else None), "function"
    if kind == "spec":
        return node_text(node.child_by_field_name("fun")), "function"
    if kind == "record_decl":
        return node_text(node.child_by_field_name("name")), "struct"
    if kind in ("type_alias", "opaque"):
        type_name = node.child_by_field_name("name")
        return node_text(type_name.child_by_field_name("name") if type_name else None), "type"
    if kind == "pp_define":
        lhs = node.child_by_field_name("lhs")
        return node_text(lhs.child_by_field_name("name") if lhs else None), "macro"
    return None


def _perl(node: Node) -> Described | None:
    """``package Name { ... }`` holds subs; ``package Name;`` is a statement, not a container."""
    if node.type != "package_statement":
        return None
    has_block = first_child_of(node, ("block",)) is not None
    return (node_text(node.child_by_field_name("name")) if has_block else ""), "module"


def _r(node: Node) -> Described | None:
    """``name <- function(...)``: a function is a value bound to a name."""
    if node.type != "binary_operator":
        return None
    return node_text(node.child_by_field_name("lhs")), "function"


def _julia_callee(node: Node | None) -> str:
    """The function a signature or short-form head names: ``area(s)``, ``Base.show(io, x)::T where T``."""
    while node is not None and node.type in ("signature", "where_expression", "typed_expression"):
        node = _first_named(node)
    if node is not None and node.type == "call_expression":
        node = _first_named(node)
    return node_text(node) if node is not None and node.type in ("identifier", "field_expression") else ""


def _julia(node: Node) -> Described | None:
    """Functions in both forms and macros are named by their signature's callee; types by their head."""
    kind = node.type
    if kind in ("function_definition", "macro_definition"):
        signature = first_child_of(node, ("signature",))
        return _julia_callee(signature), "macro" if kind == "macro_definition" else "function"
    if kind == "assignment":  # the short form `f(x) = ...`
        return _julia_callee(_first_named(node)), "function"
    if kind in ("struct_definition", "abstract_definition", "primitive_definition"):
        named = _first_descendant(first_child_of(node, ("type_head",)), ("identifier",))
        return node_text(named), "struct" if kind == "struct_definition" else "type"
    return None


def _ocaml_value(node: Node) -> Described:
    """A top-level ``let``: a function when it takes parameters or is a ``fun``; a plain value is not named."""
    binding = first_child_of(node, ("let_binding",))
    pattern = binding.child_by_field_name("pattern") if binding is not None else None
    if binding is None or pattern is None or pattern.type != "value_name":
        return "", "function"
    body = binding.child_by_field_name("body")
    is_function = first_child_of(binding, ("parameter",)) is not None or (
        body is not None and body.type in ("fun_expression", "function_expression")
    )
    return (node_text(pattern) if is_function else ""), "function"


_OCAML_NAMED = {
    "module_definition": (("module_binding",), ("module_name",), "module"),
    "module_type_definition": ((), ("module_type_name",), "interface"),
    "class_definition": (("class_binding",), ("class_name",), "class"),
    "method_definition": ((), ("method_name",), "function"),
    "value_specification": ((), ("value_name",), "function"),
    "external": ((), ("value_name",), "function"),
    "type_definition": (("type_binding",), ("type_constructor",), "type"),
    "exception_definition": (("constructor_declaration",), ("constructor_name",), "type"),
}


def _ocaml(node: Node) -> Described | None:
    """Names sit in a binding child (``module_binding``, ``type_binding``) or directly under the node."""
    if node.type == "value_definition":
        return _ocaml_value(node)
    rule = _OCAML_NAMED.get(node.type)
    if rule is None:
        return None
    binding_types, name_types, kind = rule
    holder = first_child_of(node, binding_types) if binding_types else node
    named = None
    if holder is not None:
        named = holder.child_by_field_name("name") or first_child_of(holder, name_types)
    return node_text(named), kind


_DART_SIGNATURES = ("function_signature", "getter_signature", "setter_signature")


def _dart_member_name(signature: Node | None) -> str:
    """A method's name, ``Counter.named`` for a named constructor, ``operator+`` for an operator."""
    if signature is None:
        return ""
    if signature.type in _DART_SIGNATURES:
        return node_text(signature.child_by_field_name("name"))
    if signature.type == "operator_signature":
        operator = first_child_of(signature, ("binary_operator", "unary_operator", "operator"))
        return "operator" + node_text(operator).strip() if operator is not None else "operator"
    parts = [c for c in signature.named_children if c.type == "identifier"]
    return ".".join(node_text(part) for part in parts)


def _dart(node: Node) -> Described | None:
    """A function's signature and its ``function_body`` are siblings; the spec's ``trailing`` joins them."""
    kind = node.type
    if kind == "method_signature":
        return _dart_member_name(_first_named(node)), "function"
    if kind in _DART_SIGNATURES:
        return node_text(node.child_by_field_name("name")), "function"
    if kind == "mixin_declaration":
        return node_text(first_child_of(node, ("identifier",))), "class"
    if kind == "extension_declaration":
        return node_text(node.child_by_field_name("name") or node.child_by_field_name("class")), "impl"
    if kind == "type_alias":
        return node_text(first_child_of(node, ("type_identifier",))), "type"
    return None


_OBJC_CONTAINERS = {"class_interface": "class", "class_implementation": "impl", "protocol_declaration": "interface"}


def _objc(node: Node) -> Described | None:
    """Classes and methods; C's functions, structs and typedefs are left to the generic C rules."""
    kind = node.type
    if kind in _OBJC_CONTAINERS:
        named = first_child_of(node, ("identifier",))
        # A category (`@interface Queue (Extras)`) extends a class, as an impl does.
        extends = node.child_by_field_name("category") is not None
        return node_text(named), "impl" if extends else _OBJC_CONTAINERS[kind]
    if kind in ("method_definition", "method_declaration"):
        # The first part of the selector: `addTask` of `addTask:withPriority:`.
        return node_text(first_child_of(node, ("identifier",))), "function"
    return None


DESCRIBERS: dict[str, Callable[[Node], Described | None]] = {
    "zig": _zig,
    "elixir": _elixir,
    "haskell": _haskell,
    "erlang": _erlang,
    "perl": _perl,
    "r": _r,
    "julia": _julia,
    "ocaml": _ocaml,
    "ocaml_interface": _ocaml,
    "dart": _dart,
    "objc": _objc,
}


def describe(node: Node, language: str, quoted: bool = False) -> Described | None:
    """``(name, kind)`` of a definition node by its language's own rules; None to use the generic rules.

    ``quoted``: the node lies inside an Elixir ``quote`` block, code a macro injects into the caller's module,
    not a definition of this one (it keeps its kind and loses its name).
    """
    describer = DESCRIBERS.get(language)
    described = describer(node) if describer is not None else None
    return ("", described[1]) if described is not None and quoted else described


class Spans:
    """Byte spans of syntax nodes (``quote`` blocks), asked whether they hold a node: a binary search over
    the outermost spans, never a walk up the tree (``Node.parent`` costs the node's depth in tree-sitter, so
    walking up from every definition of a deeply nested file costs the cube of its depth)."""

    def __init__(self, nodes: Iterable[Node]) -> None:
        outermost: list[tuple[int, int]] = []
        for start, end in sorted((n.start_byte, n.end_byte) for n in nodes):
            if outermost and start < outermost[-1][1]:
                continue  # nested in the span before: syntax nodes nest or are apart
            outermost.append((start, end))
        self.starts = [start for start, _ in outermost]
        self.spans = outermost

    def hold(self, node: Node) -> bool:
        """Whether a span strictly encloses ``node``."""
        at = bisect.bisect_right(self.starts, node.start_byte) - 1
        if at < 0:
            return False
        start, end = self.spans[at]
        return node.end_byte <= end and (start, end) != (node.start_byte, node.end_byte)


__all__ = ["DESCRIBERS", "ELIXIR_DEFINERS", "Spans", "describe", "first_child_of", "node_text"]
