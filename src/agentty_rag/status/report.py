"""``agentty-rag status`` and ``index --dry-run``, gathered: what is indexed, whether it is fresh, what was
skipped and why, and what to do next, as the typed report of ``status_types`` that ``render`` shows.

Reading never writes: a workspace that was never indexed stays untouched.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agentty_rag.config import Settings
from agentty_rag.fsguard import read_regular
from agentty_rag.index.vectors.dense import EmbeddingProfile
from agentty_rag.index.vectors.local_embedder import INSTALL as LOCAL_INSTALL
from agentty_rag.render import render_preview
from agentty_rag.retrieve.generator import generator_for
from agentty_rag.source_kinds import SOURCES, SourceSpec, kinds_of, source_spec
from agentty_rag.sources.languages import file_language, named_by_text
from agentty_rag.sources.text import decode
from agentty_rag.state.dense import running_leg
from agentty_rag.state.folder import describe as describe_state_dir
from agentty_rag.state.watch import running_server, server_jobs
from agentty_rag.status.types import (
    Dense,
    FoundFolder,
    IndexPreview,
    IndexState,
    Job,
    Manifest,
    McpResources,
    McpServer,
    Redacted,
    Skipped,
    Sources,
    StatusReport,
    Vectors,
    Where,
)
from agentty_rag.types import FileStamp
from agentty_rag.workspace.discovery import Located
from agentty_rag.workspace.places import index_names, source_folders, switched_on
from agentty_rag.workspace.service import Workspace

# A running server tells its embedding rate at least this often while it embeds: an older rate is not shown.
RATE_GOOD_FOR_S = 60.0

# Skip reasons a setting can lift, and the variable that does.
LIFTED_BY = {
    ("code", "too large"): "AGENTTY_RAG_CODE_MAX_BYTES",
    ("code", "over file cap"): "AGENTTY_RAG_CODE_MAX_FILES",
    ("code", "secret-looking name"): "AGENTTY_RAG_CODE_SECRETS=1",
    ("docs", "too large"): "AGENTTY_RAG_DOCS_MAX_BYTES",
}


def sources(workspace: Workspace) -> Sources:
    """Where each source kind is read from, whether it exists, and whether it is switched on."""
    return source_folders(workspace.places)


def kept_indexes() -> tuple[str, ...]:
    """The indexes kept on disk, which ``status`` reports: ``docs``, ``code``."""
    return tuple(name for name in index_names() if all(spec.kept for spec in kinds_of(name)))


def index_state(
    record: Mapping[str, Any], vectors: Mapping[str, Any], embedding: Mapping[str, Any] | None = None
) -> IndexState:
    """One index's state, from the index's own status record and its vectors' (``CorpusIndex.status``,
    ``Workspace.dense_status``), and what a running server says of its embedding (``embedding``: its
    ``rate`` and ``eta_s``; ``counted`` in ``vectors`` when the vectors were counted by a known profile)."""
    embedding = embedding or {}
    redacted, manifest, skipped = record["redacted"], record["manifest"], record["skipped"]
    return IndexState(
        index=record["index"],
        path=record["path"],
        files=record["files"],
        chunks=record["chunks"],
        updated_at=record["updated_at"],
        generation=record["generation"],
        fresh=record["fresh"],
        stale_reason=record["stale_reason"],
        storage=record["storage"],
        redacted=Redacted(redacted["secrets"], redacted["files"], tuple(redacted["examples"])),
        manifest=Manifest(
            schema_version=manifest["schema_version"],
            tokenizer_version=manifest["tokenizer_version"],
            chunking=manifest["chunking"],
            fields=tuple(manifest["fields"]),
            fields_version=manifest["fields_version"],
            roots=manifest["roots"],
        ),
        skipped=Skipped(skipped["counts"], {reason: tuple(paths) for reason, paths in skipped["examples"].items()}),
        by_source=record["by_source"],
        dense=Vectors(
            vectors["state"],
            vectors["description"],
            vectors["embedded"],
            vectors["chunks"],
            vectors.get("leg_check", ""),
            bool(vectors.get("counted", vectors["state"] == "ready")),
            float(embedding.get("rate") or 0.0),
            _number(embedding.get("eta_s")),
        ),
        freshness=record.get("freshness", ""),
        selection=tuple(record.get("selection", ())),
        backend=record.get("backend", "local"),
        foreign_replaced_at=record.get("foreign_replaced_at", ""),
    )


def gather(workspace: Workspace, located: Located) -> StatusReport:
    """Everything ``status`` reports (``--json`` prints it as is)."""
    leg = running_leg(workspace.state_dir) if workspace.settings.dense else None  # a server's dense leg
    known = _profile(leg)
    embedding = leg.get("indexes") if leg is not None and _age(leg) <= RATE_GOOD_FOR_S else None
    indexes: dict[str, IndexState] = {}
    for name in kept_indexes():
        vectors = {**workspace.dense_status(name, known)}
        vectors["counted"] = vectors["state"] == "ready" or known is not None
        told = embedding.get(name) if isinstance(embedding, dict) else None
        indexes[name] = index_state(workspace.index(name).status(), vectors, told if isinstance(told, dict) else None)
    server = running_server(workspace.state_dir)  # a server's watcher, seen from this process
    if server:
        indexes = {name: replace(state, freshness=server) for name, state in indexes.items()}
    report = StatusReport(
        workspace=Where(str(workspace.root), str(located.start), located.how),
        sources=sources(workspace),
        indexes=indexes,
        dense=dense_state(workspace, leg),
        next=(),
        mcp=mcp_resources(workspace),
        state=describe_state_dir(workspace.state_dir),
        jobs=tuple(Job(key, failures, text) for key, failures, text in server_jobs(workspace.state_dir)),
    )
    return replace(report, next=tuple(next_steps(workspace, report)), generation=generation(workspace.settings))


def dense_state(workspace: Workspace, leg: Mapping[str, Any] | None) -> Dense:
    """The embedding backend as this process's probe found it, and as a running server's leg says it is
    (``leg``, ``state/dense.py``): its state, when it probes again, when the embedding server last answered."""
    dense = workspace.dense
    own = Dense(
        dense.status.state, dense.describe(), workspace.settings.dense_configured, dense.status.state == "ready"
    )
    if leg is None:
        return own
    age = _age(leg)
    probe_in = _number(leg.get("probe_in_s"))
    if probe_in is not None:
        probe_in = max(0.0, probe_in - age)
    answered_at = _number(leg.get("answered_at")) or 0.0
    ago = max(0.0, time.time() - answered_at) if answered_at > 0 else None
    state = str(leg.get("state", ""))
    words = [f"the server (pid {leg.get('pid')}): {leg.get('description', state)}"]
    if state != "ready" and probe_in is not None:
        when = f"in {probe_in:.0f} s" if probe_in >= 1 else "now"
        words.append(("cooling down after failures, " if leg.get("cooling") else "") + f"probes again {when}")
    if ago is not None:
        words.append(f"the embedding server last answered it {_ago(ago)}")
    return replace(own, server="; ".join(words), server_state=state, probe_in_s=probe_in, answered_s_ago=ago)


def _age(leg: Mapping[str, Any]) -> float:
    """Seconds since a running server wrote its leg's record."""
    return max(0.0, time.time() - (_number(leg.get("written_at")) or time.time()))


