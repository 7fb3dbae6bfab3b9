"""What the code chunker knows about each language: its grammar, and which nodes are definitions.

A language with a ``grammar`` is split around its definitions with tree-sitter; one without (or whose file
fails to parse) is cut into line windows that end on blank lines. Which language a file is in is the
source's knowledge (``sources/languages.py``); a language named there and not here has no grammar.
"""

from __future__ import annotations

from dataclasses import replace

from agentty_rag.chunking.language_spec import LanguageSpec

# language_names and resolve_language are the source's; request.py looks them up here.
from agentty_rag.sources.languages import file_language, is_language, language_names, resolve_language

_JS_FUNCTION_VALUES = "[(arrow_function) (function_expression) (generator_function)]"
_JS_EXTRA = (
    f"(lexical_declaration (variable_declarator name: (identifier) value: {_JS_FUNCTION_VALUES})) @def",
    f"(variable_declaration (variable_declarator name: (identifier) value: {_JS_FUNCTION_VALUES})) @def",
    f"(expression_statement (assignment_expression left: (member_expression) right: {_JS_FUNCTION_VALUES})) @def",
)
_JAVASCRIPT = LanguageSpec(
    "javascript",
    "javascript",
    containers=("class_declaration", "class"),
    functions=("function_declaration", "generator_function_declaration", "method_definition"),
    wrappers=("export_statement",),
    prefixes=("comment", "decorator"),
    extra_patterns=_JS_EXTRA,
)
_TYPESCRIPT = replace(
    _JAVASCRIPT,
    name="typescript",
    grammar="typescript",
    containers=(
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "internal_module",
        "module",
    ),
    functions=("function_declaration", "generator_function_declaration", "method_definition", "function_signature"),
    others=("type_alias_declaration", "enum_declaration"),
)
_TSX = replace(_TYPESCRIPT, name="tsx", grammar="tsx")

_ZIG = LanguageSpec(
    "zig",
    "zig",
    prefixes=("doc_comment", "line_comment"),
    extra_patterns=(
        # A function with a body (an `extern fn` prototype is a declaration only), and a constant bound to a
        # struct, enum, union, opaque or error set: `pub const Point = struct { ... };`.
        "(Decl (FnProto) (Block)) @def",
        "(Decl (VarDecl (ErrorUnionExpr (SuffixExpr [(ContainerDecl) (ErrorSetDecl)])))) @def",
    ),
)
# Elixir's definitions are macro calls; rules.py names them and gives their kinds.
_ELIXIR_DEFINITION = "^(defmodule|defprotocol|defimpl|def|defp|defdelegate|defmacro|defmacrop|defguard|defguardp)$"
_ELIXIR = LanguageSpec(
    "elixir",
    "elixir",
    # `@doc`, `@spec` and `@impl` are unary `@` operators just above a definition.
    prefixes=("comment", "unary_operator"),
    extra_patterns=(
        f'((call target: (identifier) @_keyword) @def (#match? @_keyword "{_ELIXIR_DEFINITION}"))',
        # a `quote` block: the definitions in it are code a macro injects, found once per file (see rules.py)
        '((call target: (identifier) @_quote) @quote (#eq? @_quote "quote"))',
    ),
    clauses=True,
)
_HASKELL_FUNCTIONS = ("function", "bind", "signature")
_HASKELL = LanguageSpec(
    "haskell",
    "haskell",
    containers=("class", "instance"),
    others=("data_type", "newtype", "type_synomym", "type_family", "data_family"),
    prefixes=("comment", "haddock"),
    # Equations and signatures of the module and of classes and instances, not the local ones of `where`/`let`.
    extra_patterns=tuple(
        f"({body} ({function}) @def)"
        for body in ("declarations", "class_declarations", "instance_declarations")
        for function in _HASKELL_FUNCTIONS
    ),
    clauses=True,
)
_ERLANG = LanguageSpec(
    "erlang",
    "erlang",
    functions=("fun_decl", "spec"),
    others=("record_decl", "type_alias", "opaque", "pp_define"),
    clauses=True,
)
_OCAML = LanguageSpec(
    "ocaml",
    "ocaml",
    containers=("module_definition", "module_type_definition", "class_definition"),
    functions=("method_definition", "value_specification", "external"),
    others=("type_definition", "exception_definition"),
    # Top-level and module-level `let`, not the `let ... in` inside expressions.
    extra_patterns=("(compilation_unit (value_definition) @def)", "(structure (value_definition) @def)"),
)
_OCAML_INTERFACE = replace(_OCAML, name="ocaml_interface", grammar="ocaml_interface")
_JULIA = LanguageSpec(
    "julia",
    "julia",
    containers=("module_definition",),
    functions=("function_definition", "macro_definition"),
    others=("struct_definition", "abstract_definition", "primitive_definition"),
    # `@inline function f ... end` and `Base.@kwdef struct ...`.
    wrappers=("macro_argument_list", "macrocall_expression"),
    # A docstring is a string literal directly above the definition.
    prefixes=("line_comment", "block_comment", "string_literal"),
    extra_patterns=(
        "(assignment . (call_expression)) @def",
        "(assignment . (where_expression . (call_expression))) @def",
    ),
)
_R = LanguageSpec("r", "r", extra_patterns=("(binary_operator lhs: (identifier) rhs: (function_definition)) @def",))
_PERL = LanguageSpec(
    "perl",
    "perl",
    containers=("package_statement",),
    functions=("subroutine_declaration_statement",),
    prefixes=("comment", "pod"),
)
_DART = LanguageSpec(
    "dart",
    "dart",
    containers=("class_definition", "mixin_declaration", "extension_declaration", "enum_declaration"),
    functions=("method_signature",),
    others=("type_alias",),
    prefixes=("comment", "documentation_comment", "annotation"),
    extra_patterns=tuple(
        f"(program ({signature}) @def)" for signature in ("function_signature", "getter_signature", "setter_signature")
    ),
    trailing=("function_body",),
)
_OBJC = LanguageSpec(
    "objc",
    "objc",
    macros="c",
    containers=("class_interface", "class_implementation", "protocol_declaration"),
    functions=("method_definition", "method_declaration", "function_definition"),
    others=("type_definition",),
    wrappers=("implementation_definition",),
    extra_patterns=(
        "(struct_specifier body: (_)) @def",
        "(union_specifier body: (_)) @def",
        "(enum_specifier body: (_)) @def",
    ),
)

