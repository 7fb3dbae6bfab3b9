"""``rag-bench suite``: the ladder on every workspace of a manifest, with per-workspace rows and means.

Each workspace is measured where it is: its files are only read, and its index is built in a temporary folder
(deleted after it), so nothing is written to the workspace and nothing is copied. The figures:

* per workspace: the ladder's figures on its own queries;
* macro mean: each quality and token figure averaged over the workspaces (each workspace weighs the same);
* all queries: every query pooled (each query weighs the same; the way semble pools its token figures);
* per category: the queries of that category pooled, across workspaces.

Latency percentiles are always over the pooled queries.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentty_rag import __version__
from agentty_rag.bench.console import Progress, UsageError, warn
from agentty_rag.bench.datasets import Query, docs_prefix_of, load_queries, reconcile
from agentty_rag.bench.ladder import (
    DEFAULT_RUNG,
    Built,
    Rung,
    Target,
    build,
    check_k,
    parse_rungs,
    plan,
    run_rungs,
)
from agentty_rag.bench.levers import measure_levers
from agentty_rag.bench.manifest import SuiteWorkspace, load_manifest
from agentty_rag.bench.report import (
    SUITE_COLUMNS,
    levers_table,
    machine,
    machine_line,
    metrics_table,
    token_table,
    write_json,
)
from agentty_rag.bench.run import TOKEN_FIGURES, QueryScore, RungResult
from agentty_rag.config import agentty_environment, effective_values, load_settings
from agentty_rag.workspace.service import Workspace

# Figures a macro mean averages (the token figures too, where the rung measured them); the latency
# percentiles are taken over the pooled queries instead.
QUALITY = ("recall@1", "recall@5", "recall@10", "hit@1", "hit@5", "hit@10", "mrr", "ndcg@10")


@dataclass
class WorkspaceRun:
    """One workspace's measurements."""

    workspace: SuiteWorkspace
    level: str
    queries: list[Query]
    rungs: list[Rung]
    skipped: list[str]
    files: int
    chunks: int
    build_s: float
    dense: dict[str, Any]
    levers: dict[str, dict[str, float]] = field(default_factory=dict)

    def rung(self, name: str) -> Rung | None:
        return next((r for r in self.rungs if r.result.name == name), None)

    def to_json(self) -> dict[str, Any]:
        categories = {q.id: q.category for q in self.queries}
        ws = self.workspace
        return {
            "name": ws.name,
            "root": str(ws.root),
            "queries_file": str(ws.queries),
            "corpus": ws.corpus,
            "level": self.level,
            "env": ws.env,
            "query_count": len(self.queries),
            "corpus_size": {"files": self.files, "chunks": self.chunks},
            "index_full_s": self.build_s,
            "dense": self.dense,
            "skipped_rungs": self.skipped,
            "rungs": [rung.row(categories) for rung in self.rungs],
            "token_economy": self.levers,
        }


