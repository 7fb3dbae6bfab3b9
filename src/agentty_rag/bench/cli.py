"""``rag-bench``: what each retrieval stage buys, on the user's own corpus, or on a suite of workspaces.

``rag-bench docs|code`` copies the corpus to a temporary folder first; every index, edit and timing happens
there, so the workspace (and its ``.agentty/``) is never touched. ``rag-bench suite`` measures each workspace of
a manifest where it is, with its indexes in a temporary folder (it edits nothing, so it needs no copy). Each
rung of the ladder adds one stage to the previous one and runs the server's own pipeline.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentty_rag import __version__
from agentty_rag.bench.console import Progress, UsageError, warn
from agentty_rag.bench.corpus import CopiedCorpus, copy_corpus, docstring_queries, known_item_queries
from agentty_rag.bench.datasets import QueriesError, Query, docs_prefix_of, load_queries, reconcile
from agentty_rag.bench.ladder import (
    RUNGS,
    Built,
    Target,
    build,
    check_k,
    measured_configuration,
    parse_rungs,
    plan,
    run_rungs,
)
from agentty_rag.bench.levers import measure_levers
from agentty_rag.bench.make_suite import make_suite
from agentty_rag.bench.manifest import ManifestError
from agentty_rag.bench.report import levers_table, machine, machine_line, metrics_table, ratio, token_table, write_json
from agentty_rag.bench.scale import add_parser as add_scale_parser
from agentty_rag.bench.scale import run_scale
from agentty_rag.bench.suite import run_suite
from agentty_rag.config import agentty_environment, effective_values, environment_without_agentty, load_settings
from agentty_rag.workspace.request import ranking_request
from agentty_rag.workspace.service import Workspace


def _ladder_options(parser: argparse.ArgumentParser, level_default: str) -> None:
    parser.add_argument(
        "--level",
        choices=("file", "passage"),
        default=None,
        help=f"relevance at file or passage level (default: {level_default})",
    )
    parser.add_argument("--rungs", help=f"comma-separated rungs to run (default: all of {', '.join(RUNGS)})")
    parser.add_argument(
        "--config",
        choices=("ladder", "current"),
        default="ladder",
        help="'current': measure only the configuration the environment selects",
    )
    parser.add_argument("--json", type=Path, help="write every figure and the configuration to this file")
    parser.add_argument("-k", type=int, default=10, help="results per query (default 10)")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-bench",
        description="Measure ranking quality, latency, freshness and token cost of agentty-rag on your corpus.",
    )
    root_help = "docs and code: the workspace root (default: the current directory)"
    parser.add_argument("--root", type=Path, default=None, metavar="DIR", help=root_help)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for corpus, text in (("docs", "docs, skills and memory"), ("code", "source code")):
        single = commands.add_parser(corpus, help=f"measure the {text} index of one workspace")
        single.set_defaults(corpus=corpus)
        # also accepted after the command; SUPPRESS keeps a --root given before it
        single.add_argument("--root", type=Path, default=argparse.SUPPRESS, metavar="DIR", help=root_help)
        single.add_argument("--queries", type=Path, help="labeled queries (JSONL); default: generated known-item set")
        single.add_argument(
            "--docstring-queries",
            action="store_true",
            help="code: documented functions' first doc sentence as queries, docs masked out",
        )
        single.add_argument("--count", type=int, default=200, help="generated queries (default 200)")
        single.add_argument("--seed", type=int, default=13, help="seed of the generated query sets (default 13)")
        single.add_argument("--no-timings", action="store_true", help="skip the index, cold-start and edit timings")
        _ladder_options(single, "file for --queries, else passage")
    suite = commands.add_parser(
        "suite", help="measure every workspace of a manifest: per-workspace rows, macro means, categories"
    )
    suite.add_argument("manifest", type=Path, help="the suite's manifest (TOML)")
    suite.add_argument("--only", help="comma-separated workspace names to run (default: all)")
    _ladder_options(suite, "the manifest's, else file")
    make = commands.add_parser(
        "make-suite", help="write a suite manifest and per-workspace queries files from one JSONL set of queries"
    )
    make.add_argument("queries", type=Path, help="JSONL: one query a line, with a field naming its workspace")
    make.add_argument("--by", required=True, help="the field whose value is the workspace's folder under --corpora")
    make.add_argument("--corpora", type=Path, required=True, help="the folder holding the workspaces")
    make.add_argument("--out", type=Path, required=True, help="where to write suite.toml and the queries files")
    make.add_argument("--corpus", choices=("docs", "code"), default="code", help="which index (default code)")
    make.add_argument("--level", choices=("file", "passage"), default="file", help="relevance level (default file)")
    make.add_argument("--category", default="category", help="the field read as the category (default category)")
    add_scale_parser(commands)
    return parser


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def _timings(
    workspace: Workspace, corpus: str, root: Path, env: dict[str, str], query: str, progress: Progress
) -> dict[str, float]:
    """Cold open + first answer (a new process), no-change freshness scan, one edit -> next answer."""
    figures: dict[str, float] = {}
    command = [sys.executable, "-m", "agentty_rag", "--root", str(root), f"search-{corpus}", query]
    cold = []
    for attempt in range(3):
        progress(f"timing cold start {attempt + 1}/3")
        started = time.perf_counter()
        subprocess.run(command, env={**environment_without_agentty(), **env}, capture_output=True, check=False)
        cold.append(time.perf_counter() - started)
    figures["cold_open_first_answer_s"] = _median(cold)
    index = workspace.index(corpus)
    scans = []
    for _ in range(5):
        started = time.perf_counter()
        index.refresh()
        scans.append(time.perf_counter() - started)
    figures["freshness_scan_s"] = _median(scans)
    edits = []
    paths = index.file_paths()
    for path in paths[:: max(1, len(paths) // 3)][:3]:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write("\n" + ("# " if corpus == "code" else "") + "edited by rag-bench\n")
        started = time.perf_counter()
        index.refresh()
        workspace.search(ranking_request(corpus, query, 10))
        edits.append(time.perf_counter() - started)
    figures["one_edit_next_answer_s"] = _median(edits)
    return figures


def _checked(args: argparse.Namespace) -> tuple[Path, list[str], list[Query] | None]:
    """The corpus root, the rungs to run and the queries file's queries; ``UsageError`` for bad arguments."""
    root = (args.root or Path.cwd()).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"--root {root} is not a folder")
    if args.docstring_queries and args.corpus != "code":
        raise UsageError("--docstring-queries applies to the code corpus")
    if args.docstring_queries and args.queries:
        raise UsageError("use either --queries or --docstring-queries")
    check_k(args.k)
    names = parse_rungs(args.rungs)
    if not args.queries:
        return root, names, None
    try:
        return root, names, load_queries(args.queries, args.corpus)
    except QueriesError as error:
        raise UsageError(str(error)) from error


