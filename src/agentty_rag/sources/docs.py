"""The workspace's documents: README files, Markdown, reStructuredText and AsciiDoc wherever they are.

With no setting, every document of the workspace is read: README files at any depth, the prose formats
anywhere, plain text and config examples inside docs folders; minus what the ignore files exclude,
dependency, build and vendored folders, hidden folders, test data (but its READMEs) and
files that are no documentation (licences, templates). ``AGENTTY_DOCS_DIR`` narrows the search to one folder,
every text file in it. Translations (``sources.translations``) are left out unless their language is asked
for. Every key is the file's path from the workspace root (``docs:docs/guide/auth.md``), so a cite opens
there; a folder named outside the workspace keeps its absolute path.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentty_rag.fsguard import is_inside
from agentty_rag.sources.base import LoadResult
from agentty_rag.sources.text import decode
from agentty_rag.sources.translations import Translations, classify
from agentty_rag.sources.walker import ListingCache, ScanResult, SkipReport, WalkRules, scan_tree
from agentty_rag.types import Document, FileStamp

# File extension -> the format the prose chunker reads it as.
DOC_FORMATS: dict[str, str] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdx": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".text": "text",
    ".adoc": "asciidoc",
    ".asciidoc": "asciidoc",
    ".json": "config",
    ".yaml": "config",
    ".yml": "config",
    ".toml": "config",
}
# The formats that are documents wherever they are; the others only in a docs folder.
PROSE_EXTENSIONS = frozenset({".md", ".markdown", ".mdx", ".rst", ".adoc", ".asciidoc"})
# Folders that hold documentation (any depth): plain text and config examples in them are documents too.
DOCS_FOLDERS = frozenset({"docs", "doc", "documentation", "guide", "guides", "manual", "handbook", "wiki"})
# Names (without extension, any case) that are documents in any text format: README.txt, INSTALL, …
DOCUMENT_NAMES = frozenset(
    {"readme", "install", "installing", "usage", "changes", "changelog", "history", "news", "contributing",
     "upgrading", "migrating", "migration", "faq", "authors", "hacking"}
)  # fmt: skip
# Text files that are no documentation, wherever they are.
NOT_DOCUMENTS = frozenset(
    {"license", "licence", "copying", "notice", "code_of_conduct", "codeowners", "requirements", "constraints",
     "cmakelists", "robots", "pull_request_template", "funding", "security"}
)  # fmt: skip
# Folders whose files are not the project's documentation: third-party copies, generated sites, templates.
VENDORED_FOLDERS = frozenset(
    {"third_party", "third-party", "thirdparty", "external", "extern", "vendored", "_vendor", "site", "_site",
     "public", "static", "assets"}
)  # fmt: skip
# Folders of test data: a Markdown file in them is an input or an expected output, not documentation.
TEST_DATA_FOLDERS = frozenset(
    {"tests", "test", "testing", "testdata", "test_data", "fixtures", "__snapshots__", "snapshots", "golden",
}
)  # fmt: skip
KNOWLEDGE_FOLDER = ".agentty/knowledge"  # a workspace's own notes for search_docs, beside the indexes


def doc_format(name: str) -> str | None:
    return DOC_FORMATS.get(os.path.splitext(name)[1].lower())


def document_verdict(name: str, ws_rel: str) -> str | None:
    """Whether a file found in the workspace is a document: None (yes), "" (no, silently) or a reason to report.

    Args:
        name: the file's name.
        ws_rel: its path from the workspace root.
    """
    stem, ext = os.path.splitext(name)
    stem = stem.lower()
    if stem.split(".")[0] in NOT_DOCUMENTS:
        return ""
    folders = [part.lower() for part in ws_rel.split("/")[:-1]]
    readme = stem.startswith("readme")
    if any(folder in TEST_DATA_FOLDERS for folder in folders) and not readme:
        return "test data"
    if ext.lower() in PROSE_EXTENSIONS or stem in DOCUMENT_NAMES or readme:
        return None
    if any(folder in DOCS_FOLDERS for folder in folders):
        return None
    return ""  # plain text or a config file outside a docs folder: a program's data, not prose


def prune_folder(name: str, ws_rel: str) -> bool:
    """Whether the walk of the whole workspace leaves a folder out: vendored or generated (hidden folders,
    dependency and build folders are left out of every walk)."""
    return name.lower() in VENDORED_FOLDERS


@dataclass(frozen=True)
class DocsRoots:
    """Where the documents are read.

    Args:
        workspace: the workspace root (a real path).
        folder: the one folder ``AGENTTY_DOCS_DIR`` names, resolved (None: the whole workspace).
        boundary: where the folder's files must really lie (the workspace, or a folder named outside it).
    """

    workspace: Path
    folder: Path | None = None
    boundary: Path | None = None

    def key_prefix(self, start: Path) -> str:
        """``docs:`` and the path from the workspace root to ``start`` (the absolute path when outside it)."""
        if start == self.workspace:
            return "docs:"
        if self.workspace in start.parents:
            return f"docs:{start.relative_to(self.workspace).as_posix()}/"
        return f"docs:{start.as_posix().rstrip('/')}/"


@dataclass(frozen=True)
class DocsScan:
    """What the last scan found beside its files: the translations, and how many documents each folder holds."""

    translations: Translations = field(default_factory=Translations)
    folders: tuple[tuple[str, int], ...] = ()


class DocsSource:
    """The workspace's documents (see the module text)."""

    name = "docs"

    def __init__(
        self, roots: DocsRoots, max_bytes: int, languages: Callable[[], frozenset[str] | None] | None = None
    ) -> None:
        """``languages`` says which translated languages to index besides the default (None: all)."""
        self.roots = roots
        self.max_bytes = max_bytes
        self.languages = languages or (lambda: frozenset())
        self.last = DocsScan()
        self._listings: dict[Path, ListingCache] = {}
        self._classified: tuple[frozenset[str], Translations] | None = None

    def scan(self) -> ScanResult:
        files: list[FileStamp] = []
        skipped = SkipReport()
        for start, rules in self._walks():
            listings = self._listings.setdefault(start, ListingCache())
            found = scan_tree(start, self.roots.boundary or self.roots.workspace, rules, listings)
            files.extend(found.files)
            skipped.merge(found.skipped)
        paths = [stamp.key.removeprefix("docs:") for stamp in files]
        translations, wanted = self._translations(paths), self.languages()
        kept: list[FileStamp] = []
        for stamp, path in zip(files, paths, strict=True):
            if translations.kept(path, wanted):
                kept.append(stamp)
            else:
                skipped.add("translation", path)
        kept.sort(key=lambda stamp: stamp.key)
        self.last = DocsScan(translations, _folders(stamp.key.removeprefix("docs:") for stamp in kept))
        return ScanResult(kept, skipped)

    def _walks(self) -> list[tuple[Path, WalkRules]]:
        """The folders walked, each with its rules: the one named, or the workspace and its knowledge folder."""
        accept = lambda name: doc_format(name) is not None  # noqa: E731
        if self.roots.folder is not None:
            folder = self.roots.folder
            if not folder.is_dir():
                return []
            prefix = self.roots.key_prefix(folder)
            return [(folder, WalkRules(accept, prefix, max_bytes=self.max_bytes))]
        workspace = self.roots.workspace
        rules = WalkRules(accept, "docs:", max_bytes=self.max_bytes, judge=document_verdict, prune=prune_folder)
        walks = [(workspace, rules)]
        knowledge = workspace / KNOWLEDGE_FOLDER
        # A link to a folder inside the workspace is left to the walk that reaches its target; one out of it is
        # walked, so that scan_tree refuses it and reports it (``symlink outside root``).
        linked_in = knowledge.is_symlink() and is_inside(os.path.realpath(knowledge), os.path.realpath(workspace))
        if knowledge.is_dir() and not linked_in:
            prefix = f"docs:{KNOWLEDGE_FOLDER}/"
            walks.append((knowledge, WalkRules(accept, prefix, max_bytes=self.max_bytes)))
        return walks

    def _translations(self, paths: list[str]) -> Translations:
        """The translations among ``paths``, worked out again only when the set of files changes."""
        key = frozenset(paths)
        if self._classified is None or self._classified[0] != key:
            self._classified = (key, classify(paths))
        return self._classified[1]

    def parse(self, stamp: FileStamp, data: bytes) -> LoadResult:
        loaded = decode(data)
        if loaded.text is None:
            return LoadResult(skip_reason=loaded.skip_reason)
        rel = stamp.key.removeprefix("docs:")
        fmt = doc_format(rel) or "text"
        return LoadResult((Document("docs", rel, loaded.text, language=fmt),))

    def describe(self) -> str:
        if self.roots.folder is not None:
            return f"docs folder {self.roots.folder}"
        return f"the documents of {self.roots.workspace}"


def _folders(paths: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """How many documents each folder holds, most first."""
    counts = Counter(_folder_of(path) for path in paths)
    return tuple(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _folder_of(path: str) -> str:
    """The folder ``status`` counts a document in: the first docs folder on its path, else its top folder
    (``./`` for a file at the root)."""
    parts = path.split("/")[:-1]
    for depth, part in enumerate(parts, start=1):
        if part.lower() in DOCS_FOLDERS:
            return "/".join(parts[:depth]) + "/"
    return parts[0] + "/" if parts else "./"


__all__ = [
    "DOCS_FOLDERS",
    "DOC_FORMATS",
    "DOCUMENT_NAMES",
    "KNOWLEDGE_FOLDER",
    "NOT_DOCUMENTS",
    "PROSE_EXTENSIONS",
    "TEST_DATA_FOLDERS",
    "VENDORED_FOLDERS",
    "DocsRoots",
    "DocsScan",
    "DocsSource",
    "doc_format",
    "document_verdict",
    "prune_folder",
]
