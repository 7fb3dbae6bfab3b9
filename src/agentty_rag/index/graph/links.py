"""The links of the graph (GraphRAG): which file of an index points at which other file.

Three kinds, read from the indexed passages' text (nothing else is read):

* ``link``: a Markdown link (``[text](guide/auth.md#tokens)``, a reference definition ``[id]: path``) or an
  reStructuredText one (``:doc:`auth```, ```text <auth.rst>`_``, ``.. include:: part.rst``) to another file of
  the index, resolved from the linking file's folder;
* ``import``: a Python, Java-like or JavaScript/TypeScript import of another file of the index (a dotted
  module by its path's last parts, when only one file matches; a relative path by its place);
* ``names``: a code file using at least two names of definitions (passages' symbols) another file of its
  language makes, weighed by how many it uses (a name defined in more than two files says nothing about
  which one is meant).

Every function here is pure: the same passages give the same links, in the same order.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

LINK_WEIGHT = 1.0  # an explicit link or import
NAME_WEIGHT = 0.25  # each distinct name used, up to MAX_NAME_WEIGHT
MAX_NAME_WEIGHT = 0.75  # naming many of a file's definitions is still weaker evidence than importing it
MAX_DEFINERS = 2  # a name defined in more files than this links none of them
MIN_NAME_CHARS = 4
MIN_NAMES = 2  # one shared name is too often a coincidence

_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'][^\"']*[\"'])?\s*\)")
_MD_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_RST_LINK = re.compile(r"`[^`<]*<([^>`]+)>`__?")
_RST_ROLE = re.compile(r":(?:doc|download|ref):`(?:[^`<]*<([^>`]+)>|([^`]+))`")
_RST_INCLUDE = re.compile(r"^\s*\.\.\s+(?:include|literalinclude|image|figure)::\s*(\S+)", re.MULTILINE)
_PY_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[\w \t,*]+)", re.MULTILINE)
_PY_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*)", re.MULTILINE)
_JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.]+)\s*;", re.MULTILINE)
_JS_IMPORT = re.compile(
    r"""(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*|\bexport\s+\*\s+from\s*)["'](\.{1,2}/[^"'\s]+)["']"""
)
_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_DOC_SUFFIXES = ("", ".md", ".markdown", ".rst", ".txt", "/index.md", "/index.rst", "/README.md")
_JS_SUFFIXES = ("", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", "/index.ts", "/index.tsx", "/index.js")
_PY_SUFFIXES = (".py", "/__init__.py")


@dataclass(frozen=True)
class Link:
    """One file's link to another: its kind (``link``, ``import``, ``names``) and its weight in (0, 1]."""

    source: str
    target: str
    kind: str
    weight: float


class Refs:
    """The files of an index, and the lookups that resolve a link target to one of them."""

    def __init__(self, refs: Iterable[str]) -> None:
        self.all = frozenset(refs)
        modules: dict[str, set[str]] = {}
        for ref in self.all:
            for name in _module_names(ref):
                modules.setdefault(name, set()).add(ref)
        # A dotted name some file's path ends with, when exactly one does.
        self.module = {name: next(iter(found)) for name, found in modules.items() if len(found) == 1}

    def first(self, candidates: Iterable[str]) -> str | None:
        return next((c for c in candidates if c in self.all), None)


def _module_names(ref: str) -> list[str]:
    """The dotted names a file answers to: ``a/b/c.py`` is ``c``, ``b.c`` and ``a.b.c``; ``a/b/__init__.py``
    is ``b`` and ``a.b``."""
    stem, dot, _ = ref.rpartition(".")
    if not dot or "/" in ref[len(stem) :]:
        return []
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts)) if parts[i:]]


def _relative(ref: str, target: str) -> str:
    """``target`` from the folder of ``ref`` (``/x`` from the root), normalised; "" when it leaves the root."""
    target = target.split("#", 1)[0].split("?", 1)[0].strip()
    if not target:
        return ""
    joined = target.lstrip("/") if target.startswith("/") else posixpath.join(posixpath.dirname(ref), target)
    path = posixpath.normpath(joined)
    return "" if path.startswith("..") or path == "." else path


