"""The source kinds — docs, skill, memory, code, mcp — and what the rest of the package needs to know of each.

One entry per kind says which index it lives in, whether it is source code (how it is chunked, indexed,
compressed and shown), what its ``ref`` is (a path: provenance names lines, ``scope`` can restrict it; or a
name), what a passage of it is named after, whether neighbouring passages of it are stitched, and what the
``sources`` argument of its search tool calls it, what ``status`` calls it, which folder it is read from,
whether its index is kept on disk, which setting turns it off, whether a search remembers its files for
feedback, which folder of ``.agentty/`` holds it (a team commits it, the watcher watches it), and what is said
of it in words (``Wording``): by ``status``, and by a search whose index holds nothing.
Chunking, the index fields, stitching, the filters, the budget, rendering, ``status``, the watcher, feedback,
the benchmark's labels and corpus copies and the server's argument type read these entries; none of them
names a kind. A new kind is a member of ``SourceKind`` and an entry in ``SOURCES``, here, plus the ``Source``
that reads it (``sources/``) and its entry in ``places.PLACES`` (how its files are opened in a workspace and
which folders ``status`` shows for it).

Only value types live here: the module imports nothing of the package, so every layer may read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

SourceKind = Literal["docs", "skill", "memory", "code", "mcp"]
IndexName = Literal["docs", "code", "mcp"]


@dataclass(frozen=True)
class Wording:
    """What is said of a kind in words, by ``status`` and by a search whose index holds nothing.

    An index's first kind (in registry order) speaks for the index. ``{root}`` is the workspace root,
    ``{setting}`` the folder setting as given (``AGENTTY_DOCS_DIR=notes``), ``{looked_in}`` the folders
    looked in.

    Args:
        empty: why its index holds nothing, when the kind is on.
        empty_off: why its index holds nothing, when the settings turn the kind off; none: as ``empty``.
        misplaced: why its index holds nothing, when its folder setting names no folder; none: as ``empty``.
        none_found: the next step ``status`` gives when none of its folders was found.
        none_read: the next step ``status`` gives when its index was built and holds no file.
        missing: what ``status`` says of its one folder when it does not exist (after ``does not exist``).
        none_held: what a search restricted to the kind (``sources``) answers when its index holds none of it,
            with how to add one; ``{folders}`` its folders as ``status`` shows them, ``{folder}`` the first;
            none: as ``empty``.
        none_held_off: the same when the settings turn the kind off, ``{setting}`` the variable that does;
            none: as ``empty_off``.
    """

    empty: str = ""
    empty_off: str = ""
    misplaced: str = ""
    none_found: str = ""
    none_read: str = ""
    missing: str = ""
    none_held: str = ""
    none_held_off: str = ""


@dataclass(frozen=True)
class SourceSpec:
    """What one source kind is.

    Args:
        name: what its chunks carry as ``source``, and the prefix of their provenance.
        index: the index its chunks live in.
        code: its text is source code: cut at definitions, indexed with the code fields, compressed to a
            window of lines and shown fenced. Otherwise it is prose.
        located: its ``ref`` is a file path, so provenance names the lines (``docs:guide/auth.md:20-44``),
            ``scope`` can restrict it and its path is indexed as words; otherwise ``ref`` is a name
            (``skill:NAME``) indexed as written.
        named_by: what a passage is about, for the reranker: the last part of its ``symbol`` path, its
            deepest ``heading``, or its ``ref``.
        passage: the kind a prose chunk of it gets (``section``, ``skill``, ``fact``).
        stitched: neighbouring passages of one file merge into one (a memory log's facts stay apart).
        choices: what its tool's ``sources`` argument calls it; the first is the name the tool publishes
            (none: the argument does not offer it).
        tool: the index whose search tool searches it too, merging the two rankings (``mcp`` with ``docs``);
            none: its own index's.
        kept: its index is written under ``.agentty/``; otherwise it lives in memory for the process only.
        origin: the structured content's key for where a passage came from (``server``), which its chunk's
            title starts with (see ``Chunk.origin``); none: the kind has no such origin.
        shown: what ``status`` and ``index --dry-run`` call it (``docs folder``); none: its name.
        folder_setting: the settings field naming the folder (or folders) its files are read from; none:
            the workspace root.
        copy_folder: the folder a copy of the corpus (rag-bench) keeps its files in, which ``folder_setting``
            then names; none: the copy's root.
        keeps_folder: its file is named after the folder holding it (a skill's ``SKILL.md``), so a copy keeps
            that folder and the file's name instead of the path its key names.
        switch: the settings field that turns it on or off; none: it is always on.
        learnable: its files are ones an agent opens, so a search remembers those it showed and feedback
            judges them (``AGENTTY_RAG_LEARN``); its ``ref`` is a path in the folder its files are read from.
        state_folder: its folder under ``.agentty/`` (``skills``): a team commits it, and the watcher watches
            it; none: the kind has none.
        status_key: its entry in what ``status`` reports of the sources' folders (the key in ``status
            --json``); none: ``status`` reports no folders for it.
        words: what is said of it in words (``Wording``).
    """

    name: SourceKind
    index: IndexName
    code: bool = False
    located: bool = True
    named_by: Literal["symbol", "heading", "ref"] = "heading"
    passage: str = "section"
    stitched: bool = True
    choices: tuple[str, ...] = ()
    tool: IndexName | None = None
    kept: bool = True
    origin: str = ""
    shown: str = ""
    folder_setting: str = ""
    copy_folder: str = ""
    keeps_folder: bool = False
    switch: str = ""
    learnable: bool = False
    state_folder: str = ""
    status_key: str = ""
    words: Wording = Wording()

    @property
    def searched_by(self) -> IndexName:
        """The index whose search tool searches this kind."""
        return self.tool or self.index

    @property
    def shown_name(self) -> str:
        """What ``status`` calls the kind: ``docs folder``, ``skills``, ``memory``, ``code``."""
        return self.shown or self.name

    def provenance(self, ref: str, start: int, end: int) -> str:
        """Where a passage comes from, as results name it: ``docs:docs/guide/auth.md:20-44`` (the path from the
        workspace root) or ``skill:NAME``."""
        return f"{self.name}:{ref}:{start}-{end}" if self.located else f"{self.name}:{ref}"


SOURCES: Mapping[str, SourceSpec] = {
    spec.name: spec
    for spec in (
        SourceSpec(
            "docs",
            "docs",
            choices=("docs", "doc"),
            shown="docs",
            folder_setting="docs_dir",
            copy_folder="",
            switch="docs_enabled",
            learnable=True,
            state_folder="knowledge",
            status_key="docs",
            words=Wording(
                empty=(
                    "no docs indexed — no README, Markdown, reStructuredText or AsciiDoc file found under {root} "
                    "(skills go in .agentty/skills/NAME/SKILL.md, memory in .agentty/memory/)"
                ),
                misplaced="no docs indexed — {setting} is not a folder; point it at your docs or create it",
                none_found="no docs folder found (looked in {looked_in}): create it or unset AGENTTY_DOCS_DIR",
                none_read=(
                    "no documents found under {root} (README files, Markdown, reStructuredText, AsciiDoc): add "
                    "one, or set AGENTTY_DOCS_DIR to your docs folder"
                ),
            ),
        ),
        SourceSpec(
            "skill",
            "docs",
            located=False,
            named_by="ref",
            passage="skill",
            choices=("skills", "skill"),
            shown="skills",
            folder_setting="skills_dirs",
            copy_folder=".skills",
            keeps_folder=True,
            switch="skills_enabled",
            state_folder="skills",
            status_key="skills",
            words=Wording(
                none_held=(
                    "no skills installed — none in {folders} (a skill is a folder holding a SKILL.md with a "
                    "description in its front matter: {folder}/NAME/SKILL.md)"
                ),
                none_held_off="no skills — {setting}=0 turns skills off",
            ),
        ),
        SourceSpec(
            "memory",
            "docs",
            located=False,
            named_by="ref",
            passage="fact",
            stitched=False,
            choices=("memory", "memories"),
            folder_setting="memory_dir",
            copy_folder=".memory",
            switch="memory_enabled",
            state_folder="memory",
            status_key="memory",
            words=Wording(
                missing="facts an agent learns go there",
                none_held=(
                    "no memory facts — none in {folders} (add a fact as a Markdown file there, one per fact, or "
                    'as a line {{"id": …, "text": …}} of a .jsonl log there)'
                ),
                none_held_off="no memory facts — {setting}=0 turns memory off",
            ),
        ),
        SourceSpec(
            "code",
            "code",
            code=True,
            named_by="symbol",
            switch="code_enabled",
            learnable=True,
            status_key="code",
            words=Wording(
                empty="no code indexed — no source files in a known language under {root}",
                empty_off="no code indexed — AGENTTY_RAG_CODE=0 turns search_code off",
                none_read="no source files in a known language under {root}",
            ),
        ),
        SourceSpec(
            "mcp",
            "mcp",
            located=False,
            choices=("mcp", "resources"),
            tool="docs",
            kept=False,
            origin="server",
            shown="MCP resources",
            switch="mcp_enabled",
            words=Wording(
                empty=(
                    "no MCP resources — no configured MCP server offers text resources "
                    "(`agentty-rag status` lists them)"
                ),
                empty_off=(
                    "no MCP resources — AGENTTY_RAG_MCP=1 searches the resources of the MCP servers the agent uses"
                ),
            ),
        ),
    )
}


def source_spec(name: str) -> SourceSpec:
    """The entry of one kind (``KeyError`` naming the known kinds for any other name)."""
    try:
        return SOURCES[name]
    except KeyError:
        raise KeyError(f"unknown source kind {name!r}; known: {', '.join(SOURCES)}") from None


def kinds_of(index: str) -> tuple[SourceSpec, ...]:
    """The kinds whose chunks live in ``index``, in registry order."""
    return tuple(spec for spec in SOURCES.values() if spec.index == index)


def kinds_searched_by(tool: str) -> tuple[SourceSpec, ...]:
    """The kinds an index's search tool searches (its own and those merged into it), in registry order."""
    return tuple(spec for spec in SOURCES.values() if spec.searched_by == tool)


def state_folders() -> tuple[str, ...]:
    """The folders under ``.agentty/`` that hold the kinds' files, in registry order: ``knowledge``, ``skills``,
    ``memory``."""
    return tuple(spec.state_folder for spec in SOURCES.values() if spec.state_folder)


def learnable() -> tuple[str, ...]:
    """The kinds whose files a search remembers for feedback: ``docs``, ``code``."""
    return tuple(spec.name for spec in SOURCES.values() if spec.learnable)


def choice_names(tool: str) -> tuple[str, ...]:
    """The names a search tool's ``sources`` argument publishes: ``docs``, ``skills``, ``memory``, ``mcp``."""
    return tuple(spec.choices[0] for spec in kinds_searched_by(tool) if spec.choices)


def chosen_kind(tool: str, name: str) -> SourceSpec | None:
    """The kind a ``sources`` argument names (any of its choices, case and spaces aside); None if none."""
    wanted = name.strip().lower()
    return next((spec for spec in kinds_searched_by(tool) if wanted in spec.choices), None)


if TYPE_CHECKING:
    DocsChoice = str
else:  # built from the registry, so the schema the server publishes lists exactly the kinds it offers
    DocsChoice = Literal[choice_names("docs")]


__all__ = [
    "SOURCES",
    "DocsChoice",
    "IndexName",
    "SourceKind",
    "SourceSpec",
    "Wording",
    "choice_names",
    "chosen_kind",
    "kinds_of",
    "kinds_searched_by",
    "learnable",
    "source_spec",
    "state_folders",
]
