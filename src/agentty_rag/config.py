"""Settings: the one place that reads the environment.

Every ``AGENTTY_*`` variable is declared once in ``VARIABLES`` with its type, default, bounds and a one-line
description (the README's table is checked against this list). ``load_settings(environ)`` parses them into a
frozen ``Settings``; a malformed or out-of-range value never raises: it becomes a warning that names the
variable, the bad value and the value used instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Kind = Literal["bool", "int", "float", "str", "path", "paths", "choice", "sources"]


@dataclass(frozen=True)
class Variable:
    """One environment variable: how to parse it and what it does."""

    name: str
    attr: str
    kind: Kind
    default: object
    doc: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    secret: bool = False  # never shown: reports say only whether it is set


KIB = 1024
MIB = 1024 * 1024

VARIABLES: tuple[Variable, ...] = (
    # Sources of search_docs
    Variable(
        "AGENTTY_DOCS_DIR",
        "docs_dir",
        "path",
        None,
        "Docs folder (relative to the workspace root). Unset: ./docs, else ./.agentty/knowledge.",
    ),
    Variable("AGENTTY_RAG_DOCS", "docs_enabled", "bool", True, "Index the docs folder for search_docs."),
    Variable(
        "AGENTTY_RAG_SKILLS",
        "skills_enabled",
        "bool",
        True,
        "Index installed skills (folders holding a SKILL.md).",
    ),
    Variable(
        "AGENTTY_SKILLS_DIRS",
        "skills_dirs",
        "paths",
        None,
        "Skill folders, separated by the OS path separator. Unset: ./.agentty/skills and ~/.agentty/skills.",
    ),
    Variable("AGENTTY_RAG_MEMORY", "memory_enabled", "bool", True, "Index learned memory facts."),
    Variable("AGENTTY_MEMORY_DIR", "memory_dir", "path", None, "Memory folder. Unset: ./.agentty/memory."),
    Variable(
        "AGENTTY_RAG_DOCS_MAX_BYTES",
        "docs_max_bytes",
        "int",
        1 * MIB,
        "Largest docs, skill or memory file read; larger files are skipped and reported.",
        4 * KIB,
        64 * MIB,
    ),
    # Chunking
    Variable(
        "AGENTTY_RAG_CHUNK_CHARS",
        "chunk_chars",
        "int",
        1200,
        "Target size of a prose chunk in characters (a section up to 1.5x stays whole).",
        200,
        8000,
    ),
    Variable(
        "AGENTTY_RAG_CHUNK_OVERLAP",
        "chunk_overlap",
        "int",
        150,
        "Characters repeated between consecutive chunks of one long section.",
        0,
        2000,
    ),
    Variable(
        "AGENTTY_RAG_CODE_CHUNK_CHARS",
        "code_chunk_chars",
        "int",
        2400,
        "Largest code chunk in characters; a larger definition is split into its members.",
        400,
        20000,
    ),
    # search_code's workspace walker
    Variable("AGENTTY_RAG_CODE", "code_enabled", "bool", True, "Index the workspace's source code for search_code."),
    Variable(
        "AGENTTY_RAG_CODE_MAX_FILES",
        "code_max_files",
        "int",
        4000,
        "Most source files indexed; the rest are reported as skipped.",
        1,
        1_000_000,
    ),
    Variable(
        "AGENTTY_RAG_CODE_MAX_BYTES",
        "code_max_bytes",
        "int",
        512 * KIB,
        "Largest source file indexed; larger files are reported as skipped (over 1 MiB: cut by lines).",
        1 * KIB,
        16 * MIB,
    ),
    Variable(
        "AGENTTY_RAG_CODE_SECRETS",
        "code_secrets",
        "bool",
        False,
        "Also index secrets-looking files (.env*, *.pem, *.key, id_rsa*). Off by default.",
    ),
    # Index upkeep
    Variable(
        "AGENTTY_RAG_REBUILD_FRACTION",
        "rebuild_fraction",
        "float",
        0.2,
        "Share of changed files above which an update rebuilds the index instead of patching it.",
        0.0,
        1.0,
    ),
    Variable(
        "AGENTTY_RAG_LOCK_TIMEOUT_MS",
        "lock_timeout_ms",
        "int",
        30_000,
        "How long an update waits for another process's update of the same index.",
        0,
        600_000,
    ),
    Variable(
        "AGENTTY_RAG_BUILD_WAIT_MS",
        "build_wait_ms",
        "int",
        20_000,
        "How long a search waits for a first index build before answering that it is still building.",
        0,
        600_000,
    ),
    # The dense leg
    Variable(
        "AGENTTY_RAG_DENSE",
        "dense",
        "bool",
        True,
        "Use an Ollama embedding server when one answers the start-up probe (0: never try).",
    ),
    Variable(
        "AGENTTY_OLLAMA_HOST", "ollama_host", "str", "127.0.0.1:11434", "The Ollama server, with or without http://."
    ),
    Variable("AGENTTY_EMBED_MODEL", "embed_model", "str", "nomic-embed-text", "The embedding model to ask for."),
    Variable(
        "AGENTTY_RAG_EMBED_BATCH", "embed_batch", "int", 32, "Chunks per embedding request at index time.", 1, 512
    ),
    Variable(
        "AGENTTY_RAG_EMBED_TIMEOUT_MS",
        "embed_timeout_ms",
        "int",
        2000,
        "Longest wait for a query's embedding before that search falls back to BM25.",
        100,
        60_000,
    ),
    Variable(
        "AGENTTY_RAG_DENSE_RETRY_S",
        "dense_retry_s",
        "int",
        60,
        "After repeated embedding failures mid-session, how long the dense leg stays off before a new probe.",
        1,
        86_400,
    ),
    Variable(
        "AGENTTY_RAG_BM25_WEIGHT", "bm25_weight", "float", 1.0, "Weight of the lexical leg in the fusion.", 0.0, 10.0
    ),
    Variable(
        "AGENTTY_RAG_DENSE_WEIGHT",
        "dense_weight",
        "float",
        1.0,
        "Weight of the dense leg in the fusion (0: no dense influence at all).",
        0.0,
        10.0,
    ),
    # Ranking stages
    Variable("AGENTTY_RAG_RERANK", "rerank", "bool", True, "Feature reranker after fusion."),
    Variable(
        "AGENTTY_RAG_FILES",
        "file_ranking",
        "bool",
        True,
        "Code: files scored as a whole (BM25 of the file, its best chunks, names), the file order merged with "
        "the passage order (needs the reranker).",
    ),
    Variable(
        "AGENTTY_RAG_MMR",
        "mmr",
        "bool",
        False,
        "MMR diversification with a per-file cap (off: it lowered MRR and nDCG@10 on every benchmark set).",
    ),
    Variable(
        "AGENTTY_RAG_MMR_LAMBDA",
        "mmr_lambda",
        "float",
        0.7,
        "MMR trade-off: 1 keeps the relevance order, 0 picks for novelty only.",
        0.0,
        1.0,
    ),
    Variable(
        "AGENTTY_RAG_STITCH",
        "stitch",
        "bool",
        True,
        "Merge neighbouring passages of one file and collapse near-duplicate passages.",
    ),
    # Output
    Variable(
        "AGENTTY_RAG_OUTPUT_BYTES",
        "output_bytes",
        "int",
        12_288,
        "Aggregate budget for the passage bodies of one result.",
        2 * KIB,
        64 * KIB,
    ),
    Variable(
        "AGENTTY_RAG_RELEVANCE_FLOOR",
        "relevance_floor",
        "float",
        0.30,
        "A passage is kept only if its relevance (1 for the best hit, 0 for the weakest candidate) is at least "
        "this (0 keeps all).",
        0.0,
        1.0,
    ),
    Variable(
        "AGENTTY_RAG_BUDGET_GAMMA",
        "budget_gamma",
        "float",
        1.5,
        "Bytes are shared in proportion to score ** gamma (0: equal shares).",
        0.0,
        4.0,
    ),
    Variable(
        "AGENTTY_RAG_CONF_BUDGET_FLOOR",
        "conf_budget_floor",
        "float",
        0.45,
        "Share of the output budget used at confidence 0; it ramps to all of it at confidence 1.",
        0.0,
        1.0,
    ),
    Variable(
        "AGENTTY_RAG_EXTRACTIVE",
        "extractive",
        "bool",
        True,
        "Compress long passages to the sentences / lines the query needs (0: first lines only).",
    ),
    # Proactive injection
    Variable(
        "AGENTTY_RAG_PROACTIVE",
        "proactive",
        "bool",
        None,
        "1: inject context before every turn (mode on); 0: never. Wins over .agentty/settings.json.",
    ),
    Variable(
        "AGENTTY_RAG_PROACTIVE_SOURCES",
        "proactive_sources",
        "sources",
        ("docs",),
        "What the hook retrieves from: docs, code, or docs,code.",
    ),
    Variable(
        "AGENTTY_RAG_PROACTIVE_BYTES",
        "proactive_bytes",
        "int",
        6144,
        "Budget for the passage bodies of one injected block.",
        1024,
        32 * 1024,
    ),
    Variable(
        "AGENTTY_RAG_PROACTIVE_MIN_CONFIDENCE",
        "proactive_min_confidence",
        "float",
        0.30,
        "Inject only when the retrieval's confidence is at least this.",
        0.0,
        1.0,
    ),
    Variable(
        "AGENTTY_RAG_PROACTIVE_TIMEOUT_MS",
        "proactive_timeout_ms",
        "int",
        2000,
        "The hook prints nothing and exits 0 when retrieval takes longer than this.",
        100,
        60_000,
    ),
    Variable(
        "AGENTTY_RAG_HTTP_TOKEN",
        "http_token",
        "str",
        None,
        "Bearer token every HTTP request must carry; required to serve on an address other than loopback.",
        secret=True,
    ),
    Variable(
        "AGENTTY_RAG_MEASURE",
        "measure",
        "bool",
        False,
        "rag-bench also runs every query through the output path: bytes, tokens and answer retention.",
    ),
    Variable(
        "AGENTTY_RAG_LOG_LEVEL",
        "log_level",
        "choice",
        "warning",
        "Log level on stderr.",
        choices=("debug", "info", "warning", "error"),
    ),
)

_BY_NAME = {v.name: v for v in VARIABLES}
DENSE_CONFIGURED_BY = ("AGENTTY_RAG_DENSE", "AGENTTY_OLLAMA_HOST", "AGENTTY_EMBED_MODEL")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True)
class Settings:
    """Every tunable of the package, parsed once. Build it with ``load_settings``."""

    docs_dir: Path | None = None
    docs_enabled: bool = True
    skills_enabled: bool = True
    skills_dirs: tuple[Path, ...] | None = None
    memory_enabled: bool = True
    memory_dir: Path | None = None
    docs_max_bytes: int = 1 * MIB
    chunk_chars: int = 1200
    chunk_overlap: int = 150
    code_chunk_chars: int = 2400
    code_enabled: bool = True
    code_max_files: int = 4000
    code_max_bytes: int = 512 * KIB
    code_secrets: bool = False
    rebuild_fraction: float = 0.2
    lock_timeout_ms: int = 30_000
    build_wait_ms: int = 20_000
    dense: bool = True
    ollama_host: str = "127.0.0.1:11434"
    embed_model: str = "nomic-embed-text"
    embed_batch: int = 32
    embed_timeout_ms: int = 2000
    dense_retry_s: int = 60
    bm25_weight: float = 1.0
    dense_weight: float = 1.0
    rerank: bool = True
    file_ranking: bool = True
    mmr: bool = False
    mmr_lambda: float = 0.7
    stitch: bool = True
    output_bytes: int = 12_288
    relevance_floor: float = 0.30
    budget_gamma: float = 1.5
    conf_budget_floor: float = 0.45
    extractive: bool = True
    proactive: bool | None = None
    proactive_sources: tuple[str, ...] = ("docs",)
    proactive_bytes: int = 6144
    proactive_min_confidence: float = 0.30
    proactive_timeout_ms: int = 2000
    http_token: str | None = None
    measure: bool = False
    log_level: str = "warning"
    home: Path | None = None
    # The user asked for the dense leg (AGENTTY_RAG_DENSE=1, AGENTTY_OLLAMA_HOST or AGENTTY_EMBED_MODEL set):
    # when it is unavailable, results say why; otherwise its absence is not news.
    dense_configured: bool = False
    warnings: tuple[str, ...] = field(default=(), compare=False)


def _describe_default(var: Variable) -> str:
    if var.default is None:
        return "unset"
    if isinstance(var.default, bool):
        return "1" if var.default else "0"
    if isinstance(var.default, tuple):
        return ",".join(str(v) for v in var.default)
    return str(var.default)


def _clamp(var: Variable, value: float, raw: str, warnings: list[str]) -> float:
    if var.low is not None and value < var.low:
        warnings.append(f"{var.name}={raw} is below the minimum {_fmt(var.low)}; using {_fmt(var.low)}")
        return var.low
    if var.high is not None and value > var.high:
        warnings.append(f"{var.name}={raw} is above the maximum {_fmt(var.high)}; using {_fmt(var.high)}")
        return var.high
    return value


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def parse_variable(var: Variable, raw: str, warnings: list[str]) -> object:
    """Parse one raw value; on error append a warning and return the default."""
    text = raw.strip()

    def invalid(expected: str) -> object:
        warnings.append(f"{var.name}={raw!r} is not {expected}; using the default ({_describe_default(var)})")
        return var.default

    if var.kind == "bool":
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        return invalid("a boolean (1/0, true/false, yes/no, on/off)")
    if var.kind == "int":
        try:
            number = int(text.replace("_", ""))
        except ValueError:
            return invalid("an integer")
        return int(_clamp(var, number, text, warnings))
    if var.kind == "float":
        try:
            real = float(text)
        except ValueError:
            return invalid("a number")
        if real != real:  # NaN compares unequal to itself
            return invalid("a number")
        return float(_clamp(var, real, text, warnings))
    if var.kind == "choice":
        if text.lower() in var.choices:
            return text.lower()
        return invalid("one of " + ", ".join(var.choices))
    if var.kind == "sources":
        names = tuple(dict.fromkeys(n.strip().lower() for n in text.split(",") if n.strip()))
        if not names or any(n not in ("docs", "code") for n in names):
            return invalid("a comma-separated list of docs and code")
        return names
    if var.kind == "path":
        return Path(text).expanduser() if text else var.default
    if var.kind == "paths":
        parts = [p for p in text.split(os.pathsep) if p.strip()]
        return tuple(Path(p.strip()).expanduser() for p in parts) if parts else var.default
    return text if text else var.default


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Build ``Settings`` from an environment mapping (``os.environ`` when None).

    Args:
        environ: the variables to read; tests pass a plain dict.

    Returns:
        The frozen settings; ``settings.warnings`` lists every value that was malformed or clamped.
    """
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    values: dict[str, object] = {}
    for var in VARIABLES:
        raw = env.get(var.name)
        if raw is None:
            continue
        values[var.attr] = parse_variable(var, raw, warnings)
    home_raw = env.get("HOME") or env.get("USERPROFILE")
    values["home"] = Path(home_raw) if home_raw else None
    values["dense_configured"] = any(name in env for name in DENSE_CONFIGURED_BY)
    unknown = sorted(k for k in env if k.startswith("AGENTTY_") and k not in _BY_NAME)
    for name in unknown:
        warnings.append(f"{name} is not a known agentty-rag variable; ignored (see the README's table)")
    settings = Settings(**values, warnings=tuple(warnings))  # type: ignore[arg-type]
    if settings.chunk_overlap >= settings.chunk_chars // 2:
        overlap = settings.chunk_chars // 4
        warnings.append(
            f"AGENTTY_RAG_CHUNK_OVERLAP={settings.chunk_overlap} must be under half of "
            f"AGENTTY_RAG_CHUNK_CHARS={settings.chunk_chars}; using {overlap}"
        )
        settings = Settings(**{**values, "chunk_overlap": overlap}, warnings=tuple(warnings))  # type: ignore[arg-type]
    return settings