def _ago(seconds: float) -> str:
    if seconds < 1:
        return "just now"
    if seconds < 120:
        return f"{seconds:.0f} s ago"
    return f"{seconds / 60:.0f} min ago"


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _profile(leg: Mapping[str, Any] | None) -> EmbeddingProfile | None:
    """The embedding profile a running server's probe found (None when it found none, or none runs)."""
    told = leg.get("profile") if leg is not None else None
    if not isinstance(told, dict):
        return None
    model, dimension = told.get("model"), told.get("dimension")
    if not isinstance(model, str) or not isinstance(dimension, int) or isinstance(dimension, bool) or dimension <= 0:
        return None
    return EmbeddingProfile(model, dimension)


def generation(settings: Settings) -> str:
    """The generation stages that are on and their model's state ("" when none is on)."""
    on = [name for name, switched in (("expand", settings.expand), ("hyde", settings.hyde)) if switched]
    if not on:
        return ""
    return f"{', '.join(on)} on; {generator_for(settings).describe()}"


def mcp_resources(workspace: Workspace) -> McpResources:
    """The configured MCP servers: approved or not (with how to approve), and, once a search started them,
    how each is doing. ``status`` itself never starts a server."""
    if not workspace.resources.enabled:
        return McpResources()
    hub = workspace.resources.hub
    configured = hub.servers if hub is not None else workspace.resources.configured()
    why = dict(configured.approved)
    servers: list[McpServer] = []
    chunks = 0
    if hub is not None:
        index = workspace.index("mcp")
        index.refresh()  # in memory: nothing is written
        chunks = index.n_chunks
        snapshot = hub.snapshot()
        servers += [
            McpServer(
                s.name,
                s.origin,
                s.target,
                s.state,
                s.listed,
                s.read,
                dict(s.skipped),
                s.capped,
                s.error,
                s.failures,
                s.freshness,
                why.get(s.name, ""),
                s.capped_by,
            )
            for s in snapshot.servers
        ]
    else:
        servers += [
            McpServer(
                spec.name,
                spec.origin,
                spec.target,
                "not started",
                0,
                0,
                {},
                False,
                f"{why.get(spec.name, 'approved')}; status starts no server, search_docs does",
                0,
                "",
                why.get(spec.name, ""),
            )
            for spec in configured.servers
        ]
    servers += [
        McpServer(u.name, u.origin, "", "not approved", 0, 0, {}, False, u.how, 0, "") for u in configured.unapproved
    ]
    return McpResources(True, configured.files, configured.problems, tuple(servers), chunks)


