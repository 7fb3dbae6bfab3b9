"""``agentty-rag status`` for people: what is indexed, whether it is fresh, what was skipped and why, and
what to do next. Internals (index files, generations, tokenizer, chunking) only with ``--verbose``.

Reading never writes: a workspace that was never indexed stays untouched.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from pathlib import Path
from typing import Any

from agentty_rag.discovery import Located
from agentty_rag.fsguard import read_regular
from agentty_rag.service import Workspace
from agentty_rag.sources.languages import file_language, named_by_text
from agentty_rag.sources.text import decode
from agentty_rag.types import FileStamp

SOURCE_NAMES = {"docs": "docs folder", "skill": "skills", "memory": "memory", "code": "code"}
# Skip reasons a setting can lift, and the variable that does.
LIFTED_BY = {
    ("code", "too large"): "AGENTTY_RAG_CODE_MAX_BYTES",
    ("code", "over file cap"): "AGENTTY_RAG_CODE_MAX_FILES",
    ("code", "secret-looking name"): "AGENTTY_RAG_CODE_SECRETS=1",
    ("docs", "too large"): "AGENTTY_RAG_DOCS_MAX_BYTES",
}


def _folder(path: Path, workspace: Workspace) -> dict[str, object]:
    return {"path": str(path), "shown": _shown(path, workspace), "exists": path.is_dir()}


def _shown(path: Path, workspace: Workspace) -> str:
    home = workspace.settings.home
    if path == workspace.root or workspace.root in path.parents:
        return "./" + path.relative_to(workspace.root).as_posix()
    if home is not None and home in path.parents:
        return "~/" + path.relative_to(home).as_posix()
    return str(path)


def sources(workspace: Workspace) -> dict[str, Any]:
    """Where each source of the docs index is read from, and whether it exists."""
    s = workspace.settings
    docs_root = workspace.docs_root()
    looked_in = (
        [str(s.docs_dir)]
        if s.docs_dir is not None
        else [_shown(workspace.root / "docs", workspace), _shown(workspace.state_dir / "knowledge", workspace)]
    )
    return {
        "docs": {
            "enabled": s.docs_enabled,
            "folder": _folder(docs_root, workspace) if docs_root is not None else None,
            "looked_in": looked_in,
        },
        "skills": {"enabled": s.skills_enabled, "folders": [_folder(p, workspace) for p in workspace.skills_dirs()]},
        "memory": {"enabled": s.memory_enabled, "folder": _folder(workspace.memory_dir(), workspace)},
        "code": {"enabled": s.code_enabled, "folder": _folder(workspace.root, workspace)},
    }


def gather(workspace: Workspace, located: Located) -> dict[str, Any]:
    """Everything ``status`` reports, as data (``--json`` prints it as is)."""
    indexes = {
        name: {**workspace.index(name).status(), "dense": workspace.dense_status(name)} for name in ("docs", "code")
    }
    report: dict[str, Any] = {
        "workspace": {"root": str(workspace.root), "start": str(located.start), "how": located.how},
        "sources": sources(workspace),
        "indexes": indexes,
        "dense": {
            "state": workspace.dense.status.state,
            "description": workspace.dense.describe(),
            "configured": workspace.settings.dense_configured,
        },
    }
    report["next"] = next_steps(workspace, report)
    return report


def next_steps(workspace: Workspace, report: dict[str, Any]) -> list[str]:
    """What a user can do about what the report shows, most useful first."""
    s = workspace.settings
    steps: list[str] = []
    docs = report["sources"]["docs"]
    if docs["enabled"] and docs["folder"] is None:
        if s.docs_dir is not None:
            steps.append(f"AGENTTY_DOCS_DIR={s.docs_dir} is not a folder: point it at your docs")
        else:
            looked = ", ".join(docs["looked_in"])
            steps.append(f"no docs folder found (looked in {looked}): create ./docs or set AGENTTY_DOCS_DIR")
    indexes = report["indexes"]
    unbuilt = [name for name, data in indexes.items() if data["updated_at"] == "never" and _to_index(data)]
    if unbuilt:
        which = "all" if len(unbuilt) == 2 else unbuilt[0]
        steps.append(f"`agentty-rag index {which}` builds the index now (the first search would build it anyway)")
    code = indexes["code"]
    if s.code_enabled and code["updated_at"] != "never" and code["files"] == 0:
        steps.append(f"no source files in a known language under {workspace.root}")
    for name, data in indexes.items():
        for reason, count in data["skipped"].get("counts", {}).items():
            variable = LIFTED_BY.get((name, reason))
            if variable:
                steps.append(f"{count} {name} file(s) skipped as {reason}: {variable} includes them")
    dense = report["dense"]
    if dense["state"] == "unavailable":
        reason = dense["description"].removeprefix("unavailable: ")
        if dense["configured"]:
            steps.append(f"the embedding server is unavailable ({reason}): searches are BM25 only until it answers")
        else:
            steps.append(
                "optional, to search by meaning too: install Ollama, `ollama pull nomic-embed-text`, `ollama serve`"
            )
    missing = sum(data["dense"]["chunks"] - data["dense"]["embedded"] for data in indexes.values())
    if dense["state"] == "ready" and missing > 0:
        steps.append(f"`agentty-rag index all` embeds the {missing:,} chunks that have no vector yet")
    return steps


def _to_index(data: dict[str, Any]) -> int:
    return sum(data.get("by_source", {}).values())


def counted(count: int, word: str) -> str:
    """``1 file``, ``2,480 files``."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def _index_lines(name: str, data: dict[str, Any], report: dict[str, Any], verbose: bool) -> list[str]:
    by_source: dict[str, int] = data.get("by_source", {})
    if data["updated_at"] == "never":
        head = f"{name}: not indexed yet — {counted(_to_index(data), 'file')} to index"
    else:
        freshness = "fresh" if data["fresh"] else f"stale: {data['stale_reason']} (the next search updates it)"
        head = (
            f"{name}: {counted(data['files'], 'file')}, {counted(data['chunks'], 'chunk')} — {freshness} "
            f"(updated {data['updated_at']})"
        )
    lines = [head]
    if data.get("storage", "disk") != "disk":
        lines.append(f"  kept in {data['storage']}")
    redacted = data.get("redacted")
    if isinstance(redacted, dict) and redacted["secrets"]:
        lines.append(
            f"  secrets redacted: {redacted['secrets']:,} in {counted(redacted['files'], 'file')} "
            f"({', '.join(redacted['examples'][:5])})"
        )
    sources = report["sources"]
    if name == "docs":
        lines.extend(_docs_source_lines(sources, by_source))
    elif not sources["code"]["enabled"]:
        lines.append("  off (AGENTTY_RAG_CODE=0)")
    dense = data["dense"]
    if dense["state"] == "ready":
        lines.append(f"  vectors: {dense['embedded']:,} of {dense['chunks']:,} chunks embedded")
    lines.extend(_skipped_lines(data["skipped"]))
    if verbose:
        manifest = data["manifest"]
        lines.append(
            f"  index {data['path']}, generation {data['generation']}, schema {manifest['schema_version']}, "
            f"tokenizer v{manifest['tokenizer_version']}, chunking {manifest['chunking']}"
        )
        lines.extend(f"  root {root_name}: {root}" for root_name, root in sorted(manifest.get("roots", {}).items()))
    return lines


