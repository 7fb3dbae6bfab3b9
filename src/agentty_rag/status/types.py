"""What ``agentty-rag status`` and ``index --dry-run`` report, as values.

``status_report`` gathers them from a workspace, ``render`` shows them: ``status`` as text for a person and,
with ``--json``, as data. The data is the report itself, field for field (``dataclasses.asdict``): a
field's name is its key in ``status --json``, and the order of the fields is the order of the keys.

Only value types live here: the module imports nothing of the package, so every layer may read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Folder:
    """A folder a source reads: its path, how ``status`` shows it (``./docs``, ``~/.agentty/skills``)."""

    path: str
    shown: str
    exists: bool


# What ``status`` reports of one source kind's folders: whether the kind is switched on, and where its files are
# read from, in one of four shapes (``render`` shows each shape its own way; the kind's entry in
# ``places.PLACES`` picks its shape).


@dataclass(frozen=True)
class FoundFolder:
    """A source found where it lies (docs): the folder read (None: none), where it was looked for, the folders
    that hold its files (each with its count, most first), the translated languages left out (each with its
    count) and those indexed besides the default."""

    enabled: bool
    folder: Folder | None
    looked_in: tuple[str, ...]
    found: tuple[tuple[str, int], ...] = ()
    translations: tuple[tuple[str, int], ...] = ()
    languages: tuple[str, ...] = ()


@dataclass(frozen=True)
class Folders:
    """A source read from several folders (skills), in the order a name found again is shadowed."""

    enabled: bool
    folders: tuple[Folder, ...]


@dataclass(frozen=True)
class OneFolder:
    """A source read from one folder (memory)."""

    enabled: bool
    folder: Folder


@dataclass(frozen=True)
class RootFolder:
    """A source read from the workspace root (code): ``status`` says only when it is off."""

    enabled: bool
    folder: Folder


SourceFolders = FoundFolder | Folders | OneFolder | RootFolder
# Where each source kind is read from, and whether it is switched on, by the kind's ``status_key`` in registry
# order (``docs``, ``skills``, ``memory``, ``code``).
Sources = Mapping[str, SourceFolders]


@dataclass(frozen=True)
class Redacted:
    """Secrets replaced before indexing, in how many files, and the first of those files."""

    secrets: int
    files: int
    examples: tuple[str, ...]


@dataclass(frozen=True)
class Skipped:
    """Files left out, counted by reason, with the first few paths of each reason."""

    counts: Mapping[str, int]
    examples: Mapping[str, tuple[str, ...]]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Manifest:
    """What the stored index must match to be reused as is, and the folders it was built from."""

    schema_version: int
    tokenizer_version: str
    chunking: Mapping[str, object]
    fields: tuple[str, ...]
    fields_version: str
    roots: Mapping[str, str]


@dataclass(frozen=True)
class Vectors:
    """The embedding backend's state, and how many of an index's chunks have a vector."""

    state: str
    description: str
    embedded: int
    chunks: int
    leg_check: str = ""  # the dense leg's self-check of this index (``leg_check``): its verdict, or why none
    counted: bool = False  # ``embedded`` is known: by this process's profile, or by a running server's
    rate: float = 0.0  # chunks a second a running server embeds this index at (0: it does not now)
    eta_s: float | None = None  # seconds left at that rate (None: unknown)


@dataclass(frozen=True)
class IndexState:
    """One index: what it holds, whether it is fresh, where it is kept, what it left out.

    ``updated_at`` is ``never`` for an index not built yet; ``by_source`` then counts the files a build
    would read.
    """

    index: str
    path: str
    files: int
    chunks: int
    updated_at: str
    generation: int
    fresh: bool
    stale_reason: str
    storage: str
    redacted: Redacted
    manifest: Manifest
    skipped: Skipped
    by_source: Mapping[str, int]
    dense: Vectors
    freshness: str = ""  # how this process learns of changes (a scan per search, or a watcher)
    selection: tuple[str, ...] = ()  # which files a file cap left out, and by which rule
    backend: str = "local"  # where its BM25 postings are (a Qdrant server: which, and whether it answered)
    foreign_replaced_at: str = ""  # when an index built elsewhere was found here, not used, and rebuilt

    @property
    def built(self) -> bool:
        return self.updated_at != "never"

    @property
    def to_index(self) -> int:
        """The files found for it, by every source."""
        return sum(self.by_source.values())


@dataclass(frozen=True)
class Where:
    """The workspace: its root, where the search for it started, and how it was found."""

    root: str
    start: str
    how: str


@dataclass(frozen=True)
class Dense:
    """The session's embedding backend, and whether the user asked for it."""

    state: str
    description: str
    configured: bool
    answering: bool = False  # the embedding server answered this process's probe
    server: str = ""  # what a running server's leg does, in words ("" when no server runs here)
    server_state: str = ""  # that leg's state: ready, unavailable, unprobed ("" when no server runs here)
    probe_in_s: float | None = None  # when that server probes again a leg not ready (None: not planned)
    answered_s_ago: float | None = None  # when the embedding server last answered that server (None: never)


