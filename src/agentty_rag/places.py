"""Where one workspace's things are: its folders, each source kind's files, and the indexes that hold them.

``Places`` resolves the folders the settings name (or their defaults) against the workspace root.
``OPENERS`` says, for each kind of the source-kind registry (``source_kinds.SOURCES``), how its files are
read in a workspace, or that the settings turn it off. ``index_config`` defines an index from the kinds the
registry puts in it, so a new kind is an entry in the registry and one here, and the workspace does not
change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentty_rag.chunking import ChunkingConfig
from agentty_rag.config import Settings
from agentty_rag.index.definition import IndexConfig
from agentty_rag.index.fields import CODE_FIELDS, CODE_SCORING, DOCS_FIELDS, DOCS_SCORING
from agentty_rag.mcp_resources.model import Snapshot
from agentty_rag.mcp_resources.source import McpSource
from agentty_rag.source_kinds import SOURCES, kinds_of
from agentty_rag.sources.base import Source
from agentty_rag.sources.code import CodeSource
from agentty_rag.sources.docs import DocsSource
from agentty_rag.sources.memory import MemorySource
from agentty_rag.sources.skills import SkillsSource
from agentty_rag.sources.walker import folder_boundary


@dataclass(frozen=True)
class Places:
    """The folders of one workspace.

    Args:
        root: the workspace root (a real path).
        settings: the folders the user named (``AGENTTY_DOCS_DIR`` ...) and which sources are on.
        resources: the configured MCP servers' resources (``AGENTTY_RAG_MCP=1``), read at first use.
    """

    root: Path
    settings: Settings
    resources: Callable[[], Snapshot] | None = None

    @property
    def state_dir(self) -> Path:
        """The workspace's ``.agentty`` folder: the indexes, skills, memory and saved settings."""
        return self.root / ".agentty"

    def resolve(self, path: Path) -> Path:
        """A path's real form, relative ones read from the workspace root."""
        return Path(os.path.realpath(path if path.is_absolute() else self.root / path))

    def boundary(self, folder: Path) -> Path:
        """Where a source folder's files must really lie (see ``folder_boundary``)."""
        return Path(folder_boundary(folder, self.root))

    def docs_folder(self) -> Path | None:
        """The docs folder as named: ``AGENTTY_DOCS_DIR``, else ``./docs``, else ``./.agentty/knowledge``."""
        if self.settings.docs_dir is not None:
            return self.settings.docs_dir
        for candidate in (self.root / "docs", self.state_dir / "knowledge"):
            if candidate.is_dir():
                return candidate
        return None

    def docs_root(self) -> Path | None:
        """The docs folder's real path (None when none exists)."""
        folder = self.docs_folder()
        return None if folder is None else self.resolve(folder)

    def skills_dirs(self) -> tuple[Path, ...]:
        """The skills folders: ``AGENTTY_SKILLS_DIRS``, else the workspace's and the user's ``.agentty/skills``."""
        if self.settings.skills_dirs is not None:
            return tuple(self.resolve(p) for p in self.settings.skills_dirs)
        dirs = [self.state_dir / "skills"]
        if self.settings.home is not None:
            dirs.append(self.settings.home / ".agentty" / "skills")
        return tuple(dirs)

    def memory_folder(self) -> Path:
        """The memory folder as named: ``AGENTTY_MEMORY_DIR``, else ``./.agentty/memory``."""
        return self.settings.memory_dir or self.state_dir / "memory"

    def memory_dir(self) -> Path:
        """The memory folder, resolved."""
        if self.settings.memory_dir is not None:
            return self.resolve(self.settings.memory_dir)
        return self.state_dir / "memory"


@dataclass(frozen=True)
class Opened:
    """A source kind's files in a workspace, and the folders its index's manifest records for it."""

    source: Source
    roots: Mapping[str, str] = field(default_factory=dict)


def _docs(places: Places) -> Opened | None:
    s = places.settings
    folder = places.docs_folder()
    if not s.docs_enabled or folder is None:
        return None
    docs_root = places.resolve(folder)
    return Opened(DocsSource(docs_root, places.boundary(folder), s.docs_max_bytes), {"docs": str(docs_root)})


