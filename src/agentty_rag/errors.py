"""Every error agentty-rag defines, as one tree.

Two branches. ``AgenttyError`` is what a user sees: the edges translate it (a tool error, a CLI exit status)
and its message says what to do. The others are caught by the code that calls the module raising them, and
keep a standard base where callers catch that (``except OSError`` also catches ``UnsafeFile``).

AgenttyRagError                  every error agentty-rag defines
├── AgenttyError                 the message is meant for the user and says what to do
│   ├── BackendUnavailable       the configured index backend cannot be used (its extra is not installed)
│   ├── BackendUnreachable       the index backend's server did not answer (refused, timed out, an error)
│   ├── BadRequest               a tool or CLI argument is invalid (empty query, k out of range, scope outside root)
│   ├── IndexBusy                another process holds the index lock past the timeout
│   ├── IndexCorrupt             an index file could not be read; it will be rebuilt
│   │   └── IndexForeign         an index file was not written on this machine; it is rebuilt from the files
│   ├── IndexFull                the disk is full: the update is not written, the committed index answers
│   ├── IndexNotBuilt            a request met an index that needs a full build; it is built in the background
│   ├── IndexUnwritable          the index cannot be kept on disk (read-only, a link, a folder in the way); it
│   │                            lives in memory for the process
│   └── NotPublished             the shared index holds no finished publish a machine can start from
├── MalformedValue (ValueError)  config: an AGENTTY_* value does not parse; the default is used, with a warning
├── UnsafeFile (OSError)         fsguard: a path that must not be opened (a link out of its folder, not a file)
├── EmbeddingError               index.dense: an embedding request failed; the dense leg reports why
├── InjectedFault (RuntimeError) jobs: a failure AGENTTY_RAG_JOB_FAULTS asked for (the restart path, tested)
├── JsoncError (ValueError)      jsonc: the text is not JSON or JSONC
├── ResourceServerError          mcp_resources: an MCP server failed to start, answer or list; its report says why
├── ClientError                  clients: ``init`` cannot go ahead; nothing was written
│   ├── Conflict                 agentty-rag's entry differs from what ``init`` writes (replaced with --force)
│   └── Unwritable               a client file cannot be written (permissions, immutable, read-only, full)
├── StdinError (ValueError)      inject: what came on stdin is not a prompt; the hook stays quiet
├── UsageError                   rag-bench: bad arguments; exit status 2
├── QueriesError (ValueError)    rag-bench: the queries file cannot be used
├── ManifestError (ValueError)   rag-bench: the suite manifest cannot be used
└── ResultFileError (ValueError) reference: a benchmark result file cannot be used for the benchmarks page
"""

from __future__ import annotations

from pathlib import Path


class AgenttyRagError(Exception):
    """Base class of every error agentty-rag defines; catch a leaf or a branch, never this."""


class AgenttyError(AgenttyRagError):
    """Base class of the errors a user sees; ``str(error)`` is written for the user, with the remedy."""


class MalformedValue(AgenttyRagError, ValueError):
    """A raw setting value that does not parse; the message says what was expected."""


class BackendUnavailable(AgenttyError):
    """The index backend the settings name cannot be used; the message says how to make it usable."""


class NotPublished(AgenttyError):
    """The shared index's collection holds no finished publish this machine can start from (nothing published,
    being written, other index settings, a point it cannot read); the message says which."""


class BackendUnreachable(AgenttyError):
    """The index backend's server did not answer in time, refused, or answered with an error; the message is
    the short reason (``connection refused at 127.0.0.1:6333``). The local index answers meanwhile."""


class BadRequest(AgenttyError):
    """An argument is invalid."""


class IndexBusy(AgenttyError):
    """Another process is updating the index and did not finish in time."""


class IndexCorrupt(AgenttyError):
    """An index file is unreadable, truncated or from an incompatible version."""


class IndexForeign(IndexCorrupt):
    """An index file was not written on this machine (copied, committed, or sealed with another key): it is
    never believed, and is rebuilt from the working tree."""


