"""The name and kind of a definition node: the language's own rules first (``rules.py``), then the generic ones.

Generically a node's ``name`` field is its name and its type says its kind (``class_declaration``: a class).
The node types below name themselves another way: a Go method after its receiver, a C function in its
declarator, ``const f = () => {}`` in its variable. Names are normalised to dotted form (``Pool::submit``
becomes ``Pool.submit``).
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from agentty_rag.chunking.language_spec import LanguageSpec
from agentty_rag.chunking.rules import describe, first_child_of
from agentty_rag.chunking.rules import node_text as _text


def _normalise(name: str) -> str:
    name = name.split("<", 1)[0].split("(", 1)[0].strip()
    for separator in ("::", "\\", ":", "->"):
        name = name.replace(separator, ".")
    return ".".join(part for part in name.split(".") if part.strip()).replace(" ", "")


_C_FAMILY = ("c", "cpp", "objc")
_C_KEYWORDS = frozenset({"namespace", "template", "class", "struct", "union", "enum", "typename", "using"})


def _misparsed_c_name(name: str) -> bool:
    """A macro the grammar cannot expand (``FMT_BEGIN_NAMESPACE namespace detail {``) reads as a function whose
    name is a keyword or several words; such a node is not a definition, though the ones inside it are."""
    words = name.split()
    if len(words) == 1:
        return words[0] in _C_KEYWORDS
    return not any(word.endswith("operator") for word in words[:-1])  # `operator bool` is one name


def _c_declarator_name(node: Node) -> str:
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        inner = declarator.child_by_field_name("declarator")
        if inner is None:
            break
        declarator = inner
    if declarator is not None and declarator.type == "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return _text(declarator)


# Each takes a node of its type and the language's name; None leaves the node to the ``name`` field.
_Namer = Callable[[Node, str], str | None]


def _go_method(node: Node, language: str) -> str | None:
    """``func (p *Pool) Submit()`` is ``Pool.Submit``."""
    if language != "go":
        return None
    receiver = node.child_by_field_name("receiver")
    type_node = None
    if receiver is not None:
        stack = [receiver]
        while stack and type_node is None:
            current = stack.pop(0)
            if current.type == "type_identifier":
                type_node = current
            stack.extend(current.named_children)
    name = _text(node.child_by_field_name("name"))
    return _normalise(f"{_text(type_node)}.{name}" if type_node is not None else name)


def _type_declaration(node: Node, language: str) -> str:
    spec_node = first_child_of(node, ("type_spec", "type_alias"))
    return _normalise(_text(spec_node.child_by_field_name("name") if spec_node else None))


def _impl(node: Node, language: str) -> str:
    return _normalise(_text(node.child_by_field_name("type")))


def _c_function(node: Node, language: str) -> str | None:
    if language not in _C_FAMILY:
        return None
    name = _c_declarator_name(node)
    return "" if _misparsed_c_name(name) else _normalise(name)


def _c_type(node: Node, language: str) -> str | None:
    return _normalise(_text(node.child_by_field_name("declarator"))) if language in _C_FAMILY else None


def _lexical_declaration(node: Node, language: str) -> str | None:
    """``const f = () => {}`` is ``f``."""
    if language == "lua":
        return None
    declarator = first_child_of(node, ("variable_declarator",))
    return _normalise(_text(declarator.child_by_field_name("name") if declarator else None))


def _variable_declaration(node: Node, language: str) -> str | None:
    """JavaScript's ``var f = function () {}``, or Lua's ``local f = function () end``."""
    if language != "lua":
        return _lexical_declaration(node, language)
    return _assignment_statement(first_child_of(node, ("assignment_statement",)), language)


def _assignment_statement(node: Node | None, language: str) -> str:
    """Lua's ``M.f = function () end`` is ``M.f``."""
    return _normalise(_text(first_child_of(node, ("variable_list",)) if node else None))


def _expression_statement(node: Node, language: str) -> str:
    """``module.exports.f = function () {}`` and ``Pool.prototype.submit = ...`` are ``f`` and ``Pool.submit``."""
    assignment = first_child_of(node, ("assignment_expression",))
    left = _text(assignment.child_by_field_name("left") if assignment else None)
    for prefix in ("module.exports.", "exports.", "this."):
        left = left.removeprefix(prefix)
    return _normalise(left.replace(".prototype.", "."))


def _namespace(node: Node, language: str) -> str | None:
    return "" if node.child_by_field_name("body") is None else None  # PHP's `namespace A\B;`: not a container


def _companion_object(node: Node, language: str) -> str:
    named = first_child_of(node, ("type_identifier", "simple_identifier"))
    return _text(named) or "Companion"


_NAMERS: dict[str, _Namer] = {
    "method_declaration": _go_method,
    "type_declaration": _type_declaration,
    "impl_item": _impl,
    "function_definition": _c_function,
    "type_definition": _c_type,
    "lexical_declaration": _lexical_declaration,
    "variable_declaration": _variable_declaration,
    "expression_statement": _expression_statement,
    "assignment_statement": _assignment_statement,
    "namespace_definition": _namespace,
    "companion_object": _companion_object,
    "singleton_class": lambda node, language: "self",
}
_ANONYMOUS = ("struct_specifier", "union_specifier", "enum_specifier", "class_specifier")


def definition_name(node: Node, spec: LanguageSpec, quoted: bool = False) -> str:
    """The name a definition node declares, normalised to dotted form; "" when it has none (or is quoted)."""
    described = describe(node, spec.name, quoted)
    if described is not None:
        return _normalise(described[0])
    namer = _NAMERS.get(node.type)
    name = namer(node, spec.name) if namer is not None else None
    if name is not None:
        return name
    named = node.child_by_field_name("name")
    if named is None and spec.name == "kotlin":
        named = first_child_of(node, ("type_identifier", "simple_identifier"))
    if named is None and node.type in _ANONYMOUS:
        return ""
    return _normalise(_text(named))


_KIND_WORDS = (
    ("namespace", "namespace"),
    ("internal_module", "namespace"),
    ("mod_item", "module"),
    ("module", "module"),
    ("impl", "impl"),
    ("interface", "interface"),
    ("protocol", "interface"),
    ("trait", "interface"),
    ("enum", "enum"),
    ("struct", "struct"),
    ("union", "struct"),
    ("macro", "macro"),
    ("type", "type"),
)
_FUNCTION_VALUES = ("lexical_declaration", "variable_declaration", "expression_statement", "assignment_statement")


def definition_kind(node: Node, spec: LanguageSpec, inside_class: bool, quoted: bool = False) -> str:
    """``function``, ``method``, ``class``, ``struct``, ``interface`` ...: what a definition node declares."""
    described = describe(node, spec.name, quoted)
    if described is not None:
        return "method" if described[1] == "function" and inside_class else described[1]
    kind = node.type
    if kind == "class_declaration" and spec.name == "swift":
        declared = _text(node.child_by_field_name("declaration_kind"))
        return {"struct": "struct", "enum": "enum", "extension": "impl", "protocol": "interface"}.get(declared, "class")
    if kind in spec.functions or kind in _FUNCTION_VALUES:
        return "method" if inside_class or kind == "method_declaration" and spec.name == "go" else "function"
    return next((label for word, label in _KIND_WORDS if word in kind), "class")


__all__ = ["definition_kind", "definition_name"]
