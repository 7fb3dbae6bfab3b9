"""Definition-aware chunking, asserted exactly for a small file in every language with definition rules.

Each file nests definitions (a class or module holding members, doc comments, decorators, top-level
statements). With the default limit small definitions stay whole; with a 200-character limit containers
are split into members, each keeping its full symbol path.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from agentty_rag.chunking.code import chunk_code, line_windows
from agentty_rag.chunking.languages import language_for, language_of, resolve_language, spec_named
from agentty_rag.chunking.rules import ELIXIR_DEFINERS
from agentty_rag.types import Document

DATA = Path(__file__).resolve().parent.parent / "data" / "languages"

Expected = list[tuple[int, int, str, str]]

EXPECTED: dict[str, tuple[Expected, Expected]] = {
    "sample.py": (
        [(1, 22, "class", "TokenStore"), (25, 26, "function", "helper")],
        [
            (1, 11, "class", "TokenStore"),
            (13, 18, "method", "TokenStore.refresh"),
            (20, 22, "method", "TokenStore.revoke"),
            (25, 26, "function", "helper"),
        ],
    ),
    "sample.js": (
        [(1, 8, "function", "withRetry"), (10, 19, "class", "EventBus"), (21, 24, "function", "debounce")],
        [
            (1, 1, "block", ""),
            (3, 8, "function", "withRetry"),
            (10, 10, "class", "EventBus"),
            (11, 13, "method", "EventBus.constructor"),
            (15, 19, "method", "EventBus.emit"),
            (21, 24, "function", "debounce"),
        ],
    ),
    "sample.ts": (
        [
            (1, 4, "interface", "Deployment"),
            (6, 6, "type", "Status"),
            (8, 20, "class", "ApiClient"),
            (22, 22, "enum", "Color"),
            (24, 24, "function", "formatStatus"),
        ],
        [
            (1, 4, "interface", "Deployment"),
            (6, 6, "type", "Status"),
            (8, 9, "class", "ApiClient"),
            (11, 13, "method", "ApiClient.constructor"),
            (15, 20, "method", "ApiClient.getDeployment"),
            (22, 22, "enum", "Color"),
            (24, 24, "function", "formatStatus"),
        ],
    ),
    "sample.tsx": (
        [(1, 3, "type", "Props"), (5, 7, "function", "Badge"), (9, 12, "function", "Card")],
        [(1, 3, "type", "Props"), (5, 7, "function", "Badge"), (9, 12, "function", "Card")],
    ),
    "sample.go": (
        [(1, 9, "type", "Policy"), (11, 18, "method", "Policy.Next"), (20, 22, "function", "New")],
        [(1, 9, "type", "Policy"), (11, 18, "method", "Policy.Next"), (20, 22, "function", "New")],
    ),
    "sample.rs": (
        [(1, 8, "struct", "Version"), (10, 20, "impl", "Version"), (22, 26, "module", "tests")],
        [
            (1, 8, "struct", "Version"),
            (10, 10, "impl", "Version"),
            (11, 13, "method", "Version.parse"),
            (14, 15, "method", "Version.parse"),
            (17, 20, "method", "Version.bump"),
            (22, 26, "module", "tests"),
        ],
    ),
    "sample.java": (
        [(1, 22, "class", "PageIterator")],
        [
            (1, 7, "class", "PageIterator"),
            (9, 13, "method", "PageIterator.loadNext"),
            (15, 22, "class", "PageIterator.Cursor"),
        ],
    ),
    "sample.c": (
        [(1, 7, "struct", "ring"), (9, 16, "function", "ring_write"), (18, 20, "type", "point_t")],
        [
            (1, 7, "struct", "ring"),
            (9, 13, "function", "ring_write"),
            (14, 16, "function", "ring_write"),
            (18, 20, "type", "point_t"),
        ],
    ),
    "sample.cpp": (
        [(1, 24, "namespace", "shipyard")],
        [
            (1, 3, "namespace", "shipyard"),
            (5, 12, "class", "shipyard.Pool"),
            (14, 17, "method", "shipyard.Pool.submit"),
            (19, 24, "function", "shipyard.clampTo"),
        ],
    ),
    "sample.cs": (
        [(1, 23, "class", "Shipyard.Billing.Money")],  # a namespace around one class is named after the class
        [
            (1, 4, "namespace", "Shipyard.Billing"),
            (5, 8, "class", "Shipyard.Billing.Money"),
            (10, 13, "method", "Shipyard.Billing.Money.Money"),
            (15, 18, "method", "Shipyard.Billing.Money.Allocate"),
            (19, 23, "method", "Shipyard.Billing.Money.Allocate"),
        ],
    ),
    "sample.rb": (
        [(1, 19, "module", "Notifier")],
        [
            (1, 4, "module", "Notifier"),
            (5, 5, "class", "Notifier.TemplateSet"),
            (6, 8, "method", "Notifier.TemplateSet.initialize"),
            (10, 13, "method", "Notifier.TemplateSet.interpolate"),
            (15, 19, "method", "Notifier.TemplateSet.load"),
        ],
    ),
    "sample.php": (
        [(1, 15, "class", "Receiver"), (17, 20, "function", "helper")],
        [
            (1, 7, "class", "Receiver"),
            (9, 12, "method", "Receiver.verify"),
            (13, 15, "method", "Receiver.verify"),
            (17, 20, "function", "helper"),
        ],
    ),
    "sample.kt": (
        [(1, 13, "class", "RetryInterceptor"), (15, 17, "function", "topLevel")],
        [
            (1, 4, "class", "RetryInterceptor"),
            (5, 8, "method", "RetryInterceptor.backoffMillis"),
            (10, 13, "class", "RetryInterceptor.Companion"),
            (15, 17, "function", "topLevel"),
        ],
    ),
    "sample.swift": (
        [(1, 11, "struct", "Keychain"), (13, 17, "impl", "Keychain"), (19, 21, "function", "makeKeychain")],
        [
            (1, 5, "struct", "Keychain"),
            (7, 11, "method", "Keychain.save"),
            (13, 17, "impl", "Keychain"),
            (19, 21, "function", "makeKeychain"),
        ],
    ),
    "sample.scala": (
        [(1, 15, "class", "Percentiles")],
        [
            (1, 3, "class", "Percentiles"),
            (4, 8, "method", "Percentiles.percentile"),
            (10, 15, "class", "Percentiles.Reservoir"),
        ],
    ),
    "sample.lua": (
        [(1, 6, "function", "M.render"), (8, 10, "function", "trim"), (12, 16, "function", "M.choose")],
        [(1, 6, "function", "M.render"), (8, 10, "function", "trim"), (12, 16, "function", "M.choose")],
    ),
    "sample.sh": (
        [(1, 8, "function", "deploy"), (10, 14, "function", "backup")],
        [(1, 8, "function", "deploy"), (10, 14, "function", "backup")],
    ),
    "sample.zig": (
        [(1, 16, "struct", "Point"), (18, 18, "enum", "ParseError"), (20, 26, "function", "parse")],
        [
            (1, 6, "struct", "Point"),
            (8, 11, "method", "Point.add"),
            (13, 16, "method", "Point.isOrigin"),
            (18, 18, "enum", "ParseError"),
            (20, 26, "function", "parse"),
        ],
    ),
    "sample.ex": (
        [(1, 18, "module", "Shipyard.Router"), (20, 22, "impl", "String.Chars.Shipyard.Router")],
        [
            (1, 4, "module", "Shipyard.Router"),
            (6, 9, "function", "Shipyard.Router.call"),
            (11, 11, "function", "Shipyard.Router.normalize"),
            (13, 18, "macro", "Shipyard.Router.__using__"),
            (20, 22, "impl", "String.Chars.Shipyard.Router"),
        ],
    ),
    "sample.hs": (
        [
            (1, 12, "function", "splitOn"),
            (14, 17, "function", "wordCount"),
            (19, 20, "type", "Pair"),
            (22, 26, "class", "Render"),
            (28, 29, "impl", "Pair"),
        ],
        [
            (1, 7, "function", "splitOn"),
            (8, 12, "function", "splitOn"),
            (14, 17, "function", "wordCount"),
            (19, 20, "type", "Pair"),
            (22, 26, "class", "Render"),
            (28, 29, "impl", "Pair"),
        ],
    ),
    "sample.erl": (
        [
            (1, 4, "struct", "queue"),
            (6, 9, "function", "new"),
            (11, 16, "function", "push"),
            (18, 18, "macro", "LIMIT"),
        ],
        [
            (1, 4, "struct", "queue"),
            (6, 9, "function", "new"),
            (11, 14, "function", "push"),
            (15, 16, "function", "push"),
            (18, 18, "macro", "LIMIT"),
        ],
    ),
    "sample.ml": (
        [(1, 13, "module", "Ring"), (15, 15, "type", "color"), (17, 19, "function", "describe")],
        [
            (1, 4, "module", "Ring"),
            (5, 5, "type", "Ring.t"),
            (7, 10, "function", "Ring.write"),
            (12, 13, "function", "Ring.capacity"),
            (15, 15, "type", "color"),
            (17, 19, "function", "describe"),
        ],
    ),
    "sample.mli": (
        [
            (1, 3, "type", "t"),
            (5, 6, "function", "write"),
            (8, 8, "function", "capacity"),
            (10, 12, "interface", "SINK"),
        ],
        [
            (1, 3, "type", "t"),
            (5, 6, "function", "write"),
            (8, 8, "function", "capacity"),
            (10, 12, "interface", "SINK"),
        ],
    ),
    "sample.jl": (
        [(1, 27, "module", "Shapes")],
        [
            (1, 3, "module", "Shapes"),
            (5, 5, "type", "Shapes.Shape"),
            (7, 14, "struct", "Shapes.Circle"),
            (16, 19, "function", "Shapes.area"),
            (21, 21, "function", "Shapes.perimeter"),
            (23, 27, "macro", "Shapes.twice"),
        ],
    ),
    "sample.R": (
        [(1, 8, "function", "scale01"), (10, 15, "function", "keep_high")],
        [(1, 8, "function", "scale01"), (10, 15, "function", "keep_high")],
    ),
    "sample.pl": (
        [(1, 9, "function", "new"), (11, 15, "function", "push_item"), (17, 32, "module", "Shipyard.Stack")],
        [
            (1, 9, "function", "new"),
            (11, 15, "function", "push_item"),
            (17, 17, "module", "Shipyard.Stack"),
            (18, 19, "function", "Shipyard.Stack.new"),
            (21, 24, "function", "Shipyard.Stack.peek"),
            (26, 32, "function", "Shipyard.Stack.push_item"),
        ],
    ),
    "sample.dart": (
        [
            (1, 18, "class", "Counter"),
            (20, 20, "enum", "Color"),
            (22, 22, "type", "Callback"),
            (24, 27, "function", "main"),
        ],
        [
            (1, 7, "class", "Counter"),
            (9, 13, "method", "Counter.increment"),
            (15, 15, "method", "Counter.count"),
            (17, 18, "method", "Counter.reset"),
            (20, 20, "enum", "Color"),
            (22, 22, "type", "Callback"),
            (24, 27, "function", "main"),
        ],
    ),
    "sample.m": (
        [(1, 7, "class", "TaskQueue"), (9, 21, "impl", "TaskQueue"), (23, 25, "function", "clamp")],
        [
            (1, 7, "class", "TaskQueue"),
            (9, 9, "impl", "TaskQueue"),
            (11, 14, "method", "TaskQueue.addTask"),
            (16, 21, "method", "TaskQueue.sharedQueue"),
            (23, 25, "function", "clamp"),
        ],
    ),
}


def _chunks(name: str, limit: int) -> list[tuple[int, int, str, str]]:
    path = DATA / name
    spec = language_for(name)
    assert spec is not None
    text = path.read_text(encoding="utf-8")
    chunks = chunk_code(Document("code", name, text, language=spec.name), spec, limit)
    lines = text.split("\n")
    for chunk in chunks:  # every chunk is an exact, contiguous window of whole lines
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
        assert chunk.language == spec.name
    return [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_whole_definitions_at_the_default_size(name: str) -> None:
    assert _chunks(name, 2400) == EXPECTED[name][0]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_large_definitions_split_into_members_with_symbol_paths(name: str) -> None:
    assert _chunks(name, 200) == EXPECTED[name][1]


def test_every_listed_language_has_a_sample() -> None:
    required = {
        "python",
        "javascript",
        "typescript",
        "tsx",
        "go",
        "rust",
        "java",
        "c",
        "cpp",
        "csharp",
        "ruby",
        "php",
        "kotlin",
        "swift",
        "scala",
        "lua",
        "bash",
        "zig",
        "elixir",
        "haskell",
        "erlang",
        "ocaml",
        "ocaml_interface",
        "julia",
        "r",
        "perl",
        "dart",
        "objc",
    }
    covered = {spec.name for name in EXPECTED if (spec := language_for(name)) is not None}
    assert covered == required


def test_members_carry_the_enclosing_signature_as_context() -> None:
    spec = language_for("sample.py")
    assert spec is not None
    text = (DATA / "sample.py").read_text(encoding="utf-8")
    chunks = chunk_code(Document("code", "sample.py", text, language="python"), spec, 200)
    refresh = next(c for c in chunks if c.symbol == "TokenStore.refresh")
    assert refresh.context == "class TokenStore:"
    assert refresh.text.startswith("    # Refresh keeps the family id.\n    @retry(3)\n    def refresh")


def test_unknown_language_and_broken_files_fall_back_to_line_windows() -> None:
    text = "\n".join(f"line {i}" + ("\n" if i % 10 == 0 else "") for i in range(1, 80))
    chunks = line_windows(Document("code", "notes.sql", text, language="sql"), 200)
    assert [c.kind for c in chunks] == ["window"] * len(chunks)
    assert chunks[0].start_line == 1 and chunks[-1].end_line == len(text.split("\n"))
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert previous.end_line < current.start_line  # windows never overlap
        assert len(previous.text) <= 200
    spec = language_for("x.py")
    assert spec is not None
    broken = "def ok():\n    return 1\n\nclass (((:\n  ???\n"
    chunks = chunk_code(Document("code", "x.py", broken, language="python"), spec, 2400)
    assert chunks and chunks[0].symbol == "ok"


@pytest.mark.parametrize(
    ("name", "opening", "closing"),
    [("deep.js", "function level{i}() {{", "}}"), ("deep.ex", "defmodule Level{i} do", "end")],
)
def test_definitions_nested_deeper_than_the_stack_are_cut_by_lines(name: str, opening: str, closing: str) -> None:
    # JavaScript nests through the emitter; Elixir also through the grouping of clauses
    text = "\n".join(opening.format(i=i) for i in range(1000)) + "\n" + "\n".join([closing.format()] * 1000) + "\n"
    spec = language_for(name)
    assert spec is not None
    started = time.monotonic()
    chunks = chunk_code(Document("code", name, text, language=spec.name), spec, 2400)
    assert time.monotonic() - started < 10  # a walk up the tree from every definition took 40 s here
    assert chunks and {c.kind for c in chunks} == {"window"}
    assert chunks[0].start_line == 1 and chunks[-1].end_line == 2000


def test_language_filter_names_and_aliases() -> None:
    assert resolve_language("TS") == ("typescript", "tsx")
    assert resolve_language("c++") == ("cpp",)
    assert resolve_language("shell") == ("bash",)
    assert resolve_language("cobolish") is None


def _symbols(name: str, text: str, limit: int = 2400) -> list[tuple[int, int, str, str]]:
    spec = language_of(name, text)  # a .h file is C++ when its text says so
    assert spec is not None
    chunks = chunk_code(Document("code", name, text, language=spec.name), spec, limit)
    lines = text.split("\n")
    for chunk in chunks:  # the chunks are the original text (what the parser read may differ: macros)
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    return [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks]


def test_elixir_definitions_are_named_by_their_head() -> None:
    text = (
        "defmodule A.B do\n"
        "  def plain, do: 1\n\n"
        "  def guarded(x) when is_integer(x), do: x\n\n"
        "  defguard is_even(n) when rem(n, 2) == 0\n\n"
        "  defdelegate fetch(map, key), to: Map\n\n"
        "  def left <> right, do: left\n"
        "end\n"
    )
    assert _symbols("a.ex", text, 30) == [
        (1, 1, "module", "A.B"),
        (2, 2, "function", "A.B.plain"),
        (4, 4, "function", "A.B.guarded"),
        (6, 6, "macro", "A.B.is_even"),
        (8, 8, "function", "A.B.fetch"),
        (10, 10, "module", "A.B"),  # an operator has no name a path can hold: it stays with the module's lines
        (11, 11, "module", "A.B"),
    ]


def test_elixir_code_a_macro_quotes_is_not_a_definition_of_its_module() -> None:
    text = "defmodule A do\n  defmacro __using__(_) do\n    quote do\n      def routes, do: []\n    end\n  end\nend\n"
    symbols = {symbol for _, _, _, symbol in _symbols("a.ex", text, 20)}
    assert symbols == {"A", "A.__using__"}


def test_elixir_definition_keywords_match_the_kinds_the_rules_know() -> None:
    spec = spec_named("elixir")
    pattern = next(p for p in spec.extra_patterns if "@def" in p)
    keywords = re.search(r'"\^\((.*)\)\$"', pattern)
    assert keywords is not None
    assert set(keywords.group(1).split("|")) == set(ELIXIR_DEFINERS)


def test_a_haskell_signature_and_its_equations_are_one_chunk() -> None:
    text = "module M where\n\nsize :: [a] -> Int\nsize [] = 0\nsize (_ : xs) = 1 + size xs\n\nempty :: Bool\nempty = True\n"
    assert _symbols("m.hs", text, 60) == [(1, 1, "block", ""), (3, 5, "function", "size"), (7, 8, "function", "empty")]


def test_erlang_spec_and_clauses_are_one_chunk_but_other_functions_are_not() -> None:
    text = "-spec f(integer()) -> integer().\nf(0) -> 1;\nf(N) -> N.\n\ng() -> ok.\n"
    assert _symbols("m.erl", text, 60) == [(1, 3, "function", "f"), (5, 5, "function", "g")]


def test_a_macro_before_a_cplusplus_namespace_does_not_make_it_a_function() -> None:
    body = "namespace detail {\nint twice(int x) {\n  return 2 * x;\n}\n}  // namespace detail\n"
    # The macro's line joins the namespace below it, which is read as it is without the macro (a namespace
    # that fits in one chunk and holds one definition is named after it).
    assert _symbols("x.cpp", body, 2400) == [(1, 5, "function", "detail.twice")]
    assert _symbols("x.cpp", "API_BEGIN\n" + body, 2400) == [(1, 6, "function", "detail.twice")]
    assert _symbols("x.cpp", "API_BEGIN\n" + body, 40) == [
        (1, 2, "namespace", "detail"),
        (3, 5, "function", "detail.twice"),
        (6, 6, "namespace", "detail"),
    ]


def test_an_ocaml_filter_admits_interfaces() -> None:
    assert resolve_language("ml") == ("ocaml", "ocaml_interface")
    assert language_for("ring.mli") == spec_named("ocaml_interface")


def test_a_namespace_is_named_after_what_it_holds_when_that_is_one_thing() -> None:
    one = "namespace Shipyard.Billing\n{\n    public enum Currency\n    {\n        Eur,\n        Usd\n    }\n}\n"
    assert _symbols("Currency.cs", one, 2400) == [(1, 8, "enum", "Shipyard.Billing.Currency")]
    nested = "namespace shipyard {\nnamespace native {\nclass Pool {\n  int size;\n};\n}\n}\n"
    assert _symbols("pool.hpp", nested, 2400) == [(1, 7, "class", "shipyard.native.Pool")]
    # One class's members defined out of line: that class's implementation.
    members = "namespace shipyard {\nvoid Pool::submit() {}\nvoid Pool::shutdown() {}\n}\n"
    assert _symbols("pool.cpp", members, 2400) == [(1, 4, "impl", "shipyard.Pool")]
    # Two things, or members of two classes: the namespace.
    two = "namespace shipyard {\nvoid Pool::submit() {}\nvoid Queue::push() {}\n}\n"
    assert _symbols("two.cpp", two, 2400) == [(1, 4, "namespace", "shipyard")]
    free = "namespace shipyard {\nint a() { return 1; }\nint b() { return 2; }\n}\n"
    assert _symbols("free.cpp", free, 2400) == [(1, 4, "namespace", "shipyard")]
    # A class around one nested class stays the class; a Ruby module stays the module.
    assert _symbols("m.py", "class Proxy(Person):\n    class Meta:\n        proxy = True\n", 2400) == [
        (1, 3, "class", "Proxy")
    ]
    assert _symbols("r.rb", "module Rails\n  class Engine\n  end\nend\n", 2400) == [(1, 4, "module", "Rails")]


def test_a_split_class_keeps_its_own_header_chunk() -> None:
    # A short header (the class line and two statements) must not join the first member: a search for the
    # class must find the class, not its first method.
    text = (
        "class Engine < Railtie\n"
        "  autoload :Configuration\n"
        "  autoload :Routes\n"
        "\n"
        "  class << self\n"
        "    def find_root(from)\n"
        "      root = from\n"
        "      root\n"
        "    end\n"
        "  end\n"
        "\n"
        "  def initialize\n"
        "    @paths = nil\n"
        "    super\n"
        "  end\n"
        "end\n"
    )
    chunks = _symbols("engine.rb", text, 80)
    assert chunks[0] == (1, 3, "class", "Engine")
    assert all(symbol != "Engine" for _, _, _, symbol in chunks[1:])
