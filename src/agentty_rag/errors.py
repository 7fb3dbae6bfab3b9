"""Errors a user sees, as a small tree. They are translated only at the edges (tool errors, CLI exit codes).

AgenttyError                 base: the message is meant for the user and says what to do
├── BadRequest               a tool or CLI argument is invalid (empty query, k out of range, scope outside root)
├── IndexBusy                another process holds the index lock past the timeout
├── IndexCorrupt             an index file could not be read; it will be rebuilt
├── IndexNotBuilt            a request met an index that needs a full build; it is built in the background
└── IndexUnwritable          the index cannot be kept on disk (read-only, a link, a folder in the way); it
                             lives in memory for the process
"""

from __future__ import annotations


class AgenttyError(Exception):
    """Base class; ``str(error)`` is written for the user, with the remedy."""


class BadRequest(AgenttyError):
    """An argument is invalid."""


class IndexBusy(AgenttyError):
    """Another process is updating the index and did not finish in time."""


class IndexCorrupt(AgenttyError):
    """An index file is unreadable, truncated or from an incompatible version."""


class IndexNotBuilt(AgenttyError):
    """The index needs a full build, which a request must not wait for (the message is the reason)."""


class IndexUnwritable(AgenttyError):
    """The index's files cannot be written safely: a read-only place, a link, or something else in the way."""


__all__ = ["AgenttyError", "BadRequest", "IndexBusy", "IndexCorrupt", "IndexNotBuilt", "IndexUnwritable"]