def _skills(places: Places) -> Opened | None:
    s = places.settings
    if not s.skills_enabled:
        return None
    dirs = places.skills_dirs()
    return Opened(SkillsSource(dirs, places.root, s.docs_max_bytes), {"skills": os.pathsep.join(map(str, dirs))})


def _memory(places: Places) -> Opened | None:
    s = places.settings
    if not s.memory_enabled:
        return None
    folder = places.memory_dir()
    source = MemorySource(folder, places.boundary(places.memory_folder()), s.docs_max_bytes)
    return Opened(source, {"memory": str(folder)})


def _code(places: Places) -> Opened | None:
    s = places.settings
    if not s.code_enabled:
        return None
    return Opened(CodeSource(places.root, s.code_max_files, s.code_max_bytes, s.code_secrets))


def _mcp(places: Places) -> Opened | None:
    if places.resources is None:
        return None
    return Opened(McpSource(places.resources, places.settings.mcp_max_bytes))


# How each kind of the registry is read in a workspace (None: the settings turn it off).
OPENERS: Mapping[str, Callable[[Places], Opened | None]] = {
    "docs": _docs,
    "skill": _skills,
    "memory": _memory,
    "code": _code,
    "mcp": _mcp,
}


def index_names() -> tuple[str, ...]:
    """The indexes the registry's kinds live in, in registry order: ``docs``, ``code``."""
    return tuple(dict.fromkeys(spec.index for spec in SOURCES.values()))


def index_config(name: str, places: Places, state_dir: Path | None = None) -> IndexConfig:
    """The definition of one index: the sources of the kinds it holds, its fields, and how it is kept.

    Args:
        name: the index (``docs``, ``code``).
        places: the workspace's folders and settings.
        state_dir: where the index's files are kept (default: the workspace's ``.agentty``).

    Raises:
        ValueError: ``name`` is no index of the registry.
    """
    kinds = kinds_of(name)
    if not kinds:
        raise ValueError(f"unknown index {name!r}; use {' or '.join(index_names())}")
    sources: list[Source] = []
    roots = {"workspace": str(places.root)}
    for kind in kinds:
        opened = OPENERS[kind.name](places)
        if opened is not None:
            sources.append(opened.source)
            roots.update(opened.roots)
    code = any(kind.code for kind in kinds)
    s = places.settings
    return IndexConfig(
        name=name,
        state_dir=places.state_dir if state_dir is None else state_dir,
        sources=tuple(sources),
        fields=CODE_FIELDS if code else DOCS_FIELDS,
        chunking=ChunkingConfig.from_settings(s),
        rebuild_fraction=s.rebuild_fraction,
        lock_timeout_s=s.lock_timeout_ms / 1000,
        roots=roots,
        persist=all(kind.kept for kind in kinds),
        scoring=CODE_SCORING if code else DOCS_SCORING,
    )


def nothing_indexed(name: str, places: Places) -> str:
    """Why an index holds nothing, and what to do about it."""
    s = places.settings
    if name == "mcp":
        if not s.mcp_enabled:
            return "no MCP resources — AGENTTY_RAG_MCP=1 searches the resources of the MCP servers the agent uses"
        return "no MCP resources — no configured MCP server offers text resources (`agentty-rag status` lists them)"
    if name == "code":
        if not s.code_enabled:
            return "no code indexed — AGENTTY_RAG_CODE=0 turns search_code off"
        return f"no code indexed — no source files in a known language under {places.root}"
    if s.docs_dir is not None and not places.resolve(s.docs_dir).is_dir():
        return f"no docs indexed — AGENTTY_DOCS_DIR={s.docs_dir} is not a folder; point it at your docs or create it"
    return (
        "no docs indexed — set AGENTTY_DOCS_DIR or create ./docs "
        "(skills go in .agentty/skills/NAME/SKILL.md, memory in .agentty/memory/)"
    )


__all__ = ["OPENERS", "Opened", "Places", "index_config", "index_names", "nothing_indexed"]
