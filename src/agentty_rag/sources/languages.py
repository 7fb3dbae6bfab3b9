"""Which language a file is written in: by its name, and by its text where the name leaves it open (``.h``).

The code source indexes exactly the files named here; the chunker then cuts each by its language's rules
(``chunking/languages.py``), or into line windows when it has none. A language filter takes these names,
their aliases, and admits a language's dialects.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentty_rag.sources.headers import header_language


@dataclass(frozen=True)
class Language:
    """One language's files.

    Args:
        name: our name (what ``search_code(language=...)`` takes).
        extensions: file suffixes, lower case, with the dot.
        filenames: exact file names (``Makefile``) in this language.
    """

    name: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...] = ()


LANGUAGES: tuple[Language, ...] = (
    Language("python", (".py", ".pyi", ".pyw")),
    Language("javascript", (".js", ".mjs", ".cjs", ".jsx")),
    Language("typescript", (".ts", ".mts", ".cts")),
    Language("tsx", (".tsx",)),
    Language("go", (".go",)),
    Language("rust", (".rs",)),
    Language("java", (".java",)),
    Language("c", (".c", ".h")),
    Language("cpp", (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp")),
    Language("csharp", (".cs",)),
    Language("ruby", (".rb", ".rake", ".gemspec", ".ru"), filenames=("Rakefile", "Gemfile", "Guardfile")),
    Language("php", (".php", ".phtml")),
    Language("kotlin", (".kt", ".kts")),
    Language("swift", (".swift",)),
    Language("scala", (".scala", ".sc")),
    Language("lua", (".lua",)),
    Language("bash", (".sh", ".bash", ".zsh", ".ksh")),
    Language("zig", (".zig",)),
    Language("elixir", (".ex", ".exs")),
    Language("haskell", (".hs",)),
    Language("erlang", (".erl", ".hrl")),
    Language("ocaml", (".ml",)),
    Language("ocaml_interface", (".mli",)),
    Language("julia", (".jl",)),
    Language("r", (".r",)),
    Language("perl", (".pl", ".pm")),
    Language("dart", (".dart",)),
    Language("objc", (".m", ".mm")),
    Language("sql", (".sql",)),
    Language("yaml", (".yaml", ".yml")),
    Language("toml", (".toml",)),
    Language("ini", (".ini", ".cfg", ".conf", ".properties")),
    Language("html", (".html", ".htm", ".vue", ".svelte")),
    Language("css", (".css", ".scss", ".sass", ".less")),
    Language("protobuf", (".proto",)),
    Language("graphql", (".graphql", ".gql")),
    Language("dockerfile", (".dockerfile",), filenames=("Dockerfile", "Containerfile")),
    Language("make", (".mk",), filenames=("Makefile", "GNUmakefile", "makefile")),
    Language("cmake", (".cmake",), filenames=("CMakeLists.txt",)),
    Language("groovy", (".groovy", ".gradle")),
    Language("nim", (".nim",)),
    Language("clojure", (".clj", ".cljs", ".cljc", ".edn")),
    Language("elm", (".elm",)),
    Language("fsharp", (".fs", ".fsi", ".fsx")),
    Language("powershell", (".ps1", ".psm1")),
    Language("terraform", (".tf", ".tfvars", ".hcl")),
)

_BY_EXTENSION = {ext: language.name for language in LANGUAGES for ext in language.extensions}
_BY_FILENAME = {name: language.name for language in LANGUAGES for name in language.filenames}
_NAMES = frozenset(language.name for language in LANGUAGES)

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


def named_by_text(filename: str) -> bool:
    """Whether a file's language is decided by its text, not its name alone (``.h``: C, C++ or Objective-C)."""
    return filename.lower().endswith(".h")


def file_language(filename: str, text: str | None = None) -> str | None:
    """The language of a file by its name or extension, and by its ``text`` (when given) where the name is
    ambiguous; None when the file is in no language the code source indexes."""
    base = filename.rpartition("/")[2]
    name = _BY_FILENAME.get(base)
    if name is None:
        dot = base.rfind(".")
        name = _BY_EXTENSION.get(base[dot:].lower()) if dot > 0 else None
    if name is not None and text is not None and named_by_text(filename):
        return header_language(text)
    return name


def is_language(name: str) -> bool:
    """Whether ``name`` is one of our language names (not an alias)."""
    return name in _NAMES


def resolve_language(name: str) -> tuple[str, ...] | None:
    """Language names a filter value admits, or None when the name is unknown."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in _NAMES:
        return None
    return FAMILIES.get(key, (key,))


def language_names() -> list[str]:
    return sorted(_NAMES)


__all__ = [
    "ALIASES",
    "FAMILIES",
    "LANGUAGES",
    "Language",
    "file_language",
    "is_language",
    "language_names",
    "named_by_text",
    "resolve_language",
]
