"""C-family macros are blanked for the parser only: the classes they qualify are found, nothing else moves."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentty_rag.chunking.macros import blank_macros
from tests.chunking.test_code import _symbols

# A header in the style of a real C++ library: a namespace opened by a macro, an exported class template,
# an SFINAE macro among template parameters, constexpr emulated by macros, a visibility macro after "class".
HEADER = """\
#include "base.h"

FMT_BEGIN_NAMESPACE

/** A dynamic list of formatting arguments with storage. */
FMT_EXPORT template <typename Context> class dynamic_format_arg_store {
 private:
  FMT_NO_UNIQUE_ADDRESS Allocator alloc_;

 public:
  FMT_CONSTEXPR dynamic_format_arg_store() = default;

  template <typename T, FMT_ENABLE_IF(!std::is_pointer<T>::value)>
  void push_back(const T& arg) {
    if FMT_CONSTEXPR20 (need_copy<T>::value) {
      emplace_arg(arg);
    }
  }

  /// Erase all elements from the store.
  void clear() { data_.clear(); }
};

class FMT_API format_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

FMT_END_NAMESPACE
"""

TOKENS = st.sampled_from(
    [
        "FMT_API",
        "UV_EXTERN",
        "FMT_ENABLE_IF(x)",
        "FILE",
        "NULL",
        "LARGE_INTEGER",
        "class",
        "template <typename T>",
        "int",
        "f(",
        ")",
        "{",
        "}",
        ";",
        ",",
        ">",
        "if",
        "#if",
        "#define",
        " ",
        "\t",
        "\n",
        "x",
        "é",
        "// note",
    ]
)


@given(st.lists(TOKENS, max_size=40).map(" ".join), st.booleans())
def test_blanking_only_turns_characters_into_spaces(text: str, cpp: bool) -> None:
    blanked = blank_macros(text, cpp)
    assert len(blanked) == len(text)
    assert all(b == a or (b == " " and a != "\n") for a, b in zip(text, blanked, strict=True))


@pytest.mark.parametrize(
    ("line", "cpp", "kept"),
    [
        ("FMT_BEGIN_NAMESPACE", True, ""),
        ("FMT_EXPORT template <typename C> class store {", True, "template <typename C> class store {"),
        ("UV_EXTERN int uv_run(uv_loop_t* loop);", False, "int uv_run(uv_loop_t* loop);"),
        ("static FMT_INLINE auto f() -> int {", True, "static auto f() -> int {"),
        ("class FMT_API format_error : public error {", True, "class format_error : public error {"),
        ('class FMT_VISIBILITY("default") error {', True, "class error {"),
        ("FMT_CONSTEXPR node(const T& v) : value(v) {}", True, "node(const T& v) : value(v) {}"),
        ("template <typename T, FMT_ENABLE_IF(sizeof(T) > 1)>", True, "template <typename T >"),
        ("  if FMT_CONSTEXPR20 (copy) {", True, "if (copy) {"),
        ("FMT_TYPE_CONSTANT(int, int_type);", True, ""),
        ("FMT_NO_UNIQUE_ADDRESS Allocator alloc_;", True, "Allocator alloc_;"),
        # What stays: a macro that may be a type, a function-like macro that defines something, the
        # preprocessor's lines, names without an underscore.
        ("LARGE_INTEGER li;", False, "LARGE_INTEGER li;"),
        ("LARGE_INTEGER now(void) {", False, "LARGE_INTEGER now(void) {"),
        ("TEST(Suite, Case) {", True, "TEST(Suite, Case) {"),
        (
            "#if FMT_HAS_INCLUDE(<bit>) && FMT_CPLUSPLUS > 201703L",
            True,
            "#if FMT_HAS_INCLUDE(<bit>) && FMT_CPLUSPLUS > 201703L",
        ),
        ("#  define FMT_API", True, "# define FMT_API"),
        ("WINAPI int main(void) {", True, "WINAPI int main(void) {"),
        ("  return MAX_SIZE * count;", True, "return MAX_SIZE * count;"),
        ("  case UV_RUN_ONCE:", True, "case UV_RUN_ONCE:"),
    ],
)
def test_which_macros_are_blanked(line: str, cpp: bool, kept: str) -> None:
    assert " ".join(blank_macros(line, cpp).split()) == kept


def test_a_class_qualified_by_macros_is_found_with_its_members() -> None:
    # (the include and the namespace macro are a few stray lines: they join the class below them)
    assert _symbols("args.h", HEADER) == [
        (1, 22, "class", "dynamic_format_arg_store"),
        (24, 29, "class", "format_error"),
    ]
    assert _symbols("args.h", HEADER, 200) == [
        (1, 7, "class", "dynamic_format_arg_store"),
        (8, 10, "class", "dynamic_format_arg_store"),
        (11, 11, "method", "dynamic_format_arg_store.dynamic_format_arg_store"),
        (13, 18, "method", "dynamic_format_arg_store.push_back"),
        (20, 22, "method", "dynamic_format_arg_store.clear"),
        (24, 29, "class", "format_error"),
    ]


def test_in_c_a_macro_before_a_function_name_stays_a_return_type() -> None:
    text = "UV_EXTERN int uv_run(int mode) {\n  return mode;\n}\n\nLARGE_INTEGER now(void) {\n  return 0;\n}\n"
    assert _symbols("core.c", text) == [(1, 3, "function", "uv_run"), (5, 7, "function", "now")]