@dataclass(frozen=True)
class McpServer:
    """One configured MCP server whose resources ``search_docs`` reads, and how it is doing.

    ``state`` is ``starting``, ``ready`` or ``failed`` (``error`` says why), ``not started`` (approved, but
    ``status`` starts no server) or ``not approved`` (never started; ``error`` says how to approve it);
    ``read`` counts the text resources held, ``skipped`` the listed ones left out by reason, ``capped`` a
    listing cut at a cap; ``approval`` says what approved it.
    """

    name: str
    origin: str
    target: str
    state: str
    listed: int
    read: int
    skipped: Mapping[str, int]
    capped: bool
    error: str
    failures: int
    freshness: str
    approval: str = ""
    capped_by: str = ""  # what cut its listing: the resource cap, the page cap, the listing's time budget


@dataclass(frozen=True)
class McpResources:
    """Other MCP servers' resources (``AGENTTY_RAG_MCP``): on or off, the configuration files read, the entries
    left out with their reasons, the servers, and the chunks their in-memory index holds."""

    enabled: bool = False
    files: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    servers: tuple[McpServer, ...] = ()
    chunks: int = 0


@dataclass(frozen=True)
class StateFolder:
    """The workspace's ``.agentty/``: whether it exists, how git is kept off its machine state (``gitignore``:
    ``ours``, ``edited`` or ``missing``), and which of the entries a team commits it holds."""

    exists: bool = False
    gitignore: str = "missing"
    committed: tuple[str, ...] = ()


@dataclass(frozen=True)
class StatusReport:
    """Everything ``agentty-rag status`` says, and what a user can do about it (``next``), most useful first."""

    workspace: Where
    sources: Sources
    indexes: Mapping[str, IndexState]
    dense: Dense
    next: tuple[str, ...]
    mcp: McpResources = McpResources()
    generation: str = ""  # the optional generation stages' model, when one is switched on ("" when none is)
    state: StateFolder = StateFolder()  # .agentty/: what git ignores, what a team commits
    jobs: tuple[Job, ...] = ()  # a running server's background jobs (none when no server runs)


@dataclass(frozen=True)
class Job:
    """One background job of a running server: ``embed:code``, how many of its runs failed, and how it is."""

    key: str
    failures: int
    description: str


@dataclass(frozen=True)
class IndexPreview:
    """What a build of one index would read, from a scan alone (``index --dry-run``).

    The ``by_*`` counts are ranked, most files first; ``by_kind`` counts languages for the code index and
    sources for the others, as ``kind_label`` says.
    """

    name: str
    files: int
    bytes: int
    skipped: str
    by_folder: tuple[tuple[str, int], ...]
    kind_label: str
    by_kind: tuple[tuple[str, int], ...]
    largest: tuple[tuple[str, int], ...]


__all__ = [
    "Dense",
    "Folder",
    "Folders",
    "Job",
    "FoundFolder",
    "IndexPreview",
    "IndexState",
    "Manifest",
    "McpResources",
    "McpServer",
    "OneFolder",
    "Redacted",
    "RootFolder",
    "Skipped",
    "SourceFolders",
    "Sources",
    "StateFolder",
    "StatusReport",
    "Vectors",
    "Where",
]
