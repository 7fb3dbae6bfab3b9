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
from pathlib import Path
from typing import Any

from agentty_rag import __version__
from agentty_rag.bench.console import Progress, UsageError, warn
from agentty_rag.bench.corpus import copy_corpus, docstring_queries, known_item_queries
from agentty_rag.bench.datasets import QueriesError, Query, docs_prefix_of, load_queries, reconcile
from agentty_rag.bench.ladder import (
    RUNGS,
    Target,
    build,
    check_k,
    measure_levers,
    measured_configuration,
    parse_rungs,
    plan,
    run_rungs,
)
from agentty_rag.bench.make_suite import make_suite
from agentty_rag.bench.manifest import ManifestError
from agentty_rag.bench.report import levers_table, machine, machine_line, metrics_table, ratio, write_json
from agentty_rag.bench.suite import run_suite
from agentty_rag.config import agentty_environment, effective_values, environment_without_agentty, load_settings
from agentty_rag.service import Workspace


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
    root_help = "workspace root (default: the current directory)"
    parser.add_argument("--root", type=Path, default=None, help=root_help)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for corpus, text in (("docs", "docs, skills and memory"), ("code", "source code")):
        single = commands.add_parser(corpus, help=f"measure the {text} index of one workspace")
        single.set_defaults(corpus=corpus)
        # also accepted after the command; SUPPRESS keeps a --root given before it
        single.add_argument("--root", type=Path, default=argparse.SUPPRESS, help=root_help)
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
        workspace.ranked(corpus, query, 10)
        edits.append(time.perf_counter() - started)
    figures["one_edit_next_answer_s"] = _median(edits)
    return figures


def run(args: argparse.Namespace) -> int:
    """``rag-bench docs|code``: the ladder on a private copy of one workspace."""
    root = (args.root or Path.cwd()).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"--root {root} is not a folder")
    if args.docstring_queries and args.corpus != "code":
        raise UsageError("--docstring-queries applies to the code corpus")
    if args.docstring_queries and args.queries:
        raise UsageError("use either --queries or --docstring-queries")
    check_k(args.k)
    names = parse_rungs(args.rungs)
    queries_from_file: list[Query] | None = None
    if args.queries:
        try:
            queries_from_file = load_queries(args.queries, args.corpus)
        except QueriesError as error:
            raise UsageError(str(error)) from error

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
        queries: list[Query]
        level = args.level
        if args.docstring_queries:
            files = [str(p.relative_to(copy_root)) for p in copy_root.rglob("*") if p.is_file()]
            queries = docstring_queries(copy_root, files, args.count, args.seed)
            query_set = f"{len(queries)} docstring queries (docs masked)"
            level = level or "passage"
        elif queries_from_file is not None:
            queries = queries_from_file
            query_set = f"{len(queries)} labeled queries from {args.queries}"
            level = level or "file"
        else:
            queries = []
            query_set = ""
            level = level or "passage"
        own_db = user_workspace.index(args.corpus).config.db_path
        built = build(target, args.corpus, own_db, progress)
        workspace, chunks, dense = built.workspace, built.chunks, built.dense
        if not queries_from_file and not args.docstring_queries:
            queries = known_item_queries(chunks, args.count, args.seed)
            query_set = f"{len(queries)} known-item queries (seed {args.seed}, lexical by design)"
        if not queries:
            raise UsageError(f"no queries: the {args.corpus} corpus at {root} has nothing to ask about")
        queries, warnings = reconcile(queries, chunks, args.corpus, docs_prefix_of(user_workspace))
        for warning in warnings:
            warn(warning)

        ladder, skipped_rungs = plan(names, args.config, dense)
        rows = [rung.row() for rung in run_rungs(target, built, args.corpus, queries, level, args.k, ladder, progress)]
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

    build_seconds = built.seconds
    size_mb = copied.bytes / 1e6
    print(f"rag-bench {args.corpus} · {root} · {copied.files:,} files · {len(chunks):,} chunks · {size_mb:.1f} MB")
    print(f"queries: {query_set} · relevance at {level} level · k={args.k}")
    print(machine_line())
    print()
    print(metrics_table(rows))
    for line in skipped_rungs:
        print(line)
    print()
    if "embedded" in dense:
        reused = f", {dense['reused']:,} vectors reused from the workspace's index" if dense.get("reused") else ""
        print(
            f"dense leg: {dense['description']}; embedded {dense['embedded']:,} chunks in {dense['seconds']:.1f} s "
            f"({dense['chunks_per_s']:.1f} chunks/s){reused}"
        )
        by_rung = {row["rung"]: row for row in rows}
        if "bm25" in by_rung and "+dense" in by_rung:
            added = by_rung["+dense"]["ms_p50"] - by_rung["bm25"]["ms_p50"]
            print(f"dense leg query latency: +{added:.1f} ms at p50 (query embedding and cosine search)")
    files_per_s = copied.files / build_seconds if build_seconds else 0.0
    print(
        f"index (full build)           {build_seconds:7.2f} s  ({files_per_s:,.0f} files/s, "
        f"{len(chunks) / build_seconds if build_seconds else 0:,.0f} chunks/s)"
    )
    if timings:
        print(f"cold open + first answer     {timings['cold_open_first_answer_s']:7.2f} s  (new process, median of 3)")
        print(f"freshness scan, no change    {timings['freshness_scan_s'] * 1000:7.1f} ms")
        print(f"one edit -> next answer      {timings['one_edit_next_answer_s'] * 1000:7.1f} ms")
    if levers:
        print()
        print(levers_table(levers))
        out = levers["all levers on"]
        print(
            f"MEASURE mode={measured.get('mode', 'bm25')} queries={len(queries)} "
            f"bytes={out['bytes_per_query']:.0f} tokens={out['tokens_per_query']:.0f} "
            f"answer_retention={ratio(out['answer_retention'])} recall@10={measured['recall@10']:.3f} "
            f"mrr={measured['mrr']:.3f} ndcg@10={measured['ndcg@10']:.3f}"
        )
    if args.json:
        data = {
            "version": __version__,
            "corpus": args.corpus,
            "root": str(root),
            "queries": query_set,
            "query_count": len(queries),
            "level": level,
            "k": args.k,
            "machine": machine(),
            "configuration": effective_values(load_settings(env)),
            "corpus_size": {
                "files": copied.files,
                "chunks": len(chunks),
                "bytes": copied.bytes,
                "skipped": copied.skipped.to_json(),
            },
            "index_full_s": build_seconds,
            "index_report": {"files": built.report.rechunked_files, "chunks": built.report.chunks_added},
            "timings": timings,
            "token_economy": levers,
            "dense": dense,
            "rungs": rows,
        }
        write_json(args.json, data)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``rag-bench``; returns the exit status (2 for bad arguments, queries files or manifests)."""
    args = _parser().parse_args(argv)
    try:
        if args.command in ("suite", "make-suite") and args.root is not None:
            raise UsageError(f"--root applies to docs and code; {args.command} names its workspaces' folders itself")
        if args.command == "suite":
            return run_suite(args)
        if args.command == "make-suite":
            return make_suite(args)
        return run(args)
    except (UsageError, QueriesError, ManifestError) as error:
        warn(str(error))
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