def _docs_source_lines(sources: dict[str, Any], by_source: dict[str, int]) -> list[str]:
    docs, skills, memory = sources["docs"], sources["skills"], sources["memory"]
    lines = []
    if not docs["enabled"]:
        lines.append("  docs folder: off (AGENTTY_RAG_DOCS=0)")
    elif docs["folder"] is None:
        lines.append(f"  docs folder: none found (looked in {', '.join(docs['looked_in'])})")
    else:
        lines.append(f"  docs folder: {docs['folder']['shown']} — {counted(by_source.get('docs', 0), 'file')}")
    if not skills["enabled"]:
        lines.append("  skills: off (AGENTTY_RAG_SKILLS=0)")
    else:
        folders = "; ".join(f["shown"] + ("" if f["exists"] else " does not exist") for f in skills["folders"])
        lines.append(f"  skills: {counted(by_source.get('skill', 0), 'file')} ({folders})")
    if not memory["enabled"]:
        lines.append("  memory: off (AGENTTY_RAG_MEMORY=0)")
    elif not memory["folder"]["exists"]:
        lines.append(f"  memory: {memory['folder']['shown']} does not exist (facts an agent learns go there)")
    else:
        lines.append(f"  memory: {memory['folder']['shown']} — {counted(by_source.get('memory', 0), 'file')}")
    return lines