def next_steps(workspace: Workspace, report: StatusReport) -> list[str]:
    """What a user can do about what the report shows, most useful first."""
    s = workspace.settings
    steps = [step for spec in kinds_of_report(report) if (step := _not_found(spec, report.sources))]
    indexes = report.indexes
    unbuilt = [name for name, state in indexes.items() if not state.built and state.to_index]
    if unbuilt:
        which = "all" if len(unbuilt) == len(kept_indexes()) else unbuilt[0]
        steps.append(f"`agentty-rag index {which}` builds the index now (the first search would build it anyway)")
    for name, state in indexes.items():
        first = kinds_of(name)[0]  # an index's first kind speaks for it
        nothing = state.files == 0 and (state.built or not state.to_index)
        if first.words.none_read and switched_on(first, s) and nothing:
            steps.append(first.words.none_read.format(root=workspace.root))
    for name, state in indexes.items():
        for reason, count in state.skipped.counts.items():
            variable = LIFTED_BY.get((name, reason))
            if variable:
                steps.append(f"{count} {name} file(s) skipped as {reason}: {variable} includes them")
    steps += [
        f"MCP server {server.name} failed: check its entry in {server.origin} (search_docs answers without it)"
        for server in report.mcp.servers
        if server.state == "failed"
    ]
    dense = report.dense
    if dense.state == "unavailable" and dense.server_state == "ready":
        steps.append(
            "the running server's dense leg is ready: this status's own probe was not answered in time (the "
            "embedding server may be busy with the server's batches)"
        )
    elif dense.state == "unavailable":
        reason = dense.description.removeprefix("unavailable: ")
        if dense.configured and s.embed_backend == "local":
            steps.append(f"the in-process embedder is off ({reason}): searches are BM25 only until it loads")
        elif dense.configured:
            steps.append(f"the embedding server is unavailable ({reason}): searches are BM25 only until it answers")
        else:
            steps.append(
                f"optional, to search by meaning too (hybrid), with no server: `{LOCAL_INSTALL}` and "
                "AGENTTY_EMBED_BACKEND=local (or an Ollama or OpenAI-compatible embedding server: docs/dense.md)"
            )
    missing = sum(state.dense.chunks - state.dense.embedded for state in indexes.values() if not state.dense.rate)
    if dense.state == "ready" and missing > 0:
        steps.append(f"`agentty-rag index all` embeds the {missing:,} chunks that have no vector yet")
    return steps


def kinds_of_report(report: StatusReport) -> tuple[SourceSpec, ...]:
    """The kinds whose folders the report holds, in registry order."""
    return tuple(spec for spec in SOURCES.values() if spec.status_key in report.sources)


def _not_found(spec: SourceSpec, sources: Sources) -> str:
    """The next step for a kind that is on and none of whose folders was found ("" when one was, or it has none
    to find). A folder setting always names the folder found, even one that does not exist."""
    folders = sources[spec.status_key]
    if not (isinstance(folders, FoundFolder) and folders.enabled and folders.folder is None):
        return ""
    return spec.words.none_found.format(looked_in=", ".join(folders.looked_in))


def _language(stamp: FileStamp) -> str:
    """The language a build gives the file; only a file whose name leaves it open (``.h``) is read, as a build
    reads it (never through a link out of its folder, never a FIFO)."""
    rel = stamp.key.split(":", 1)[1]
    text: str | None = None
    if named_by_text(rel):
        with contextlib.suppress(OSError):
            text = decode(read_regular(stamp.path, stamp.boundary, stamp.size)).text
    return file_language(rel, text) or "text"


def previewed(workspace: Workspace, name: str) -> IndexPreview:
    """What ``index`` would read for one index, from a scan alone: counts by folder and by language (an index
    of source code) or source, the largest files."""
    stamps, skipped = workspace.index(name).preview()
    paths = [(stamp.key.split(":", 1)[0], stamp.key.split(":", 1)[1], stamp.size) for stamp in stamps]
    folders = Counter(rel.split("/", 1)[0] + "/" if "/" in rel else "(top level)" for _, rel, _ in paths)
    if all(spec.code for spec in kinds_of(name)):
        label, kinds = "language", Counter(_language(stamp) for stamp in stamps)
    else:
        label, kinds = "source", Counter(source_spec(kind).shown_name for kind, _, _ in paths)
    largest = sorted(paths, key=lambda item: -item[2])[:5]
    return IndexPreview(
        name=name,
        files=len(stamps),
        bytes=sum(stamp.size for stamp in stamps),
        skipped=skipped.summary() if skipped.total else "",
        by_folder=tuple(folders.most_common()),
        kind_label=label,
        by_kind=tuple(kinds.most_common()),
        largest=tuple((rel, size) for _, rel, size in largest),
    )


def preview(workspace: Workspace, names: tuple[str, ...]) -> str:
    """What ``index`` would read (``--dry-run``), as text."""
    return render_preview(tuple(previewed(workspace, name) for name in names))


__all__ = ["LIFTED_BY", "gather", "index_state", "next_steps", "preview", "previewed", "sources"]
