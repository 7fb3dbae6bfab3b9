"""Where one workspace's things are: its folders, each source kind's files, and the indexes that hold them.

``Places`` resolves the folders the settings name (or their defaults) against the workspace root.
``PLACES`` says, for each kind of the source-kind registry (``source_kinds.SOURCES``), how its files are
read in a workspace (or that the settings turn it off), which folders ``status`` shows for it, and which folder
its paths are in. ``index_config`` defines an index from the kinds the registry puts in it, and
``nothing_indexed`` says why an index is empty in its first kind's words, so a new kind is an entry in the
registry and one here, and the workspace, ``status`` and the watcher do not change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentty_rag.chunking import ChunkingConfig
from agentty_rag.config import VARIABLES, Settings
from agentty_rag.index.lexical.fields import CODE_FIELDS, CODE_SCORING, DOCS_FIELDS, DOCS_SCORING
from agentty_rag.index.qdrant.target import QdrantTarget
from agentty_rag.index.storage.definition import IndexConfig
from agentty_rag.mcp_resources.model import Snapshot
from agentty_rag.mcp_resources.source import McpSource
from agentty_rag.source_kinds import SOURCES, SourceSpec, kinds_of, source_spec
from agentty_rag.sources.base import Source
from agentty_rag.sources.code import CodeSource
from agentty_rag.sources.docs import DocsRoots, DocsSource
from agentty_rag.sources.memory import MemorySource
from agentty_rag.sources.skills import SkillsSource
from agentty_rag.sources.translations import language_tag
from agentty_rag.sources.walker import folder_boundary
from agentty_rag.state.languages import add_asked_language, asked_languages
from agentty_rag.state.machine_key import machine_key
from agentty_rag.status.types import Folder, Folders, FoundFolder, OneFolder, RootFolder, SourceFolders
from agentty_rag.workspace.repository import collection_name, repository_name


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
    asked: set[str] = field(default_factory=set, compare=False, hash=False)  # languages asked this process

    @property
    def seal_key(self) -> bytes:
        """This machine's key, which seals the indexes' checksums (``state.machine_key``)."""
        return machine_key(self.settings.state_home)

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

    def shown(self, path: Path) -> str:
        """A folder as ``status`` shows it: ``./docs`` in the workspace, ``~/.agentty/skills`` in the home folder."""
        home = self.settings.home
        if path == self.root or self.root in path.parents:
            return "./" + path.relative_to(self.root).as_posix()
        if home is not None and home in path.parents:
            return "~/" + path.relative_to(home).as_posix()
        return str(path)

    def status_folder(self, path: Path) -> Folder:
        """A folder as ``status`` reports it: its path, how it is shown, whether it exists."""
        return Folder(str(path), self.shown(path), path.is_dir())

    def docs_folder(self) -> Path | None:
        """The one docs folder ``AGENTTY_DOCS_DIR`` names (None: the documents of the whole workspace)."""
        return self.settings.docs_dir

    def docs_root(self) -> Path:
        """Where the docs' paths start: the named folder's real path, else the workspace root."""
        folder = self.docs_folder()
        return self.root if folder is None else self.resolve(folder)

    def docs_languages(self) -> frozenset[str] | None:
        """The translated languages the docs index holds besides the default (None: every one):
        ``AGENTTY_DOCS_LANGUAGES`` and the languages questions asked for (``.agentty/languages.json``)."""
        named = self.settings.docs_languages or ()
        if any(name.lower() == "all" for name in named):
            return None
        tags = {tag for name in named if (tag := language_tag(name)) is not None}
        return frozenset(tags | self.asked | asked_languages(self.state_dir))

    def ask_language(self, language: str) -> None:
        """Index the docs' translations into ``language`` from now on (a question asked in it)."""
        self.asked.add(language)
        add_asked_language(self.state_dir, language)

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


def docs_source(places: Places) -> DocsSource:
    """The workspace's documents, as the settings narrow them."""
    folder = places.docs_folder()
    if folder is None:
        roots = DocsRoots(places.root)
    else:
        roots = DocsRoots(places.root, places.resolve(folder), places.boundary(folder))
    return DocsSource(roots, places.settings.docs_max_bytes, places.docs_languages)


