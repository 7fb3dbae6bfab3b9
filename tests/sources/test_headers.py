"""A ``.h`` file is C, C++ or Objective-C by its text; only ``.h`` is decided by content."""

from __future__ import annotations

import pytest

from agentty_rag.chunking.code import chunk_code
from agentty_rag.chunking.languages import language_of
from agentty_rag.sources.headers import header_language, outside_cplusplus_sections
from agentty_rag.types import Document

C_HEADER = """\
#ifndef RING_H
#define RING_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Unlike std::vector, a ring never grows. */
struct ring {
    char *data;
    size_t head;
};

size_t ring_write(struct ring *r, const char *src, size_t n);

#ifdef __cplusplus
}  // extern "C"
template <typename T> inline T *ring_cast(ring *r) { return static_cast<T *>(r->data); }
#endif
#endif
"""

CPP_HEADER = """\
#pragma once
#include <cstddef>

namespace shipyard {

// A fixed-size pool of tasks.
template <typename T>
class Pool {
 public:
  void submit(T task);

 private:
  T *tasks_;
};

}  // namespace shipyard
"""

OBJC_HEADER = """\
#import <Foundation/Foundation.h>

@interface TaskQueue : NSObject
- (void)addTask:(id)task;
@end
"""


@pytest.mark.parametrize(
    ("text", "language"),
    [
        (C_HEADER, "c"),
        (CPP_HEADER, "cpp"),
        (OBJC_HEADER, "objc"),
        ("#include <vector>\nint count(void);\n", "cpp"),  # a standard C++ header has no extension
        ("#include <stdio.h>\nint count(void);\n", "c"),
        ("class Pool;\n", "cpp"),
        ('void f(void) { std::puts("x"); }\n', "cpp"),
        # Words in comments and strings are not code.
        ("/* namespace shipyard {\n template <typename T> */\nint count(void);\n", "c"),
        ('const char *usage = "see std::string";\n// class Pool {\nint count(void);\n', "c"),
        # A "//" inside a string does not hide the rest of the line.
        ('const char *url = "http://x"; std::size_t n;\n', "cpp"),
        # A C header's C++ conveniences under `#ifdef __cplusplus`, or in the `#else` of `#ifndef __cplusplus`.
        ("#ifndef __cplusplus\nint f(void);\n#else\ntemplate <class T> T f();\n#endif\n", "c"),
        ("#if defined(__cplusplus) && __cplusplus >= 201103L\nnamespace a {}\n#endif\nint f(void);\n", "c"),
        # A condition other compilers also meet does not hide its branch.
        ("#if defined(__cplusplus) || defined(_MSC_VER)\nnamespace a {}\n#endif\nint f(void);\n", "cpp"),
        # A whole body only C++ compiles (a library's C++ version check): nothing is left for C.
        ("#if __cplusplus >= 201703L\ntemplate <class T> struct Box { T v; };\n#endif\n", "cpp"),
        ("", "c"),
    ],
)
def test_header_language_from_the_text(text: str, language: str) -> None:
    assert header_language(text) == language


def test_sections_only_cplusplus_compiles_are_left_out() -> None:
    text = "a\n#ifdef __cplusplus\nb\n#else\nc\n#endif\n#ifndef __cplusplus\nd\n#else\ne\n#endif\n#if X\nf\n#endif\n"
    assert outside_cplusplus_sections(text).split("\n") == ["a", "c", "d", "f", ""]


def _language(filename: str, text: str) -> str | None:
    spec = language_of(filename, text)
    return spec.name if spec is not None else None


def test_only_h_files_are_decided_by_their_text() -> None:
    assert [_language("ring.h", text) for text in (C_HEADER, CPP_HEADER, OBJC_HEADER)] == ["c", "cpp", "objc"]
    assert _language("INCLUDE/POOL.H", CPP_HEADER) == "cpp"
    assert _language("ring.c", CPP_HEADER) == "c"
    assert _language("pool.hpp", C_HEADER) == "cpp"
    assert _language("notes.txt", CPP_HEADER) is None


def test_a_cplusplus_header_is_chunked_with_the_cplusplus_grammar() -> None:
    spec = language_of("pool.h", CPP_HEADER)
    assert spec is not None
    chunks = chunk_code(Document("code", "pool.h", CPP_HEADER, language=spec.name), spec, 2400)
    assert [(c.start_line, c.end_line, c.kind, c.symbol, c.language) for c in chunks] == [
        (1, 16, "class", "shipyard.Pool", "cpp"),  # a namespace around one class is named after the class
    ]
    chunks = chunk_code(Document("code", "pool.h", CPP_HEADER, language=spec.name), spec, 150)
    assert [(c.start_line, c.end_line, c.kind, c.symbol) for c in chunks] == [
        (1, 4, "namespace", "shipyard"),
        (6, 14, "class", "shipyard.Pool"),
        (16, 16, "namespace", "shipyard"),
    ]