def _skipped_lines(skipped: dict[str, Any]) -> list[str]:
    counts: dict[str, int] = skipped.get("counts", {})
    if not counts:
        return ["  skipped: nothing"]
    total = sum(counts.values())
    lines = [f"  skipped: {total:,} (" + ", ".join(f"{n:,} {reason}" for reason, n in counts.items()) + ")"]
    for reason, paths in skipped.get("examples", {}).items():
        shown = list(paths)[:5]
        more = counts.get(reason, 0) - len(shown)
        lines.append(f"    {reason}: {', '.join(shown)}" + (f" (+{more:,} more)" if more > 0 else ""))
    return lines


def render(report: dict[str, Any], verbose: bool = False) -> str:
    """The report as text for a person."""
    where = report["workspace"]
    head = f"workspace: {where['root']}"
    moved = os.path.realpath(where["start"]) != os.path.realpath(where["root"])
    if moved and where["how"].startswith("found"):
        head += f" ({where['how']} above {where['start']})"
    lines = [head]
    for name, data in report["indexes"].items():
        lines.extend(_index_lines(name, data, report, verbose))
    lines.append(f"dense: {report['dense']['description']}")
    if report["next"]:
        lines.append("next:")
        lines.extend(f"  - {step}" for step in report["next"])
    return "\n".join(lines)


def _size(count: int) -> str:
    if count < 1024:
        return f"{count:,} bytes"
    if count < 1024 * 1024:
        return f"{count / 1024:,.1f} KB"
    return f"{count / 1024 / 1024:,.1f} MB"


def _ranked(counts: Counter[str], shown: int = 8) -> str:
    items = counts.most_common()
    text = ", ".join(f"{name} {n:,}" for name, n in items[:shown])
    return text + (f", … ({len(items) - shown} more)" if len(items) > shown else "")


def _language(stamp: FileStamp) -> str:
    """The language a build gives the file; only a file whose name leaves it open (``.h``) is read, as a build
    reads it (never through a link out of its folder, never a FIFO)."""
    rel = stamp.key.split(":", 1)[1]
    text: str | None = None
    if named_by_text(rel):
        with contextlib.suppress(OSError):
            text = decode(read_regular(stamp.path, stamp.boundary, stamp.size)).text
    return file_language(rel, text) or "text"


def preview(workspace: Workspace, names: tuple[str, ...]) -> str:
    """What ``index`` would read, from a scan alone: counts by folder and language, the largest files."""
    lines = []
    for name in names:
        stamps, skipped = workspace.index(name).preview()
        total = sum(stamp.size for stamp in stamps)
        head = f"{name}: {counted(len(stamps), 'file')}, {_size(total)} would be indexed"
        lines.append(head + (f" ({skipped.summary()})" if skipped.total else ""))
        if not stamps:
            continue
        paths = [(stamp.key.split(":", 1)[0], stamp.key.split(":", 1)[1], stamp.size) for stamp in stamps]
        folders = Counter(rel.split("/", 1)[0] + "/" if "/" in rel else "(top level)" for _, rel, _ in paths)
        lines.append(f"  by folder: {_ranked(folders)}")
        if name == "code":
            languages = Counter(_language(stamp) for stamp in stamps)
            lines.append(f"  by language: {_ranked(languages)}")
        else:
            lines.append(f"  by source: {_ranked(Counter(SOURCE_NAMES.get(s, s) for s, _, _ in paths))}")
        largest = sorted(paths, key=lambda item: -item[2])[:5]
        lines.append("  largest: " + ", ".join(f"{rel} ({_size(size)})" for _, rel, size in largest))
    return "\n".join(lines)


__all__ = ["counted", "gather", "next_steps", "preview", "render", "sources"]