def _docs(places: Places) -> Opened | None:
    if not places.settings.docs_enabled:
        return None
    return Opened(docs_source(places), {"docs": str(places.docs_root())})


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


def _docs_status(places: Places) -> FoundFolder:
    """Where the documents were found: the folder named, or the workspace's folders that hold documents, each
    with its count, and the translations left out."""
    s, root = places.settings, places.docs_root()
    looked_in = (str(s.docs_dir),) if s.docs_dir is not None else ("every document under ./",)
    if not s.docs_enabled or not root.is_dir():
        return FoundFolder(s.docs_enabled, None, looked_in)
    source = docs_source(places)
    source.scan()
    scan = source.last
    folder = places.status_folder(root)
    if s.docs_dir is None:
        folder = replace(folder, shown="every document under ./")
    translations = scan.translations
    indexed = places.docs_languages()
    left_out = tuple(
        (lang, n) for lang, n in translations.counts.items() if indexed is not None and lang not in indexed
    )
    kept = tuple(lang for lang in translations.counts if indexed is None or lang in indexed)
    return FoundFolder(s.docs_enabled, folder, looked_in, scan.folders, left_out, kept)


def _skills_status(places: Places) -> Folders:
    return Folders(places.settings.skills_enabled, tuple(map(places.status_folder, places.skills_dirs())))


def _memory_status(places: Places) -> OneFolder:
    return OneFolder(places.settings.memory_enabled, places.status_folder(places.memory_dir()))


def _code_status(places: Places) -> RootFolder:
    return RootFolder(places.settings.code_enabled, places.status_folder(places.root))


@dataclass(frozen=True)
class KindPlaces:
    """One source kind in a workspace.

    Args:
        open: how its files are read (None: the settings turn it off).
        status: what ``status`` reports of its folders, for a kind with a ``status_key``.
        paths_in: the folder its ``ref`` paths are relative to, for a learnable kind (None: none found).
    """

    open: Callable[[Places], Opened | None]
    status: Callable[[Places], SourceFolders] | None = None
    paths_in: Callable[[Places], Path | None] | None = None


# Each kind of the registry in a workspace.
PLACES: Mapping[str, KindPlaces] = {
    "docs": KindPlaces(_docs, _docs_status, lambda places: places.root),
    "skill": KindPlaces(_skills, _skills_status),
    "memory": KindPlaces(_memory, _memory_status),
    "code": KindPlaces(_code, _code_status, lambda places: places.root),
    "mcp": KindPlaces(_mcp),
}


def source_folders(places: Places) -> dict[str, SourceFolders]:
    """What ``status`` reports of each kind's folders, by its ``status_key``, in registry order."""
    folders: dict[str, SourceFolders] = {}
    for spec in SOURCES.values():
        status = PLACES[spec.name].status
        if spec.status_key and status is not None:
            folders[spec.status_key] = status(places)
    return folders


def paths_in(places: Places) -> dict[str, Path | None]:
    """The folder each learnable kind's ``ref`` paths are relative to (None: none found), by kind."""
    folders: dict[str, Path | None] = {}
    for spec in SOURCES.values():
        found = PLACES[spec.name].paths_in
        if spec.learnable and found is not None:
            folders[spec.name] = found(places)
    return folders


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
        opened = PLACES[kind.name].open(places)
        if opened is not None:
            sources.append(opened.source)
            roots.update(opened.roots)
    code = any(kind.code for kind in kinds)
    s = places.settings
    state_dir = places.state_dir if state_dir is None else state_dir
    persist = all(kind.kept for kind in kinds)
    qdrant = s.backend == "qdrant" and code and persist
    shared = _shared(places) if qdrant and s.qdrant_url is not None else None
    postings = _qdrant(name, places, state_dir) if qdrant and shared is None else None
    return IndexConfig(
        name=name,
        state_dir=state_dir,
        sources=tuple(sources),
        fields=CODE_FIELDS if code else DOCS_FIELDS,
        chunking=ChunkingConfig.from_settings(s),
        rebuild_fraction=s.rebuild_fraction,
        lock_timeout_s=s.lock_timeout_ms / 1000,
        roots=roots,
        persist=persist,
        scoring=CODE_SCORING if code else DOCS_SCORING,
        lexical="sqlite" if postings is None else "qdrant",
        vector_store="sqlite" if postings is None else "qdrant",
        qdrant=postings,
        shared=shared,
        seal_key=places.seal_key,
    )


