"""Which C-family language a ``.h`` file is written in, read from its text.

C, C++ and Objective-C all use ``.h``. The rules follow GitHub linguist's heuristics for ``.h``, in its order:
Objective-C markers first, then C++ markers, else C. Two refinements keep C headers C: comments are ignored,
and so are sections under ``#ifdef __cplusplus`` (a C header's ``extern "C"`` guard or C++ conveniences).
"""

from __future__ import annotations

import re

# Literals are matched too, so that a "//" or "/*" inside one does not start a comment.
_COMMENTS_AND_LITERALS = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.DOTALL)
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(\w+)(.*)")

_IS_CPP = r"(?:defined[ \t]*\(?[ \t]*__cplusplus[ \t]*\)?|__cplusplus)"
# `#ifdef __cplusplus`, `#if defined(__cplusplus) && ...`, `#if __cplusplus >= 201103L`: only C++ enters.
_CPP_ONLY_IF = re.compile(rf"(?:ifdef[ \t]+__cplusplus|if[ \t]+{_IS_CPP}(?:[ \t]*>=?[ \t]*\w+)?[ \t]*(?:&&.*)?)[ \t]*$")
# `#ifndef __cplusplus`, `#if !defined(__cplusplus) || ...`: every C compiler enters, so only C++ reaches #else.
_C_ONLY_IF = re.compile(rf"(?:ifndef[ \t]+__cplusplus|if[ \t]+![ \t]*{_IS_CPP}[ \t]*(?:\|\|.*)?)[ \t]*$")

_OBJC = re.compile(
    r"^[ \t]*(?:@(?:interface|implementation|protocol|end|property|synthesize|class)\b|#[ \t]*import[ \t]*[<\"])",
    re.MULTILINE,
)
_CPP = re.compile(
    "|".join(
        (
            r"^[ \t]*template[ \t]*<",
            r"^[ \t]*(?:using[ \t]+)?namespace(?:[ \t]+\w|[ \t]*\{)",
            r"^[ \t]*(?:class|struct)[ \t]+\w+[ \t]*(?:final[ \t]*)?:[ \t]*(?:public|protected|private)\b",
            r"^[ \t]*class[ \t]+\w+",
            r"^[ \t]*(?:public|protected|private)[ \t]*:",
            r"^[ \t]*(?:constexpr|consteval|typename)\b",
            r"^[ \t]*(?:try[ \t]*\{|catch[ \t]*\()",
            # Standard C++ headers have no extension; every C header ends in .h.
            r"^[ \t]*#[ \t]*include[ \t]*<\w+>",
            r"\bstd::\w",
        )
    ),
    re.MULTILINE,
)


def _blank(match: re.Match[str]) -> str:
    """A comment becomes its line breaks (rows keep their starts), a literal becomes empty."""
    found = match.group(0)
    return "\n" * found.count("\n") if found.startswith("/") else found[0] * 2


def _cplusplus_test(condition: str) -> bool | None:
    """For a conditional: True when its first branch is C++ only, False when its ``#else`` is, else None."""
    if _CPP_ONLY_IF.match(condition):
        return True
    if _C_ONLY_IF.match(condition):
        return False
    return None


def outside_cplusplus_sections(text: str) -> str:
    """The lines of ``text`` a C compiler sees: sections only a C++ compiler compiles are left out."""
    kept: list[str] = []
    # One entry per open conditional: (what it tests of __cplusplus, whether the current branch is C++ only).
    stack: list[tuple[bool | None, bool]] = []
    for line in text.split("\n"):
        directive = _DIRECTIVE.match(line)
        word, rest = directive.groups() if directive else ("", "")
        if word.startswith("if"):
            test = _cplusplus_test(word + rest)
            stack.append((test, test is True))
        elif word in ("else", "elif") and stack:
            test = stack[-1][0]
            stack[-1] = (test, word == "else" and test is False)
        elif word == "endif" and stack:
            stack.pop()
        elif not any(cpp_only for _, cpp_only in stack):
            kept.append(line)
    return "\n".join(kept)


def header_language(text: str) -> str:
    """``objc``, ``cpp`` or ``c``: the language a ``.h`` file's text is written in.

    C++ markers count where a C compiler would see them; a header that shows a C compiler no declaration at
    all (its whole body under ``#if __cplusplus >= ...``) is C++ when its C++ sections have the markers.
    """
    code = _COMMENTS_AND_LITERALS.sub(_blank, text)
    if _OBJC.search(code):
        return "objc"
    seen_by_c = outside_cplusplus_sections(code)
    if _CPP.search(seen_by_c) or (";" not in seen_by_c and _CPP.search(code)):
        return "cpp"
    return "c"


__all__ = ["header_language", "outside_cplusplus_sections"]
