"""``rag-bench``: what each retrieval stage buys, on the user's own corpus.

The corpus is copied to a temporary folder first; every index, edit and timing happens there, so the
workspace (and its ``.agentty/``) is never touched. Each rung of the ladder adds one stage to the previous
one and runs the server's own pipeline.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentty_rag import __version__
from agentty_rag.bench.baseline import WholeFileBaseline
from agentty_rag.bench.corpus import copy_corpus, docstring_queries, known_item_queries
from agentty_rag.bench.datasets import QueriesError, Query, load_queries, reconcile
from agentty_rag.bench.run import RungResult, Searcher, evaluate
from agentty_rag.config import agentty_environment, effective_values, environment_without_agentty, load_settings
from agentty_rag.service import Workspace
from agentty_rag.types import Chunk

# The ladder: each rung adds one stage to the previous one, in pipeline order, up to the default configuration;
# then each opt-in stage on top of the defaults. ``baseline`` is plain whole-file BM25 (bm25s defaults);
# ``+budget`` measures the passages that survive the output path (the relevance floor may drop some).
_ALL_OFF = {"AGENTTY_RAG_DENSE": "0", "AGENTTY_RAG_RERANK": "0", "AGENTTY_RAG_MMR": "0", "AGENTTY_RAG_STITCH": "0"}
_DENSE = {**_ALL_OFF, "AGENTTY_RAG_DENSE": "1"}
RUNGS: dict[str, dict[str, str]] = {
    "baseline": {},
    "bm25": _ALL_OFF,
    "+dense": _DENSE,
    "+rerank": {**_DENSE, "AGENTTY_RAG_RERANK": "1"},
    "+stitch": {**_DENSE, "AGENTTY_RAG_RERANK": "1", "AGENTTY_RAG_STITCH": "1"},
    "+budget": {**_DENSE, "AGENTTY_RAG_RERANK": "1", "AGENTTY_RAG_STITCH": "1"},
    "+mmr": {**_DENSE, "AGENTTY_RAG_RERANK": "1", "AGENTTY_RAG_STITCH": "1", "AGENTTY_RAG_MMR": "1"},
}
# Rungs whose hits are what the output path shows, not the ranking alone.
_OUTPUT_RUNGS = {"+budget", "+mmr", "current"}
# Token-economy rows: each lever switched off alone, all off, and all on (the default), on one ranking.
LEVERS: dict[str, dict[str, object]] = {
    "all levers on": {},
    "- relevance floor": {"relevance_floor": 0.0},
    "- water-filling": {"gamma": 0.0},
    "- confidence scaling": {"confidence_floor": 1.0},
    "- extractive": {"extractive": False},
    "- water-filling, - extractive": {"gamma": 0.0, "extractive": False},
    "all levers off": {"relevance_floor": 0.0, "gamma": 0.0, "confidence_floor": 1.0, "extractive": False},
}
TOKENS_PER_BYTE = 0.25  # ~4 bytes per token: the usual estimate for English text and code


class UsageError(Exception):
    """Bad arguments or an unusable queries file: exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rag-bench",
        description="Measure ranking quality, latency, freshness and token cost of agentty-rag on your corpus.",
    )
    parser.add_argument("corpus", choices=("docs", "code"), help="which index to measure")
    parser.add_argument("--root", type=Path, default=None, help="workspace root (default: the current directory)")
    parser.add_argument("--queries", type=Path, help="labeled queries (JSONL); default: generated known-item set")
    parser.add_argument(
        "--docstring-queries",
        action="store_true",
        help="code: documented functions' first doc sentence as queries, docs masked out",
    )
    parser.add_argument(
        "--level",
        choices=("file", "passage"),
        default=None,
        help="relevance at file or passage level (default: file for --queries, else passage)",
    )
    parser.add_argument("--count", type=int, default=200, help="generated queries (default 200)")
    parser.add_argument("--seed", type=int, default=13, help="seed of the generated query sets (default 13)")
    parser.add_argument("--rungs", help=f"comma-separated rungs to run (default: all of {', '.join(RUNGS)})")
    parser.add_argument(
        "--config",
        choices=("ladder", "current"),
        default="ladder",
        help="'current': measure only the configuration the environment selects",
    )
    parser.add_argument("--json", type=Path, help="write every figure and the configuration to this file")
    parser.add_argument("--no-timings", action="store_true", help="skip the index, cold-start and edit timings")
    parser.add_argument("-k", type=int, default=10, help="results per query (default 10)")
    return parser