def _selected(workspaces: Sequence[SuiteWorkspace], only: str | None) -> list[SuiteWorkspace]:
    if not only:
        return list(workspaces)
    wanted = [name.strip() for name in only.split(",") if name.strip()]
    known = {ws.name for ws in workspaces}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise UsageError(f"--only: no workspace named {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return [ws for ws in workspaces if ws.name in wanted]


def _sources_where_they_are(workspace: Workspace, corpus: str) -> dict[str, str]:
    """Settings that keep the docs, skills and memory folders where the workspace has them: with its indexes
    elsewhere, the defaults under its ``.agentty/`` would move too."""
    if corpus != "docs":
        return {}
    docs = workspace.docs_root()
    overrides = {
        "AGENTTY_SKILLS_DIRS": os.pathsep.join(str(p) for p in workspace.skills_dirs()),
        "AGENTTY_MEMORY_DIR": str(workspace.memory_dir()),
    }
    if workspace.settings.docs_dir is not None:  # narrowed to one folder: keep it narrowed
        overrides["AGENTTY_DOCS_DIR"] = str(docs)
    return overrides


def _measure(
    ws: SuiteWorkspace,
    queries: list[Query],
    user_env: Mapping[str, str],
    args: argparse.Namespace,
    rung_names: Sequence[str],
    progress: Callable[[str], None],
) -> WorkspaceRun:
    env = {**user_env, **ws.env}
    own = Workspace(ws.root, load_settings(env))
    level = args.level or ws.level
    with tempfile.TemporaryDirectory(prefix="rag-bench-suite-") as temporary:
        target = Target(ws.root, {**env, **_sources_where_they_are(own, ws.corpus)}, Path(temporary))
        built: Built = build(target, ws.corpus, own.index(ws.corpus).config.db_path, progress)
        queries, warnings = reconcile(queries, built.chunks, ws.corpus, docs_prefix_of(own))
        for warning in warnings:
            warn(f"{ws.name}: {warning}")
        ladder, skipped = plan(rung_names, args.config, built.dense, built.workspace.settings)
        rungs = run_rungs(target, built, ws.corpus, queries, level, args.k, ladder, progress)
        levers = measure_levers(built.workspace, ws.corpus, queries, args.k) if built.workspace.settings.measure else {}
        files = built.index.n_files
        built.workspace.close()
    return WorkspaceRun(
        ws, level, queries, rungs, skipped, files, len(built.chunks), built.seconds, built.dense, levers
    )


# -- means ----------------------------------------------------------------------------------------------------


def _pooled(name: str, scores: list[QueryScore]) -> dict[str, Any]:
    return {"rung": name, "default": name == DEFAULT_RUNG, "queries": len(scores), **RungResult(name, scores).summary()}


def _macro(name: str, runs: Sequence[WorkspaceRun]) -> dict[str, Any]:
    """Quality averaged over the workspaces that ran rung ``name``; latency over their pooled queries."""
    results = [rung.result for run in runs if (rung := run.rung(name)) is not None]
    row = _pooled(name, [s for result in results for s in result.scores])
    summaries = [result.summary() for result in results]
    averaged = [*QUALITY, *(key for key in TOKEN_FIGURES if key in row)]
    row.update({key: sum(s[key] for s in summaries) / len(summaries) for key in averaged})
    row["workspaces"] = len(results)
    return row


def _categories(name: str, runs: Sequence[WorkspaceRun]) -> dict[str, dict[str, Any]]:
    """Per category, the pooled figures of its queries across workspaces."""
    by_category: dict[str, list[QueryScore]] = {}
    for run in runs:
        rung = run.rung(name)
        if rung is None:
            continue
        category = {q.id: q.category for q in run.queries}
        for score in rung.result.scores:
            if category[score.id]:
                by_category.setdefault(category[score.id], []).append(score)
    return {c: _pooled(name, scores) for c, scores in sorted(by_category.items())}


def _pooled_levers(runs: Sequence[WorkspaceRun]) -> dict[str, dict[str, float]]:
    """The token-economy rows over every query of the suite (counts summed, then divided)."""
    measured = [run for run in runs if run.levers]
    if not measured:
        return {}
    pooled: dict[str, dict[str, float]] = {}
    for name in measured[0].levers:
        queries = sum(len(run.queries) for run in measured)
        rows = [(run.levers[name], len(run.queries)) for run in measured]
        with_answers = sum(row["queries_with_answers"] for row, _ in rows)
        found = sum(row["answers_in_ranking"] for row, _ in rows)
        kept = sum(_count(row["answers_in_output"], row["queries_with_answers"]) for row, _ in rows)
        found_kept = sum(_count(row["answer_retention"], row["answers_in_ranking"]) for row, _ in rows)
        nan = float("nan")
        pooled[name] = {
            "bytes_per_query": sum(row["bytes_per_query"] * n for row, n in rows) / queries,
            "tokens_per_query": sum(row["tokens_per_query"] * n for row, n in rows) / queries,
            "answers_in_output": kept / with_answers if with_answers else nan,
            "answer_retention": found_kept / found if found else nan,
            "queries_with_answers": with_answers,
            "answers_in_ranking": found,
        }
    return pooled


def _count(share: float, of: float) -> float:
    return 0.0 if share != share else round(share * of)


def _reported_rung(ladder: Sequence[str]) -> str:
    """The rung the per-workspace table shows: the default configuration when it ran, else the last rung."""
    return next((r for r in ("current", DEFAULT_RUNG) if r in ladder), ladder[-1])


def _prefixed(progress: Progress, prefix: str) -> Callable[[str], None]:
    return lambda text: progress(f"{prefix}: {text}")


# -- the run --------------------------------------------------------------------------------------------------


def run_suite(args: argparse.Namespace) -> int:
    """``rag-bench suite MANIFEST``: every workspace's figures, their means, and the JSON report."""
    check_k(args.k)
    names = parse_rungs(args.rungs)
    manifest = load_manifest(args.manifest)
    workspaces = _selected(manifest.workspaces, args.only)
    # Every queries file is read before the first index is built: a bad line stops the suite at once.
    queries = {ws.name: load_queries(ws.queries, ws.corpus) for ws in workspaces}
    user_env = agentty_environment()
    for warning in load_settings(user_env).warnings:
        warn(warning)
    progress = Progress()
    runs: list[WorkspaceRun] = []
    for number, ws in enumerate(workspaces, start=1):
        step = _prefixed(progress, f"{ws.name} ({number}/{len(workspaces)})")
        runs.append(_measure(ws, queries[ws.name], user_env, args, names, step))
    progress.done()

    ladder = list(dict.fromkeys(rung.result.name for run in runs for rung in run.rungs))
    reported = _reported_rung(ladder)
    macro = [_macro(name, runs) for name in ladder]
    pooled = [_pooled(name, [s for run in runs if (r := run.rung(name)) for s in r.result.scores]) for name in ladder]
    categories = {name: _categories(name, runs) for name in ladder}
    levers = _pooled_levers(runs)
    _print(manifest.path, runs, args.k, macro, pooled, categories[reported], reported, levers)
    if args.json:
        data = {
            "version": __version__,
            "manifest": str(manifest.path),
            "k": args.k,
            "machine": machine(),
            "configuration": effective_values(load_settings(user_env)),
            "rungs": ladder,
            "reported_rung": reported,
            "workspaces": [run.to_json() for run in runs],
            "macro": macro,
            "all_queries": pooled,
            "categories": categories,
            "token_economy": levers,
        }
        write_json(args.json, data)
    return 0


def _print(
    manifest: Path,
    runs: Sequence[WorkspaceRun],
    k: int,
    macro: Sequence[dict[str, Any]],
    pooled: Sequence[dict[str, Any]],
    categories: Mapping[str, dict[str, Any]],
    reported: str,
    levers: Mapping[str, Mapping[str, float]],
) -> None:
    count = sum(len(run.queries) for run in runs)
    print(f"rag-bench suite · {manifest} · {len(runs)} workspaces · {count:,} queries · k={k}")
    print(machine_line())
    print()
    print(f"macro mean over {len(runs)} workspaces (each weighs the same; ms over all queries)")
    print(metrics_table(macro, metric_columns=SUITE_COLUMNS))
    for line in dict.fromkeys(line for run in runs for line in run.skipped):
        print(line)
    print()
    print(token_table(macro, over="macro mean"))
    print()
    print(f"per workspace · rung {reported}")
    rows: list[dict[str, Any]] = []
    for run in runs:
        rung = run.rung(reported)
        if rung is not None:
            ws = run.workspace
            facts = {"name": ws.name, "corpus": ws.corpus, "level": run.level, "queries": len(run.queries)}
            rows.append({**facts, "files": f"{run.files:,}", "chunks": f"{run.chunks:,}", **rung.result.summary()})
    blank = {"corpus": "", "level": "", "files": "", "chunks": ""}
    rows.append({**next(r for r in macro if r["rung"] == reported), **blank, "name": "macro mean"})
    rows.append({**next(r for r in pooled if r["rung"] == reported), **blank, "name": "all queries"})
    for category, row in categories.items():
        rows.append({**row, **blank, "name": f"category {category}"})
    heading = ("workspace", "corpus", "level", "files", "chunks", "queries")
    cells = ("name", "corpus", "level", "files", "chunks", "queries")
    print(metrics_table(rows, heading, cells, SUITE_COLUMNS))
    print()
    print(token_table(rows, heading, cells, over=f"per workspace · rung {reported}"))
    print()
    built = sum(run.build_s for run in runs)
    files = sum(run.files for run in runs)
    chunks = sum(run.chunks for run in runs)
    print(f"indexes: {files:,} files · {chunks:,} chunks · full builds {built:.1f} s in all")
    if levers:
        print()
        print("token economy, all queries pooled")
        print(levers_table(levers))


__all__ = ["run_suite"]