def _qdrant(name: str, places: Places, state_dir: Path) -> QdrantTarget:
    """Where the code index keeps its postings in Qdrant's engine in-process: under ``.agentty/qdrant/`` (its
    dense vectors' shards go beside it, ``qdrant.vectors.dense_path``)."""
    return QdrantTarget(path=state_dir / "qdrant" / name, collection=name)


def _shared(places: Places) -> QdrantTarget:
    """The shared index the code index starts from: its server and the collection of the repository's branch."""
    s = places.settings
    name = s.qdrant_collection or collection_name(repository_name(places.root), s.qdrant_branch)
    return QdrantTarget(
        path=places.state_dir / "qdrant" / "shared",
        collection=name,
        url=s.qdrant_url,
        api_key=s.qdrant_api_key,
        timeout_s=s.qdrant_timeout_ms / 1000,
        retry_s=float(s.qdrant_retry_s),
    )


def switched_on(spec: SourceSpec, settings: Settings) -> bool:
    """Whether the settings leave a kind on (a kind without a ``switch`` always is)."""
    return not spec.switch or bool(getattr(settings, spec.switch))


def misplaced(spec: SourceSpec, places: Places) -> str:
    """A kind's folder setting as given (``AGENTTY_DOCS_DIR=notes``) when it names one folder and that is not a
    folder; "" otherwise."""
    named = getattr(places.settings, spec.folder_setting) if spec.folder_setting else None
    if not isinstance(named, Path) or places.resolve(named).is_dir():
        return ""
    variable = next(v.name for v in VARIABLES if v.attr == spec.folder_setting)
    return f"{variable}={named}"


def nothing_held(kinds: Sequence[str], places: Places) -> str:
    """What a search restricted to ``kinds`` answers when its index holds none of them: each kind's words
    (``Wording.none_held``: where its files go and how to add one, or which setting turns it off; a kind
    without them says its ``empty``)."""
    return "; ".join(_none_held(source_spec(kind), places) for kind in kinds)


def _none_held(spec: SourceSpec, places: Places) -> str:
    words = spec.words
    if not switched_on(spec, places.settings):
        setting = next(v.name for v in VARIABLES if v.attr == spec.switch)
        return (words.none_held_off or words.empty_off or words.empty).format(setting=setting, root=places.root)
    text = words.none_held or words.empty
    folders = _shown_folders(spec, places) if "{folder" in text else ("",)
    return text.format(root=places.root, folders=", ".join(folders), folder=folders[0])


def _shown_folders(spec: SourceSpec, places: Places) -> tuple[str, ...]:
    """A kind's folders as ``status`` shows them (``./.agentty/memory``, ``~/.agentty/skills``)."""
    status = PLACES[spec.name].status
    found = status(places) if status is not None else None
    if isinstance(found, Folders):
        shown = tuple(folder.shown for folder in found.folders)
    elif isinstance(found, (OneFolder, RootFolder)):
        shown = (found.folder.shown,)
    elif isinstance(found, FoundFolder):
        shown = (found.folder.shown,) if found.folder is not None else found.looked_in
    else:
        shown = ()
    return shown or ("./",)


def nothing_indexed(name: str, places: Places) -> str:
    """Why an index holds nothing, and what to do about it, in the words of its first kind."""
    spec = kinds_of(name)[0]
    words = spec.words
    if words.empty_off and not switched_on(spec, places.settings):
        return words.empty_off
    setting = misplaced(spec, places) if words.misplaced else ""
    if setting:
        return words.misplaced.format(setting=setting)
    return words.empty.format(root=places.root)


__all__ = [
    "PLACES",
    "KindPlaces",
    "Opened",
    "Places",
    "docs_source",
    "index_config",
    "index_names",
    "misplaced",
    "nothing_held",
    "nothing_indexed",
    "paths_in",
    "source_folders",
    "switched_on",
]