# The languages with a tree-sitter grammar and definition rules.
GRAMMARS: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "python",
        "python",
        containers=("class_definition",),
        functions=("function_definition",),
        wrappers=("decorated_definition",),
    ),
    _JAVASCRIPT,
    _TYPESCRIPT,
    _TSX,
    LanguageSpec("go", "go", functions=("function_declaration", "method_declaration"), others=("type_declaration",)),
    LanguageSpec(
        "rust",
        "rust",
        containers=("impl_item", "trait_item", "mod_item"),
        functions=("function_item",),
        others=("struct_item", "enum_item", "union_item", "macro_definition", "type_item"),
        prefixes=("line_comment", "block_comment", "attribute_item"),
    ),
    LanguageSpec(
        "java",
        "java",
        containers=(
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "annotation_type_declaration",
        ),
        functions=("method_declaration", "constructor_declaration"),
        prefixes=("line_comment", "block_comment"),
    ),
    LanguageSpec(
        "c",
        "c",
        macros="c",
        functions=("function_definition",),
        others=("type_definition",),
        extra_patterns=(
            "(struct_specifier body: (_)) @def",
            "(union_specifier body: (_)) @def",
            "(enum_specifier body: (_)) @def",
        ),
    ),
    LanguageSpec(
        "cpp",
        "cpp",
        macros="cpp",
        containers=("namespace_definition",),
        functions=("function_definition",),
        others=("type_definition", "alias_declaration"),
        wrappers=("template_declaration",),
        extra_patterns=(
            "(class_specifier body: (_)) @def",
            "(struct_specifier body: (_)) @def",
            "(union_specifier body: (_)) @def",
            "(enum_specifier body: (_)) @def",
        ),
    ),
    LanguageSpec(
        "csharp",
        "csharp",
        containers=(
            "namespace_declaration",
            "class_declaration",
            "interface_declaration",
            "struct_declaration",
            "record_declaration",
        ),
        functions=(
            "method_declaration",
            "constructor_declaration",
            "destructor_declaration",
            "operator_declaration",
            "local_function_statement",
        ),
        others=("enum_declaration", "delegate_declaration"),
    ),
    LanguageSpec(
        "ruby", "ruby", containers=("class", "module", "singleton_class"), functions=("method", "singleton_method")
    ),
    LanguageSpec(
        "php",
        "php",
        containers=(
            "class_declaration",
            "interface_declaration",
            "trait_declaration",
            "enum_declaration",
            "namespace_definition",
        ),
        functions=("function_definition", "method_declaration"),
        prefixes=("comment", "attribute_list"),
    ),
    LanguageSpec(
        "kotlin",
        "kotlin",
        containers=("class_declaration", "object_declaration", "companion_object"),
        functions=("function_declaration", "secondary_constructor"),
        others=("type_alias",),
        prefixes=("line_comment", "multiline_comment", "comment"),
    ),
    LanguageSpec(
        "swift",
        "swift",
        containers=("class_declaration", "protocol_declaration"),
        functions=("function_declaration", "init_declaration", "deinit_declaration", "protocol_function_declaration"),
        others=("typealias_declaration",),
        prefixes=("comment", "multiline_comment"),
    ),
    LanguageSpec(
        "scala",
        "scala",
        containers=("object_definition", "class_definition", "trait_definition", "enum_definition"),
        functions=("function_definition", "function_declaration"),
        others=("type_definition",),
        prefixes=("comment", "block_comment"),
    ),
    LanguageSpec(
        "lua",
        "lua",
        functions=("function_declaration",),
        extra_patterns=(
            "(assignment_statement (expression_list (function_definition))) @def",
            "(variable_declaration (assignment_statement (expression_list (function_definition)))) @def",
        ),
    ),
    LanguageSpec("bash", "bash", functions=("function_definition",)),
    _ZIG,
    _ELIXIR,
    _HASKELL,
    _ERLANG,
    _OCAML,
    _OCAML_INTERFACE,
    _JULIA,
    _R,
    _PERL,
    _DART,
    _OBJC,
)

_BY_NAME = {spec.name: spec for spec in GRAMMARS}


def spec_named(name: str) -> LanguageSpec:
    """The chunker's rules for a language; a known language without a grammar gets none (line windows).

    Raises:
        KeyError: ``name`` is not a language at all.
    """
    spec = _BY_NAME.get(name)
    if spec is not None:
        return spec
    if not is_language(name):
        raise KeyError(name)
    return LanguageSpec(name)


def language_for(filename: str) -> LanguageSpec | None:
    """The rules for a file by its name or extension; None when the code source does not index it."""
    name = file_language(filename)
    return spec_named(name) if name is not None else None


def language_of(filename: str, text: str) -> LanguageSpec | None:
    """The rules for a file by its name, and by its text where the name is ambiguous (``.h``: C, C++ or
    Objective-C); None when the code source does not index it."""
    name = file_language(filename, text)
    return spec_named(name) if name is not None else None


__all__ = [
    "GRAMMARS",
    "LanguageSpec",
    "language_for",
    "language_names",
    "language_of",
    "resolve_language",
    "spec_named",
]
