"""What the MCP resource reader hands out: the resources read, each server's report, one versioned snapshot.

Value types only, plus the rules that say which resources are text and how their text is cut (by MIME type,
else by the URI's extension). Nothing here imports the MCP SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from agentty_rag.config.mcp_resources import McpSettings
from agentty_rag.sources.docs import doc_format

READS_AT_ONCE = 4
# A listing stops after this many pages, or after ``LISTING_TIMEOUTS`` call timeouts in all, whatever the
# server says: a server that hands out a new cursor on every page would be listed for ever.
MAX_PAGES = 100
LISTING_TIMEOUTS = 3
# MIME types read as text besides text/*; a structured suffix (+json, +xml, +yaml) counts as well.
_TEXT_APPLICATIONS = frozenset(
    {
        "application/json",
        "application/yaml",
        "application/x-yaml",
        "application/toml",
        "application/xml",
        "application/javascript",
        "application/sql",
        "application/graphql",
        "application/x-sh",
    }
)
_FORMATS = {
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/mdx": "markdown",
    "text/x-rst": "rst",
    "text/prs.fallenstein.rst": "rst",
    "text/asciidoc": "asciidoc",
    "text/x-asciidoc": "asciidoc",
    "application/json": "config",
    "application/yaml": "config",
    "application/x-yaml": "config",
    "application/toml": "config",
    "text/yaml": "config",
    "text/x-yaml": "config",
}


@dataclass(frozen=True)
class ReaderOptions:
    """How resources are read: the bound on each call, the re-list period, the caps, the reads at once."""

    timeout_s: float = 5.0
    ttl_s: float = 300.0
    max_resources: int = 500
    max_bytes: int = 1024 * 1024
    reads_at_once: int = READS_AT_ONCE

    @classmethod
    def from_settings(cls, settings: McpSettings) -> ReaderOptions:
        return cls(
            settings.mcp_timeout_ms / 1000,
            float(settings.mcp_ttl_s),
            settings.mcp_max_resources,
            settings.mcp_max_bytes,
        )


@dataclass(frozen=True)
class Resource:
    """One text resource as read: its server, URI and text, and what the listing said of it."""

    server: str
    uri: str
    text: str
    mime_type: str = ""
    name: str = ""
    description: str = ""

    @property
    def format(self) -> str:
        """How the prose chunker reads it: ``markdown``, ``rst``, ``asciidoc``, ``config`` or ``text``."""
        return text_format(self.mime_type, self.uri)


@dataclass(frozen=True)
class ServerReport:
    """How one server is doing, for ``status`` and result headers.

    Args:
        state: ``starting`` until its first load ends, then ``ready`` or ``failed``.
        listed: resources its listing named (up to the cap).
        read: text resources held now.
        skipped: (reason, count) of the listed resources left out: binary, too large, a failed read.
        capped: the listing was cut (``capped_by`` says by what); the rest was not read.
        capped_by: what cut it: the resource cap, the page cap or the listing's time budget.
        error: why it failed ("" when it did not).
        failures: how many times it has failed: each failure is told once.
        freshness: how its resources are kept fresh (notifications, or a re-list every N s).
        loaded: its first load has ended, read or failed.
    """

    name: str
    origin: str
    target: str
    state: str = "starting"
    listed: int = 0
    read: int = 0
    skipped: tuple[tuple[str, int], ...] = ()
    capped: bool = False
    error: str = ""
    failures: int = 0
    freshness: str = ""
    loaded: bool = False
    capped_by: str = ""


@dataclass(frozen=True)
class Snapshot:
    """Every server's resources and report at one moment; ``version`` grows with every change."""

    version: int = 0
    resources: tuple[Resource, ...] = ()
    servers: tuple[ServerReport, ...] = ()
    problems: tuple[str, ...] = ()  # configuration entries left out, with the reason

    @property
    def loaded(self) -> bool:
        """Every server's first load has ended (read or failed)."""
        return all(server.loaded for server in self.servers)


def _base(mime: str | None) -> str:
    return (mime or "").split(";", 1)[0].strip().lower()


def is_text_type(mime: str | None) -> bool | None:
    """Whether a MIME type is text (``text/*``, JSON, YAML, XML …); None when no type is given."""
    base = _base(mime)
    if not base:
        return None
    if base.startswith("text/") or base in _TEXT_APPLICATIONS:
        return True
    return base.endswith(("+json", "+xml", "+yaml"))


def text_format(mime: str | None, uri: str) -> str:
    """The prose format of a resource: from its MIME type, else from its URI's extension, else plain text."""
    known = _FORMATS.get(_base(mime))
    if known is not None:
        return known
    if _base(mime).endswith(("+json", "+yaml")):
        return "config"
    return doc_format(urlsplit(uri).path) or "text"


__all__ = [
    "LISTING_TIMEOUTS",
    "MAX_PAGES",
    "READS_AT_ONCE",
    "ReaderOptions",
    "Resource",
    "ServerReport",
    "Snapshot",
    "is_text_type",
    "text_format",
]
