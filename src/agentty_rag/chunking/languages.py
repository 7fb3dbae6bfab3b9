"""What the code chunker knows about each language: file names, grammar, and which nodes are definitions.

A language with a ``grammar`` is split around its definitions with tree-sitter; one without (or whose file
fails to parse) is cut into line windows that end on blank lines.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agentty_rag.chunking.headers import header_language


@dataclass(frozen=True)
class LanguageSpec:
    """One language.

    Args:
        name: our name (what ``search_code(language=...)`` takes).
        extensions: file suffixes, lower case, with the dot.
        grammar: the tree-sitter-language-pack name, or "" for line windows only.
        containers: node types that hold member definitions (classes, modules, namespaces, impls).
        functions: node types of functions and methods.
        others: other definitions that stand alone (type aliases, enums, macros, typedefs).
        wrappers: nodes that wrap a definition and belong to its chunk (decorators, export, template).
        prefixes: sibling nodes directly above a definition that belong to it (doc comments, attributes).
        extra_patterns: further tree-sitter query patterns capturing ``@def`` (e.g. ``const f = () => {}``).
        filenames: exact file names (``Makefile``) in this language.
        trailing: a sibling node directly after a definition that belongs to it (Dart's ``function_body``).
        clauses: consecutive definitions of one name are one definition (Haskell's signature and equations,
            the clauses of an Erlang or Elixir function).
    """

    name: str
    extensions: tuple[str, ...]
    grammar: str = ""
    containers: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    others: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ("comment",)
    extra_patterns: tuple[str, ...] = ()
    filenames: tuple[str, ...] = ()
    trailing: tuple[str, ...] = ()
    clauses: bool = False


_JS_FUNCTION_VALUES = "[(arrow_function) (function_expression) (generator_function)]"
_JS_EXTRA = (
    f"(lexical_declaration (variable_declarator name: (identifier) value: {_JS_FUNCTION_VALUES})) @def",
    f"(variable_declaration (variable_declarator name: (identifier) value: {_JS_FUNCTION_VALUES})) @def",
    f"(expression_statement (assignment_expression left: (member_expression) right: {_JS_FUNCTION_VALUES})) @def",
)
_JAVASCRIPT = LanguageSpec(
    "javascript",
    (".js", ".mjs", ".cjs", ".jsx"),
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
    extensions=(".ts", ".mts", ".cts"),
    grammar="typescript",
    containers=(
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "internal_module",
        "module",
    ),
    functions=(
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        "function_signature",
    ),
    others=("type_alias_declaration", "enum_declaration"),
)
_TSX = replace(_TYPESCRIPT, name="tsx", extensions=(".tsx",), grammar="tsx")

_ZIG = LanguageSpec(
    "zig",
    (".zig",),
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
    (".ex", ".exs"),
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
    (".hs",),
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
    (".erl", ".hrl"),
    "erlang",
    functions=("fun_decl", "spec"),
    others=("record_decl", "type_alias", "opaque", "pp_define"),
    clauses=True,
)
_OCAML = LanguageSpec(
    "ocaml",
    (".ml",),
    "ocaml",
    containers=("module_definition", "module_type_definition", "class_definition"),
    functions=("method_definition", "value_specification", "external"),
    others=("type_definition", "exception_definition"),
    # Top-level and module-level `let`, not the `let ... in` inside expressions.
    extra_patterns=("(compilation_unit (value_definition) @def)", "(structure (value_definition) @def)"),
)
_OCAML_INTERFACE = replace(_OCAML, name="ocaml_interface", extensions=(".mli",), grammar="ocaml_interface")
_JULIA = LanguageSpec(
    "julia",
    (".jl",),
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
_R = LanguageSpec(
    "r",
    (".r",),
    "r",
    extra_patterns=("(binary_operator lhs: (identifier) rhs: (function_definition)) @def",),
)
_PERL = LanguageSpec(
    "perl",
    (".pl", ".pm"),
    "perl",
    containers=("package_statement",),
    functions=("subroutine_declaration_statement",),
    prefixes=("comment", "pod"),
)
_DART = LanguageSpec(
    "dart",
    (".dart",),
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
    (".m", ".mm"),
    "objc",
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

LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "python",
        (".py", ".pyi", ".pyw"),
        "python",
        containers=("class_definition",),
        functions=("function_definition",),
        wrappers=("decorated_definition",),
    ),
    _JAVASCRIPT,
    _TYPESCRIPT,
    _TSX,
    LanguageSpec(
        "go",
        (".go",),
        "go",
        functions=("function_declaration", "method_declaration"),
        others=("type_declaration",),
    ),
    LanguageSpec(
        "rust",
        (".rs",),
        "rust",
        containers=("impl_item", "trait_item", "mod_item"),
        functions=("function_item",),
        others=("struct_item", "enum_item", "union_item", "macro_definition", "type_item"),
        prefixes=("line_comment", "block_comment", "attribute_item"),
    ),
    LanguageSpec(
        "java",
        (".java",),
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
        (".c", ".h"),
        "c",
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
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp"),
        "cpp",
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
        (".cs",),
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
        "ruby",
        (".rb", ".rake", ".gemspec", ".ru"),
        "ruby",
        containers=("class", "module", "singleton_class"),
        functions=("method", "singleton_method"),
        filenames=("Rakefile", "Gemfile", "Guardfile"),
    ),
    LanguageSpec(
        "php",
        (".php", ".phtml"),
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
        (".kt", ".kts"),
        "kotlin",
        containers=("class_declaration", "object_declaration", "companion_object"),
        functions=("function_declaration", "secondary_constructor"),
        others=("type_alias",),
        prefixes=("line_comment", "multiline_comment", "comment"),
    ),
    LanguageSpec(
        "swift",
        (".swift",),
        "swift",
        containers=("class_declaration", "protocol_declaration"),
        functions=(
            "function_declaration",
            "init_declaration",
            "deinit_declaration",
            "protocol_function_declaration",
        ),
        others=("typealias_declaration",),
        prefixes=("comment", "multiline_comment"),
    ),
    LanguageSpec(
        "scala",
        (".scala", ".sc"),
        "scala",
        containers=("object_definition", "class_definition", "trait_definition", "enum_definition"),
        functions=("function_definition", "function_declaration"),
        others=("type_definition",),
        prefixes=("comment", "block_comment"),
    ),
    LanguageSpec(
        "lua",
        (".lua",),
        "lua",
        functions=("function_declaration",),
        extra_patterns=(
            "(assignment_statement (expression_list (function_definition))) @def",
            "(variable_declaration (assignment_statement (expression_list (function_definition)))) @def",
        ),
    ),
    LanguageSpec("bash", (".sh", ".bash", ".zsh", ".ksh"), "bash", functions=("function_definition",)),
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
    # Indexed as line windows: no definition rules (yet), but worth finding by meaning.
    LanguageSpec("sql", (".sql",)),
    LanguageSpec("yaml", (".yaml", ".yml")),
    LanguageSpec("toml", (".toml",)),
    LanguageSpec("ini", (".ini", ".cfg", ".conf", ".properties")),
    LanguageSpec("html", (".html", ".htm", ".vue", ".svelte")),
    LanguageSpec("css", (".css", ".scss", ".sass", ".less")),
    LanguageSpec("protobuf", (".proto",)),
    LanguageSpec("graphql", (".graphql", ".gql")),
    LanguageSpec("dockerfile", (".dockerfile",), filenames=("Dockerfile", "Containerfile")),
    LanguageSpec("make", (".mk",), filenames=("Makefile", "GNUmakefile", "makefile")),
    LanguageSpec("cmake", (".cmake",), filenames=("CMakeLists.txt",)),
    LanguageSpec("groovy", (".groovy", ".gradle")),
    LanguageSpec("nim", (".nim",)),
    LanguageSpec("clojure", (".clj", ".cljs", ".cljc", ".edn")),
    LanguageSpec("elm", (".elm",)),
    LanguageSpec("fsharp", (".fs", ".fsi", ".fsx")),
    LanguageSpec("powershell", (".ps1", ".psm1")),
    LanguageSpec("terraform", (".tf", ".tfvars", ".hcl")),
)

_BY_EXTENSION = {ext: spec for spec in LANGUAGES for ext in spec.extensions}
_BY_FILENAME = {name: spec for spec in LANGUAGES for name in spec.filenames}
_BY_NAME = {spec.name: spec for spec in LANGUAGES}

# Other names users type for a language filter.
ALIASES = {
    "py": "python",
    "python3": "python",
    "js": "javascript",
    "jsx": "javascript",
    "node": "javascript",
    "ts": "typescript",
    "golang": "go",
    "rs": "rust",
    "c++": "cpp",
    "cxx": "cpp",
    "c#": "csharp",
    "cs": "csharp",
    "rb": "ruby",
    "kt": "kotlin",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "yml": "yaml",
    "ex": "elixir",
    "exs": "elixir",
    "erl": "erlang",
    "hs": "haskell",
    "ml": "ocaml",
    "jl": "julia",
    "pl": "perl",
    "objective-c": "objc",
    "objectivec": "objc",
    "obj-c": "objc",
}
# A filter on a language also admits its dialects.
FAMILIES = {
    "typescript": ("typescript", "tsx"),
    "javascript": ("javascript",),
    "ocaml": ("ocaml", "ocaml_interface"),
}


def language_for(filename: str) -> LanguageSpec | None:
    """The language of a file by its name or extension; None when the chunker cannot index it."""
    base = filename.rpartition("/")[2]
    spec = _BY_FILENAME.get(base)
    if spec is not None:
        return spec
    dot = base.rfind(".")
    return _BY_EXTENSION.get(base[dot:].lower()) if dot > 0 else None


def named_by_text(filename: str) -> bool:
    """Whether a file's language is decided by its text, not its name alone (``.h``: C, C++ or Objective-C)."""
    return filename.lower().endswith(".h")


def language_of(filename: str, text: str) -> LanguageSpec | None:
    """The language of a file by its name, and by its text where the name is ambiguous (``.h``: C, C++ or
    Objective-C); None when the chunker cannot index it."""
    spec = language_for(filename)
    if spec is not None and named_by_text(filename):
        return _BY_NAME[header_language(text)]
    return spec


def resolve_language(name: str) -> tuple[str, ...] | None:
    """Language names a filter value admits, or None when the name is unknown."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in _BY_NAME:
        return None
    return FAMILIES.get(key, (key,))


def language_names() -> list[str]:
    return sorted(_BY_NAME)


def spec_named(name: str) -> LanguageSpec:
    return _BY_NAME[name]


__all__ = [
    "LANGUAGES",
    "LanguageSpec",
    "language_for",
    "language_names",
    "language_of",
    "named_by_text",
    "resolve_language",
    "spec_named",
]