def doc_targets(text: str) -> list[str]:
    """The link targets a prose passage names, in order (web addresses left out)."""
    found = [m.group(1) for m in _MD_LINK.finditer(text)]
    found += [m.group(1) for m in _MD_REFERENCE.finditer(text)]
    found += [m.group(1) for m in _RST_LINK.finditer(text)]
    found += [m.group(1) or m.group(2) for m in _RST_ROLE.finditer(text)]
    found += [m.group(1) for m in _RST_INCLUDE.finditer(text)]
    return [t for t in found if not _SCHEME.match(t) and not t.startswith("#")]


def doc_links(ref: str, text: str, refs: Refs) -> list[str]:
    """The files of the index a prose passage of ``ref`` links to."""
    out = []
    for target in doc_targets(text):
        path = _relative(ref, target)
        hit = refs.first(path + suffix for suffix in _DOC_SUFFIXES) if path else None
        if hit is not None and hit != ref:
            out.append(hit)
    return out


def _python_imports(ref: str, text: str, refs: Refs) -> list[str]:
    out = []
    for m in _PY_FROM.finditer(text):
        dots, module, names = m.group(1), m.group(2), re.findall(r"\w+", m.group(3))
        if dots:  # relative: from the importing file's package, one level up per extra dot
            base = posixpath.dirname(ref)
            for _ in range(len(dots) - 1):
                base = posixpath.dirname(base)
            path = posixpath.join(base, *module.split(".")) if module else base
            found = [refs.first(posixpath.join(path, n) + s for s in _PY_SUFFIXES) for n in names]
            found.append(refs.first(path + s for s in _PY_SUFFIXES))
        else:
            found = [refs.module.get(f"{module}.{n}") for n in names] + [refs.module.get(module)]
        out += [f for f in found if f is not None]
    for m in _PY_IMPORT.finditer(text):
        out += [f for name in m.group(1).split(",") if (f := refs.module.get(name.strip())) is not None]
    return out


def imports(ref: str, text: str, refs: Refs) -> list[str]:
    """The files of the index a code passage of ``ref`` imports."""
    if "import" not in text and "require" not in text:
        return []
    if ref.endswith(".py"):
        found = _python_imports(ref, text, refs)
    else:
        found = [f for m in _JAVA_IMPORT.finditer(text) if (f := refs.module.get(m.group(1))) is not None]
        for m in _JS_IMPORT.finditer(text):
            path = _relative(ref, m.group(1))
            hit = refs.first(path + s for s in _JS_SUFFIXES) if path else None
            found += [hit] if hit is not None else []
    return [f for f in found if f != ref]


def definers(definitions: Iterable[tuple[str, str]]) -> dict[str, frozenset[str]]:
    """For (file, defined name) pairs: each name worth linking by and the files defining it (at most
    ``MAX_DEFINERS``; shorter names left out). The caller passes one language's files."""
    by_name: dict[str, set[str]] = {}
    for ref, name in definitions:
        if len(name) >= MIN_NAME_CHARS:
            by_name.setdefault(name, set()).add(ref)
    return {name: frozenset(refs) for name, refs in by_name.items() if len(refs) <= MAX_DEFINERS}


def names_used(texts: Iterable[str]) -> set[str]:
    """The identifiers (four characters or more) a file's passages use."""
    found: set[str] = set()
    for text in texts:
        found.update(_IDENTIFIER.findall(text))
    return found


def name_links(ref: str, used: set[str], defined: Mapping[str, frozenset[str]]) -> list[Link]:
    """``names`` links of ``ref``: each other file whose definitions it uses, weighed by how many it uses."""
    count: dict[str, int] = {}
    for name in used & defined.keys():
        files = defined[name]
        if ref in files:
            continue  # a name the file defines itself is its own
        for target in files:
            count[target] = count.get(target, 0) + 1
    return [
        Link(ref, target, "names", min(MAX_NAME_WEIGHT, NAME_WEIGHT * n))
        for target, n in sorted(count.items())
        if n >= MIN_NAMES
    ]


def strongest(links: Sequence[Link], cap: int) -> list[Link]:
    """One link per target (the strongest kind), the ``cap`` strongest, ties by target."""
    best: dict[str, Link] = {}
    for link in links:
        kept = best.get(link.target)
        if kept is None or link.weight > kept.weight:
            best[link.target] = link
    return sorted(best.values(), key=lambda link: (-link.weight, link.target))[:cap]


__all__ = [
    "LINK_WEIGHT",
    "Link",
    "Refs",
    "definers",
    "doc_links",
    "doc_targets",
    "imports",
    "name_links",
    "names_used",
    "strongest",
]