def agentty_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``AGENTTY_*`` variables (and ``HOME``) of the environment, for tools that derive settings variants."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if k.startswith("AGENTTY_") or k in ("HOME", "USERPROFILE")}


def environment_without_agentty(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment minus every ``AGENTTY_*`` variable: the base for a child process given its own."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if not k.startswith("AGENTTY_")}


def effective_values(settings: Settings) -> dict[str, str]:
    """Every variable's effective value, as text (for reports that must say which configuration ran)."""
    out: dict[str, str] = {}
    for var in VARIABLES:
        value = getattr(settings, var.attr)
        if value is None:
            out[var.name] = ""
        elif var.secret:
            out[var.name] = "(set)"
        elif isinstance(value, bool):
            out[var.name] = "1" if value else "0"
        elif isinstance(value, tuple):
            out[var.name] = (os.pathsep if var.kind == "paths" else ",").join(str(v) for v in value)
        else:
            out[var.name] = str(value)
    return out


def variable(name: str) -> Variable:
    """The declaration of one variable (KeyError for an unknown name)."""
    return _BY_NAME[name]


__all__ = [
    "VARIABLES",
    "Settings",
    "Variable",
    "agentty_environment",
    "effective_values",
    "environment_without_agentty",
    "load_settings",
    "parse_variable",
    "variable",
]