def _given_queries(
    args: argparse.Namespace, copy_root: Path, from_file: list[Query] | None
) -> tuple[list[Query], str, str]:
    """The queries known before the index is built (docstring queries mask the copy's docs, so they come
    first), how to describe them, and the relevance level."""
    if args.docstring_queries:
        files = [str(p.relative_to(copy_root)) for p in copy_root.rglob("*") if p.is_file()]
        queries = docstring_queries(copy_root, files, args.count, args.seed)
        return queries, f"{len(queries)} docstring queries (docs masked)", args.level or "passage"
    if from_file is not None:
        return from_file, f"{len(from_file)} labeled queries from {args.queries}", args.level or "file"
    return [], "", args.level or "passage"


@dataclass
class Measured:
    """Everything one ``rag-bench docs|code`` run measured, for the report."""

    root: Path
    query_set: str
    queries: list[Query]
    level: str
    copied: CopiedCorpus
    built: Built
    env: dict[str, str]
    rows: list[dict[str, Any]]
    skipped_rungs: list[str]
    levers: dict[str, dict[str, float]]
    measured: dict[str, Any]
    timings: dict[str, float]


def _measure(args: argparse.Namespace) -> Measured:
    root, names, from_file = _checked(args)
    progress = Progress()
    user_env = agentty_environment()
    settings = load_settings(user_env)
    for warning in settings.warnings:
        warn(warning)
    user_workspace = Workspace(root, settings)
    with tempfile.TemporaryDirectory(prefix="rag-bench-") as temporary:
        copy_root = Path(temporary) / "corpus"
        progress("copying the corpus")
        copied = copy_corpus(user_workspace, args.corpus, copy_root)
        env = {**user_env, **copied.overrides}
        target = Target(copy_root, env)
        queries, query_set, level = _given_queries(args, copy_root, from_file)
        own_db = user_workspace.index(args.corpus).config.db_path
        built = build(target, args.corpus, own_db, progress)
        workspace = built.workspace
        if not from_file and not args.docstring_queries:
            queries = known_item_queries(built.chunks, args.count, args.seed)
            query_set = f"{len(queries)} known-item queries (seed {args.seed}, lexical by design)"
        if not queries:
            raise UsageError(f"no queries: the {args.corpus} corpus at {root} has nothing to ask about")
        queries, warnings = reconcile(queries, built.chunks, args.corpus, docs_prefix_of(user_workspace))
        for warning in warnings:
            warn(warning)

        ladder, skipped_rungs = plan(names, args.config, built.dense, built.workspace.settings)
        rungs = run_rungs(target, built, args.corpus, queries, level, args.k, ladder, progress)
        rows = [rung.row() for rung in rungs]
        levers: dict[str, dict[str, float]] = {}
        measured: dict[str, Any] = {}
        if workspace.settings.measure:
            progress("measuring the output path")
            levers = measure_levers(workspace, args.corpus, queries, args.k)
            measured = measured_configuration(built, args.corpus, queries, level, args.k, rows)
        timings: dict[str, float] = {}
        if not args.no_timings:
            timings = _timings(workspace, args.corpus, copy_root, env, queries[0].text, progress)
        progress.done()
        workspace.close()
    return Measured(root, query_set, queries, level, copied, built, env, rows, skipped_rungs, levers, measured, timings)


