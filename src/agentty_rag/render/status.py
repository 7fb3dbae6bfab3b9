"""``agentty-rag status`` and ``index --dry-run`` for people, from their typed reports (``status.types``).

``status`` says what each index holds, whether it is fresh, what was skipped and why, and what to do next;
internals (index files, generations, tokenizer, chunking) only with ``--verbose``. ``status --json`` is the
same report as data, field for field. Each source kind's folders are shown in their shape (``FoundFolder``,
``Folders``, ``OneFolder``, ``RootFolder``) under the name the registry gives the kind, in registry order.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any

from agentty_rag.config import VARIABLES
from agentty_rag.source_kinds import SourceSpec, kinds_of
from agentty_rag.state.folder import COMMITTED
from agentty_rag.status.types import (
    Folders,
    FoundFolder,
    IndexPreview,
    IndexState,
    Job,
    McpResources,
    OneFolder,
    RootFolder,
    Skipped,
    SourceFolders,
    Sources,
    StateFolder,
    StatusReport,
)

# How many paths a line names before it says how many more there are.
_SHOWN_PATHS = 5
# How many folders, languages or sources a preview line names.
_SHOWN_COUNTS = 8
# The most characters a path takes in a line for a person (a longer one loses its middle; --json keeps it).
PATH_WIDTH = 100
# The variable each setting is read from: a kind switched off names its switch.
_VARIABLE = {variable.attr: variable.name for variable in VARIABLES}


def counted(count: int, word: str) -> str:
    """``1 file``, ``2,480 files``."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def shortened(path: str, width: int = PATH_WIDTH) -> str:
    """``path`` in at most ``width`` characters: its start and its end (where the file's name is) with ``…``
    between, cut at a ``/`` when one is near, so that a folder 50,000 deep does not fill the screen."""
    if len(path) <= width:
        return path
    room = width - 1
    head, tail = path[: room * 2 // 5], path[len(path) - (room - room * 2 // 5) :]
    head = head[: head.rfind("/") + 1] if head.rfind("/") >= len(head) // 2 else head
    tail = tail[tail.find("/") :] if 0 <= tail.find("/") <= len(tail) // 2 else tail
    return f"{head}…{tail}"


def _paths(paths: list[str] | tuple[str, ...]) -> str:
    return ", ".join(shortened(path) for path in paths)


def status_json(report: StatusReport) -> dict[str, Any]:
    """The report as data (``status --json``): each field under its own name, in field order."""
    return asdict(report)


def render_status(report: StatusReport, verbose: bool = False) -> str:
    """The report as text for a person."""
    where = report.workspace
    head = f"workspace: {shortened(str(where.root))}"
    moved = os.path.realpath(where.start) != os.path.realpath(where.root)
    if moved and where.how.startswith("found"):
        head += f" ({where.how} above {shortened(str(where.start))})"
    lines = [head]
    for name, state in report.indexes.items():
        lines.extend(_index_lines(name, state, report.sources, verbose))
    lines.append(_state_line(report.state))
    if report.mcp.enabled:
        lines.extend(_mcp_lines(report.mcp))
    code = report.indexes.get("code")
    lines.append(f"backend: {code.backend if code is not None else 'local'}")
    lines.append(f"dense: {report.dense.description}")
    if report.dense.server:
        lines.append(f"  {report.dense.server}")
    if report.generation:
        lines.append(f"generation: {report.generation}")
    lines.extend(_job_lines(report.jobs, verbose))
    if report.next:
        lines.append("next:")
        lines.extend(f"  - {step}" for step in report.next)
    return "\n".join(lines)


def _pace(state: IndexState) -> str:
    """`` (14.2 a second, about 45 min left)`` while a running server embeds the index, else ""."""
    vectors = state.dense
    if vectors.rate <= 0 or vectors.embedded >= vectors.chunks:
        return ""
    left = vectors.eta_s
    if left is None:
        return f" ({vectors.rate:.1f} a second)"
    when = f"{left:.0f} s" if left < 120 else f"{left / 60:.0f} min" if left < 7200 else f"{left / 3600:.1f} h"
    return f" ({vectors.rate:.1f} a second, about {when} left)"


def _job_lines(jobs: tuple[Job, ...], verbose: bool) -> list[str]:
    """The running server's background jobs: the ones that failed (every one with ``--verbose``)."""
    shown = [job for job in jobs if verbose or job.failures]
    if not shown:
        return []
    return ["server jobs:", *(f"  {job.description}" for job in shown)]


def _state_line(state: StateFolder) -> str:
    """Which half of .agentty/ is machine state (ignored by git) and which a team commits."""
    yours = ", ".join(COMMITTED)
    if not state.exists:
        return f".agentty/: not created yet (the first search creates it; git ignores all in it but {yours})"
    ignored = {
        "ours": "indexes, locks and settings are machine state, kept out of git by .agentty/.gitignore",
        "missing": "no .gitignore yet (the next search writes one to keep its indexes and locks out of git)",
        "edited": ".agentty/.gitignore is not the one agentty-rag writes (remove it to get that back)",
    }[state.gitignore]
    here = ", ".join(state.committed) or "none yet"
    return f".agentty/: {ignored}; yours to commit: {yours} (here: {here})"


def _index_lines(name: str, state: IndexState, sources: Sources, verbose: bool) -> list[str]:
    if not state.built:
        head = f"{name}: not indexed yet — {counted(state.to_index, 'file')} to index"
    else:
        freshness = "fresh" if state.fresh else f"stale: {state.stale_reason} (the next search updates it)"
        head = (
            f"{name}: {counted(state.files, 'file')}, {counted(state.chunks, 'chunk')} — {freshness} "
            f"(updated {state.updated_at})"
        )
    lines = [head]
    lines.extend(f"  {line}" for line in state.selection)
    if state.freshness and (verbose or "server" in state.freshness or "failed" in state.freshness):
        lines.append(f"  changes: {state.freshness}")
    if state.storage != "disk":
        lines.append(f"  kept in {state.storage}")
    if state.foreign_replaced_at:
        lines.append(
            f"  from elsewhere: an index built elsewhere was found at {state.foreign_replaced_at} and not used; "
            "rebuilt from the working tree"
        )
    redacted = state.redacted
    if redacted.secrets:
        lines.append(
            f"  secrets redacted: {redacted.secrets:,} in {counted(redacted.files, 'file')} "
            f"({_paths(redacted.examples[:_SHOWN_PATHS])})"
        )
    for spec in kinds_of(name):
        folders = sources.get(spec.status_key) if spec.status_key else None
        if folders is not None:
            lines.extend(_source_lines(spec, folders, state.by_source.get(spec.name, 0)))
    if state.dense.counted or state.dense.state == "ready":
        lines.append(f"  vectors: {state.dense.embedded:,} of {state.dense.chunks:,} chunks embedded{_pace(state)}")
        if state.dense.leg_check and name == "code":
            lines.append(f"  leg check: {state.dense.leg_check}")
    lines.extend(_skipped_lines(state.skipped))
    if verbose:
        manifest = state.manifest
        lines.append(
            f"  index {shortened(str(state.path))}, generation {state.generation}, schema {manifest.schema_version}, "
            f"tokenizer v{manifest.tokenizer_version}, chunking {manifest.chunking}"
        )
        lines.extend(
            f"  root {root_name}: {shortened(str(root))}" for root_name, root in sorted(manifest.roots.items())
        )
    return lines


def _mcp_lines(mcp: McpResources) -> list[str]:
    """The MCP servers read for ``search_docs``: each with its state and counts, or why it failed."""
    where = _paths(mcp.files) or "no configuration file found (.mcp.json, .cursor/mcp.json, .codex/config.toml)"
    lines = [f"mcp: {counted(len(mcp.servers), 'server')}, {counted(mcp.chunks, 'chunk')} kept in memory — {where}"]
    for server in mcp.servers:
        where = ", ".join(part for part in (server.target, server.origin) if part)
        head = f"  {server.name} ({where}): {server.state}"
        if server.state in ("failed", "not started", "not approved"):
            lines.append(f"{head} — {server.error}")
            continue
        skipped = ", ".join(f"{n:,} {reason}" for reason, n in server.skipped.items())
        counts = f"{server.read:,} of {counted(server.listed, 'resource')} read" + (f" ({skipped})" if skipped else "")
        capped = f"; more not listed ({server.capped_by or 'AGENTTY_RAG_MCP_MAX_RESOURCES'})" if server.capped else ""
        lines.append(f"{head} — {counts}{capped}" + (f"; {server.freshness}" if server.freshness else ""))
    lines.extend(f"  left out: {problem}" for problem in mcp.problems)
    return lines


def _source_lines(spec: SourceSpec, folders: SourceFolders, files: int) -> list[str]:
    """One kind's folders under its index, by their shape: where its ``files`` come from, or that it is off.
    A kind read from the workspace root says only when it is off, and under its index's name alone."""
    label = f"{spec.shown_name}: "
    if isinstance(folders, RootFolder):
        label = ""
        if folders.enabled:
            return []
    if not folders.enabled:
        return [f"  {label}off ({_VARIABLE[spec.switch]}=0)"]
    if isinstance(folders, FoundFolder):
        if folders.folder is None:
            return [f"  {label}none found (looked in {_paths(folders.looked_in)})"]
        return _found_lines(label, folders, files)
    if isinstance(folders, Folders):
        shown = "; ".join(shortened(f.shown) + ("" if f.exists else " does not exist") for f in folders.folders)
        return [f"  {label}{counted(files, 'file')} ({shown})"]
    if isinstance(folders, OneFolder) and not folders.folder.exists:
        missing = f" ({spec.words.missing})" if spec.words.missing else ""
        return [f"  {label}{shortened(folders.folder.shown)} does not exist{missing}"]
    return [f"  {label}{shortened(folders.folder.shown)} — {counted(files, 'file')}"]


def _found_lines(label: str, folders: FoundFolder, files: int) -> list[str]:
    """Where a kind found its files: each folder with its count, and the translations left out."""
    lines = [f"  {label}{shortened(folders.folder.shown) if folders.folder else ''} — {counted(files, 'file')}"]
    if any(folder != "./" for folder, _ in folders.found):  # not only the root's own files
        lines.append(f"    found in: {_ranked(folders.found)}")
    if folders.languages:
        lines.append(f"    languages indexed besides the default: {', '.join(folders.languages)}")
    if folders.translations:
        left = ", ".join(f"{lang} {n:,}" for lang, n in folders.translations)
        lines.append(
            f"    translations not indexed: {left} — AGENTTY_DOCS_LANGUAGES=LANG,… (or all) adds them; "
            "a question asked in one of them adds its language"
        )
    return lines


def _skipped_lines(skipped: Skipped) -> list[str]:
    if not skipped.counts:
        return ["  skipped: nothing"]
    reasons = ", ".join(f"{n:,} {reason}" for reason, n in skipped.counts.items())
    lines = [f"  skipped: {skipped.total:,} ({reasons})"]
    for reason, paths in skipped.examples.items():
        shown = paths[:_SHOWN_PATHS]
        more = skipped.counts.get(reason, 0) - len(shown)
        lines.append(f"    {reason}: {_paths(shown)}" + (f" (+{more:,} more)" if more > 0 else ""))
    return lines


def _size(count: int) -> str:
    if count < 1024:
        return f"{count:,} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:,.1f} KB"
    return f"{count / 1024 / 1024:,.1f} MB"


def _ranked(counts: tuple[tuple[str, int], ...]) -> str:
    text = ", ".join(f"{shortened(name)} {n:,}" for name, n in counts[:_SHOWN_COUNTS])
    more = len(counts) - _SHOWN_COUNTS
    return text + (f", … ({more} more)" if more > 0 else "")


def render_preview(previews: tuple[IndexPreview, ...]) -> str:
    """What ``index`` would read (``--dry-run``): counts by folder and by language or source, the largest
    files."""
    lines = []
    for preview in previews:
        head = f"{preview.name}: {counted(preview.files, 'file')}, {_size(preview.bytes)} would be indexed"
        lines.append(head + (f" ({preview.skipped})" if preview.skipped else ""))
        if not preview.files:
            continue
        lines.append(f"  by folder: {_ranked(preview.by_folder)}")
        lines.append(f"  by {preview.kind_label}: {_ranked(preview.by_kind)}")
        lines.append("  largest: " + ", ".join(f"{shortened(rel)} ({_size(size)})" for rel, size in preview.largest))
    return "\n".join(lines)


__all__ = ["PATH_WIDTH", "counted", "render_preview", "render_status", "shortened", "status_json"]