class _Progress:
    """A progress line on stderr, only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()

    def __call__(self, text: str) -> None:
        if self.enabled:
            sys.stderr.write(f"\r\x1b[K{text}")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _docs_prefix(workspace: Workspace) -> str:
    """The docs folder relative to the workspace (``docs/``), or "" when it lies elsewhere."""
    docs = workspace.docs_root()
    if docs is None or workspace.root not in docs.parents:
        return ""
    return docs.relative_to(workspace.root).as_posix() + "/"


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else 0.0


def _timings(
    workspace: Workspace, corpus: str, root: Path, env: dict[str, str], query: str, progress: Callable[[str], None]
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


def _measure(workspace: Workspace, corpus: str, queries: list[Query], k: int) -> dict[str, dict[str, float]]:
    """Per token-economy row: bytes and tokens emitted per query, and how many answers survive.

    ``answers_in_output`` is the share of queries (with ``answers``) whose answer substrings all appear in the
    emitted text; ``answer_retention`` is that share among the queries whose answers the ranked passages held
    in full before the output path (what the output path keeps of what the ranking found).
    """
    base = workspace.budget()
    configs = {name: replace(base, **change) for name, change in LEVERS.items()}  # type: ignore[arg-type]
    totals = {name: {"bytes": 0, "kept": 0, "found_kept": 0} for name in configs}
    with_answers = found = 0
    for query in queries:
        retrieved = workspace.ranked(corpus, query.text, k)
        ranked_text = "\n".join(hit.chunk.text for hit in retrieved.hits)
        has_answers = bool(query.answers)
        in_ranking = has_answers and all(a in ranked_text for a in query.answers)
        with_answers += has_answers
        found += in_ranking
        for name, config in configs.items():
            text = workspace.render(corpus, query.text, retrieved, config).text
            totals[name]["bytes"] += len(text.encode("utf-8"))
            kept = has_answers and all(a in text for a in query.answers)
            totals[name]["kept"] += kept
            totals[name]["found_kept"] += kept and in_ranking
    count = max(len(queries), 1)
    nan = float("nan")
    return {
        name: {
            "bytes_per_query": t["bytes"] / count,
            "tokens_per_query": t["bytes"] * TOKENS_PER_BYTE / count,
            "answers_in_output": t["kept"] / with_answers if with_answers else nan,
            "answer_retention": t["found_kept"] / found if found else nan,
            "queries_with_answers": float(with_answers),
            "answers_in_ranking": float(found),
        }
        for name, t in totals.items()
    }


def _format_levers(levers: dict[str, dict[str, float]]) -> str:
    """The token-economy table: one row per lever switched off, against all off and against no
    water-filling and no extraction (the same ranking with only the floor and confidence scaling)."""
    base = levers["all levers off"]["tokens_per_query"] or 1.0
    plain = levers["- water-filling, - extractive"]["tokens_per_query"] or 1.0
    header = [
        "token economy (same ranking)",
        "bytes/q",
        "tokens/q",
        "vs all off",
        "vs no wf/extr",
        "answers in output",
        "answer retention",
    ]
    lines = [header]
    for name, row in levers.items():
        tokens = row["tokens_per_query"]
        lines.append(
            [
                name,
                f"{row['bytes_per_query']:.0f}",
                f"{tokens:.0f}",
                f"{tokens / base - 1:+.0%}",
                f"{tokens / plain - 1:+.0%}",
                _ratio(row["answers_in_output"]),
                _ratio(row["answer_retention"]),
            ]
        )
    return _columns(lines)


def _columns(lines: list[list[str]]) -> str:
    """Rows of cells as left-aligned columns, two spaces apart."""
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in lines)


def _ratio(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"


def _format_table(rows: list[dict[str, Any]]) -> str:
    header = ["rung", "recall@1", "recall@5", "recall@10", "MRR", "nDCG@10", "ms p50", "ms p95"]
    lines = [header]
    for row in rows:
        line = [row["rung"]] + [f"{row[m]:.3f}" for m in ("recall@1", "recall@5", "recall@10", "mrr", "ndcg@10")]
        line += [f"{row['ms_p50']:.1f}", f"{row['ms_p95']:.1f}"]
        lines.append(line)
    return _columns(lines)


def run(args: argparse.Namespace) -> int:
    root = (args.root or Path.cwd()).expanduser().resolve()
    if not root.is_dir():
        raise UsageError(f"--root {root} is not a folder")
    if args.docstring_queries and args.corpus != "code":
        raise UsageError("--docstring-queries applies to the code corpus")
    if args.docstring_queries and args.queries:
        raise UsageError("use either --queries or --docstring-queries")
    if not 1 <= args.k <= 50:
        raise UsageError("-k must be from 1 to 50")
    rung_names = list(RUNGS) if not args.rungs else [r.strip() for r in args.rungs.split(",") if r.strip()]
    unknown = [r for r in rung_names if r not in RUNGS]
    if unknown:
        raise UsageError(f"unknown rung(s) {', '.join(unknown)}; known: {', '.join(RUNGS)}")
    queries_from_file: list[Query] | None = None
    if args.queries:
        try:
            queries_from_file = load_queries(args.queries, args.corpus)
        except QueriesError as error:
            raise UsageError(str(error)) from error

    progress = _Progress()
    user_env = agentty_environment()
    settings = load_settings(user_env)
    for warning in settings.warnings:
        print(f"rag-bench: {warning}", file=sys.stderr)
    user_workspace = Workspace(root, settings)
    with tempfile.TemporaryDirectory(prefix="rag-bench-") as temporary:
        copy_root = Path(temporary) / "corpus"
        progress("copying the corpus")
        copied = copy_corpus(user_workspace, args.corpus, copy_root)
        env = {**user_env, **copied.overrides}
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
        workspace = Workspace(copy_root, load_settings(env))
        index = workspace.index(args.corpus)
        index.progress = lambda done, total, phase: progress(f"indexing: {phase} {done}/{total} files")
        started = time.perf_counter()
        report = index.refresh(force_rebuild=True)
        build_seconds = time.perf_counter() - started
        chunks = index.all_chunks()
        dense: dict[str, Any] = {"state": workspace.dense.ensure().state, "description": workspace.dense.describe()}
        if dense["state"] == "ready":
            # Vectors the workspace's own index already holds are reused (same model, same text).
            own = user_workspace.index(args.corpus).config.db_path
            dense["reused"] = index.import_vectors(own) if own.exists() else 0
            started = time.perf_counter()
            embedded = workspace.embed_all(args.corpus, lambda done, total, _: progress(f"embedding {done}/{total}"))
            seconds = time.perf_counter() - started
            dense.update(embedded=embedded, seconds=seconds, chunks_per_s=embedded / seconds if seconds else 0.0)
        if not queries_from_file and not args.docstring_queries:
            queries = known_item_queries(chunks, args.count, args.seed)
            query_set = f"{len(queries)} known-item queries (seed {args.seed}, lexical by design)"
        if not queries:
            raise UsageError(f"no queries: the {args.corpus} corpus at {root} has nothing to ask about")
        queries, warnings = reconcile(queries, chunks, args.corpus, _docs_prefix(user_workspace))
        for warning in warnings:
            print(f"rag-bench: {warning}", file=sys.stderr)

        rows: list[dict[str, Any]] = []
        ladder = ["current"] if args.config == "current" else rung_names
        skipped_rungs: list[str] = []
        if dense["state"] != "ready" and "+dense" in ladder:
            ladder = [r for r in ladder if r != "+dense"]
            skipped_rungs.append(f"+dense skipped: the dense leg is {dense['description']}")
        measure = settings.measure
        for rung in ladder:
            progress(f"rung {rung}")
            searcher: Searcher
            rung_workspace: Workspace | None = None
            if rung == "baseline":
                baseline = WholeFileBaseline(index)
                searcher = baseline.search
            else:
                overrides = {} if rung == "current" else RUNGS[rung]
                rung_workspace = Workspace(copy_root, load_settings({**env, **overrides}))
                rung_workspace.index(args.corpus).refresh()
                output = rung in _OUTPUT_RUNGS

                def searcher(query: str, k: int, ws: Workspace = rung_workspace, shown: bool = output) -> list[Chunk]:
                    retrieved = ws.ranked(args.corpus, query, k)
                    if not shown:
                        return [hit.chunk for hit in retrieved.hits]
                    return [p.hit.chunk for p in ws.render(args.corpus, query, retrieved).packed.passages]

            result: RungResult = evaluate(rung, searcher, queries, level, args.k)
            row: dict[str, Any] = {"rung": rung, **result.summary()}
            if rung_workspace is not None:
                row["mode"] = rung_workspace.ranked(args.corpus, queries[0].text, 1).mode
            row["per_query"] = [{"id": s.id, "first_rank": s.first_rank, "rr": s.rr} for s in result.scores]
            rows.append(row)
            if rung_workspace is not None:
                rung_workspace.close()

        levers: dict[str, dict[str, float]] = {}
        measured: dict[str, Any] = {}
        if measure:
            progress("measuring the output path")
            levers = _measure(workspace, args.corpus, queries, args.k)
            # The MEASURE line describes the configuration the environment selects (what the levers ran on).
            measured = next((r for r in rows if r["rung"] in ("+budget", "current")), {})
            if not measured:

                def shown(query: str, k: int) -> list[Chunk]:
                    retrieved = workspace.ranked(args.corpus, query, k)
                    return [p.hit.chunk for p in workspace.render(args.corpus, query, retrieved).packed.passages]

                measured = {"rung": "current", **evaluate("current", shown, queries, level, args.k).summary()}
            measured["mode"] = workspace.ranked(args.corpus, queries[0].text, 1).mode
        timings: dict[str, float] = {}
        if not args.no_timings:
            timings = _timings(workspace, args.corpus, copy_root, env, queries[0].text, progress)
        progress.done()
        workspace.close()

    size_mb = copied.bytes / 1e6
    print(f"rag-bench {args.corpus} · {root} · {copied.files:,} files · {len(chunks):,} chunks · {size_mb:.1f} MB")
    print(f"queries: {query_set} · relevance at {level} level · k={args.k}")
    print(f"machine: {os.cpu_count()} cores · Python {platform.python_version()} · agentty-rag {__version__}")
    print()
    print(_format_table(rows))
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
        print(_format_levers(levers))
        current = measured
        out = levers["all levers on"]
        print(
            f"MEASURE mode={current.get('mode', 'bm25')} queries={len(queries)} "
            f"bytes={out['bytes_per_query']:.0f} tokens={out['tokens_per_query']:.0f} "
            f"answer_retention={_ratio(out['answer_retention'])} recall@10={current['recall@10']:.3f} "
            f"mrr={current['mrr']:.3f} ndcg@10={current['ndcg@10']:.3f}"
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
            "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
            "configuration": effective_values(load_settings(env)),
            "corpus_size": {
                "files": copied.files,
                "chunks": len(chunks),
                "bytes": copied.bytes,
                "skipped": copied.skipped.to_json(),
            },
            "index_full_s": build_seconds,
            "index_report": {"files": report.rechunked_files, "chunks": report.chunks_added},
            "timings": timings,
            "token_economy": levers,
            "dense": dense,
            "rungs": rows,
        }
        args.json.write_text(json.dumps(data, indent=2, sort_keys=True, default=str), encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``rag-bench``; returns the exit status (2 for bad arguments or queries files)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return run(args)
    except UsageError as error:
        print(f"rag-bench: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