class IndexFull(AgenttyError):
    """The disk holding the index is full: the update was rolled back; the last committed index answers."""


class IndexNotBuilt(AgenttyError):
    """The index needs a full build, which a request must not wait for (the message is the reason)."""


class IndexUnwritable(AgenttyError):
    """The index's files cannot be written safely: a read-only place, a link, or something else in the way."""


class UnsafeFile(AgenttyRagError, OSError):
    """A path that must not be opened: a link out of its folder, or not a regular file.

    ``str(error)`` is the full message; ``reason`` is the short form a skip report counts under.
    """

    def __init__(self, message: str, reason: str = "not a regular file") -> None:
        super().__init__(message)
        self.reason = reason

    def __str__(self) -> str:
        return str(self.args[0])


# The longest reason a failed request to a model server gives: a header note is one short line, whatever the
# server sent.
EMBEDDING_REASON_CHARS = 160


def short_reason(text: str) -> str:
    """``text`` as one line of at most ``EMBEDDING_REASON_CHARS`` characters (cut with an ellipsis); also what
    the shared Ollama client gives as a failed request's reason. (``__all__`` lists the errors only.)"""
    flat = " ".join(text.split())
    return flat if len(flat) <= EMBEDDING_REASON_CHARS else flat[: EMBEDDING_REASON_CHARS - 1].rstrip() + "…"


class EmbeddingError(AgenttyRagError):
    """An embedding request failed; ``reason`` is one short line (``short_reason``), meant for a result header
    (a server's long or many-line message is cut to that)."""

    def __init__(self, reason: str) -> None:
        flat = short_reason(reason)
        super().__init__(flat)
        self.reason = flat


class InjectedFault(AgenttyRagError, RuntimeError):
    """A background job's failure that ``AGENTTY_RAG_JOB_FAULTS`` asked for: the restart path, tested for real."""


class JsoncError(AgenttyRagError, ValueError):
    """The text is not JSON (or JSONC); the message names the line and column."""


class ResourceServerError(AgenttyRagError):
    """An MCP server failed (start, handshake, a call); recorded in its report, never raised to a search."""


class ClientError(AgenttyRagError):
    """init cannot go ahead (the message says why and what to do); nothing was written."""


class Conflict(ClientError):
    """agentty-rag's entry is there but differs from what init writes: replaced only with --force."""


class Unwritable(ClientError):
    """A client file ``init`` cannot write or delete (``path``, ``reason`` from the OS), after it wrote
    ``written`` (in order; usually none)."""

    def __init__(self, path: Path, reason: OSError, written: list[Path], removing: bool = False) -> None:
        self.verb = "remove" if removing else "write"
        super().__init__(f"cannot {self.verb} {path} ({reason.strerror or reason})")
        self.path, self.reason, self.written = path, reason, written


class StdinError(AgenttyRagError, ValueError):
    """What came on stdin is not a prompt (the message says why; the hook stays quiet)."""


class UsageError(AgenttyRagError):
    """Bad arguments, an unusable queries file or manifest: exit status 2 (the message says what to change)."""


class QueriesError(AgenttyRagError, ValueError):
    """The queries file cannot be used (the message names the line and the problem)."""


class ManifestError(AgenttyRagError, ValueError):
    """The manifest cannot be used (the message names the file, the line when known, and the problem)."""


class ResultFileError(AgenttyRagError, ValueError):
    """A benchmark result file cannot be used (the message names the file and the problem)."""


__all__ = [
    "AgenttyError",
    "AgenttyRagError",
    "BackendUnavailable",
    "BackendUnreachable",
    "BadRequest",
    "ClientError",
    "Conflict",
    "EmbeddingError",
    "IndexBusy",
    "IndexCorrupt",
    "IndexForeign",
    "IndexFull",
    "IndexNotBuilt",
    "IndexUnwritable",
    "InjectedFault",
    "JsoncError",
    "MalformedValue",
    "ManifestError",
    "NotPublished",
    "QueriesError",
    "ResourceServerError",
    "ResultFileError",
    "StdinError",
    "UnsafeFile",
    "Unwritable",
    "UsageError",
]
