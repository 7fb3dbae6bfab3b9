"""C-family source as the parser should read it: without the macros that stand where the grammar expects syntax.

tree-sitter parses C, C++ and Objective-C without their preprocessor, so a declaration qualified by a macro
(``FMT_EXPORT template <...> class store {``, ``class FMT_API error``, ``UV_EXTERN int uv_run(...)``) or a
namespace opened by one (``FMT_BEGIN_NAMESPACE``) comes out as an error node: the class is lost, its members
become top-level functions without their class, and an error can swallow the rest of the file. Real C and C++
libraries put such macros everywhere (export and visibility attributes, ``constexpr`` emulation, namespace
openers), so the chunker blanks them before parsing.

Only upper-case names with an underscore count as macros (``FMT_API``, ``Q_OBJECT``; never ``FILE`` or
``NULL``), and only where a macro can only be a qualifier or a statement of its own:

* alone on its line (``FMT_BEGIN_NAMESPACE``), or a one-line call ending in ``;`` (``FMT_TYPE_CONSTANT(int,
  int_type);``, ``Q_DECLARE_METATYPE(X);``);
* at the start of a declaration, after ``template <...>`` or after a specifier, when a keyword follows
  (``FMT_API void f()``, ``static FMT_INLINE auto``); in C++ also when the declared name follows (a
  constructor ``FMT_CONSTEXPR node(...)``, ``FMT_FUNC Class::method(...)``) — C reads a function without a
  return type as an error, so there a macro before a name stays (it may be the type);
* between ``class``/``struct``/``union`` and the name (``class FMT_API format_error``);
* between ``if`` and its condition (``if FMT_CONSTEXPR20 (...)``), outside preprocessor lines;
* in C++, a call among template parameters, with its comma (``template <typename T, FMT_ENABLE_IF(...)>``).

A blanked macro becomes as many spaces: every byte offset and line number stays the same, so the chunks are
cut from the original text exactly where the parser saw the definitions.
"""

from __future__ import annotations

import re

_MACRO = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
_KEYWORDS = (
    "template|class|struct|union|enum|namespace|typedef|using|extern|static|inline|constexpr|consteval|constinit|"
    "virtual|explicit|friend|const|volatile|void|auto|bool|char|short|int|long|float|double|signed|unsigned|"
    "operator|typename|noexcept"
)
# A macro alone on its line, or a call of one that ends the line with ";".
_STANDALONE = re.compile(rf"^[ \t]*(?P<macro>{_MACRO}|{_MACRO}[ \t]*\(.*\)[ \t]*;)[ \t]*(?://.*)?$", re.MULTILINE)
# Where a declaration's qualifiers stand: the line's start, after "template <...>", after a specifier.
_BEFORE = rf"(?:^[ \t]*|>[ \t]*|\b(?:{_KEYWORDS})[ \t]+)"
# What follows a qualifier: a keyword, or a type and then the declared name (``Allocator alloc_``,
# ``uv_loop_t* uv_default_loop``; a lone name after a macro is the macro's variable, ``LARGE_INTEGER li``).
_TYPE = r"[A-Za-z_][\w:]*(?:<[^;{}()\n]*>)?"
_DECLARATION = rf"(?:{_KEYWORDS})\b|{_TYPE}[ \t]+[*&]*[ \t]*[A-Za-z_]|{_TYPE}[*&]+[ \t]*[A-Za-z_]"
_QUALIFIER_C = re.compile(rf"{_BEFORE}(?P<macro>(?:{_MACRO}[ \t]+)+)(?={_DECLARATION})", re.MULTILINE)
_QUALIFIER_CPP = re.compile(
    rf"{_BEFORE}(?P<macro>(?:{_MACRO}[ \t]+)+)(?={_DECLARATION}|~|[A-Za-z_]\w*[ \t]*(?:\(|::|<))", re.MULTILINE
)
_AFTER_TAG = re.compile(
    rf"\b(?:class|struct|union)[ \t]+(?P<macro>(?:{_MACRO}(?:[ \t]*\([^()\n]*\))?[ \t]+)+)(?=[A-Za-z_])"
)
# A macro call among template parameters (``template <typename T, FMT_ENABLE_IF(...)>``, a constraint):
# blanked with its comma, up to its closing parenthesis (found by counting, possibly lines further on).
_TEMPLATE_CALL = re.compile(rf",[ \t]*{_MACRO}[ \t]*\(")
_CLOSES_LIST = re.compile(r"[ \t\n]*>")
# (not in a preprocessor line: "#if FMT_HAS_INCLUDE(...)" is the preprocessor's)
_IF_MACRO = re.compile(rf"^(?![ \t]*#)[^\n]*?\bif[ \t]+(?P<macro>{_MACRO})(?=[ \t]*\()", re.MULTILINE)


def _blank(match: re.Match[str]) -> str:
    """The match with its ``macro`` group turned into spaces."""
    text, start, end = match.group(0), match.start("macro") - match.start(0), match.end("macro") - match.start(0)
    return text[:start] + " " * (end - start) + text[end:]


def blank_macros(text: str, cpp: bool) -> str:
    """``text`` with the macros that break a C-family parse blanked (the same length, the same lines).

    Args:
        text: a C, C++ or Objective-C source file.
        cpp: C++'s rules: also a macro before a declared name (a constructor has no return type) and a macro
            call among template parameters.
    """
    qualifiers = _QUALIFIER_CPP if cpp else _QUALIFIER_C
    text = _STANDALONE.sub(_blank, text)
    text = qualifiers.sub(_blank, text)
    text = _AFTER_TAG.sub(_blank, text)
    text = _IF_MACRO.sub(_blank, text)
    return _blank_template_calls(text) if cpp else text


def _blank_template_calls(text: str) -> str:
    """Blank each macro call that closes a template parameter list (``, FMT_ENABLE_IF(...)>``), newlines kept."""
    out: list[str] = []
    done = 0
    for match in _TEMPLATE_CALL.finditer(text):
        if match.start() < done:
            continue
        end = _closing(text, match.end())
        if end is None or not _CLOSES_LIST.match(text, end):
            continue
        out.append(text[done : match.start()])
        out.append("".join("\n" if c == "\n" else " " for c in text[match.start() : end]))
        done = end
    out.append(text[done:])
    return "".join(out)


def _closing(text: str, start: int, limit: int = 400) -> int | None:
    """The index just past the parenthesis that closes the one opened before ``start`` (None when there is
    none within ``limit`` characters or a statement ends first)."""
    depth = 1
    for i in range(start, min(len(text), start + limit)):
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        elif c in ";{}":
            return None
    return None


__all__ = ["blank_macros"]
