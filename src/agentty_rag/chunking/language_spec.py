"""The shape of a language's chunking rules: which syntax nodes are definitions and what belongs to them.

``languages.py`` holds each language's rules.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LanguageSpec:
    """The chunking rules of one language.

    Args:
        name: our name (as ``sources/languages.py`` gives it).
        grammar: the tree-sitter-language-pack name, or "" for line windows only.
        containers: node types that hold member definitions (classes, modules, namespaces, impls).
        functions: node types of functions and methods.
        others: other definitions that stand alone (type aliases, enums, macros, typedefs).
        wrappers: nodes that wrap a definition and belong to its chunk (decorators, export, template).
        prefixes: sibling nodes directly above a definition that belong to it (doc comments, attributes).
        extra_patterns: further tree-sitter query patterns capturing ``@def`` (e.g. ``const f = () => {}``).
        trailing: a sibling node directly after a definition that belongs to it (Dart's ``function_body``).
        clauses: consecutive definitions of one name are one definition (Haskell's signature and equations,
            the clauses of an Erlang or Elixir function).
        macros: the parser reads the file with its qualifier macros blanked (``macros.blank_macros``): "c"
            for C's rules, "cpp" for C++'s (a macro before a constructor's name too); "" for none.
    """

    name: str
    grammar: str = ""
    containers: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ("comment",)
    extra_patterns: tuple[str, ...] = ()
    trailing: tuple[str, ...] = ()
    clauses: bool = False
    macros: str = ""


__all__ = ["LanguageSpec"]