def _print_report(args: argparse.Namespace, m: Measured) -> None:
    chunks, dense, rows, build_seconds = m.built.chunks, m.built.dense, m.rows, m.built.seconds
    size_mb = m.copied.bytes / 1e6
    print(f"rag-bench {args.corpus} · {m.root} · {m.copied.files:,} files · {len(chunks):,} chunks · {size_mb:.1f} MB")
    print(f"queries: {m.query_set} · relevance at {m.level} level · k={args.k}")
    print(machine_line())
    print()
    print(metrics_table(rows))
    for line in m.skipped_rungs:
        print(line)
    print()
    print(token_table(rows))
    print()
    if "embedded" in dense:
        reused = f", {dense['reused']:,} vectors reused from the workspace's index" if dense.get("reused") else ""
        print(
            f"dense leg: {dense['description']}; embedded {dense['embedded']:,} chunks in {dense['seconds']:.1f} s "
            f"({dense['chunks_per_s']:.1f} chunks/s){reused}"
        )
        if dense.get("leg_check"):
            print(f"leg check of the copy: {dense['leg_check']} — made in {dense['leg_check_s']:.1f} s")
        by_rung = {row["rung"]: row for row in rows}
        if "bm25" in by_rung and "+dense" in by_rung:
            added = by_rung["+dense"]["ms_p50"] - by_rung["bm25"]["ms_p50"]
            print(f"dense leg query latency: +{added:.1f} ms at p50 (query embedding and cosine search)")
    files_per_s = m.copied.files / build_seconds if build_seconds else 0.0
    print(
        f"index (full build)           {build_seconds:7.2f} s  ({files_per_s:,.0f} files/s, "
        f"{len(chunks) / build_seconds if build_seconds else 0:,.0f} chunks/s)"
    )
    if m.timings:
        print(
            f"cold open + first answer     {m.timings['cold_open_first_answer_s']:7.2f} s  (new process, median of 3)"
        )
        print(f"freshness scan, no change    {m.timings['freshness_scan_s'] * 1000:7.1f} ms")
        print(f"one edit -> next answer      {m.timings['one_edit_next_answer_s'] * 1000:7.1f} ms")
    if m.levers:
        print()
        print(levers_table(m.levers))
        out = m.levers["all levers on"]
        print(
            f"MEASURE mode={m.measured.get('mode', 'bm25')} queries={len(m.queries)} "
            f"bytes={out['bytes_per_query']:.0f} tokens={out['tokens_per_query']:.0f} "
            f"answer_retention={ratio(out['answer_retention'])} recall@10={m.measured['recall@10']:.3f} "
            f"mrr={m.measured['mrr']:.3f} ndcg@10={m.measured['ndcg@10']:.3f}"
        )


def _report_data(args: argparse.Namespace, m: Measured) -> dict[str, Any]:
    return {
        "version": __version__,
        "corpus": args.corpus,
        "root": str(m.root),
        "queries": m.query_set,
        "query_count": len(m.queries),
        "level": m.level,
        "k": args.k,
        "machine": machine(),
        "configuration": effective_values(load_settings(m.env)),
        "corpus_size": {
            "files": m.copied.files,
            "chunks": len(m.built.chunks),
            "bytes": m.copied.bytes,
            "skipped": m.copied.skipped.to_json(),
        },
        "index_full_s": m.built.seconds,
        "index_report": {"files": m.built.report.rechunked_files, "chunks": m.built.report.chunks_added},
        "timings": m.timings,
        "token_economy": m.levers,
        "dense": m.built.dense,
        "rungs": m.rows,
    }


def run(args: argparse.Namespace) -> int:
    """``rag-bench docs|code``: the ladder on a private copy of one workspace."""
    measured = _measure(args)
    _print_report(args, measured)
    if args.json:
        write_json(args.json, _report_data(args, measured))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``rag-bench``; returns the exit status (2 for bad arguments, queries files or manifests)."""
    args = _parser().parse_args(argv)
    try:
        if args.command in ("suite", "make-suite", "scale") and args.root is not None:
            raise UsageError(f"--root applies to docs and code; {args.command} names its workspaces' folders itself")
        if args.command == "suite":
            return run_suite(args)
        if args.command == "make-suite":
            return make_suite(args)
        if args.command == "scale":
            return run_scale(args)
        return run(args)
    except (UsageError, QueriesError, ManifestError) as error:
        warn(str(error))
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
