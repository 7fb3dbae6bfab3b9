"""``rag-bench scale``: how the code index behaves as trees grow, one row per folder the user names.

Each tree is measured where it is: its files are only read, and its index is built in a temporary folder
(deleted after it). Per tree, in BM25 mode (the dense leg off, every other setting the user's):

* files and chunks indexed, the full build's time, the build's peak RSS (its own process, so one tree's
  figure does not carry into the next; the worker processes' peak is reported beside it) and the index's
  size on disk once closed;
* a no-change freshness check (what every search runs before ranking: the scan and the comparison);
* ``search_code`` as a tool call in-process (freshness check, ranking, rendering) and the ranking alone, p50
  and p95 over a known-item query set;
* when ``bm25s`` is installed: the same files as whole-file BM25 (``bm25s`` defaults), its build time, query
  p50 and size on disk, measured in the same run as the reference.

``--json`` keeps each tree's query texts (``query_texts``), so another tool can be timed on the same
questions (``scripts/scale_semble.py`` does so for semble).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentty_rag import __version__
from agentty_rag.bench.console import Progress, UsageError
from agentty_rag.bench.corpus import known_item_queries
from agentty_rag.bench.ladder import Target
from agentty_rag.bench.metrics import percentile
from agentty_rag.bench.report import columns, machine, machine_line, write_json
from agentty_rag.config import agentty_environment, environment_without_agentty
from agentty_rag.workspace.request import code_request, ranking_request

# The settings every scale run uses on top of the user's: BM25 mode.
LEXICAL = {"AGENTTY_RAG_DENSE": "0"}
FRESHNESS_RUNS = 5


def add_parser(commands: Any) -> None:
    """``rag-bench scale``'s arguments."""
    scale = commands.add_parser("scale", help="build and measure the code index of each tree: the scale table")
    scale.add_argument("trees", type=Path, nargs="+", help="the folders to measure (each one a workspace)")
    scale.add_argument("--queries", type=int, default=50, help="known-item queries per tree (default 50)")
    scale.add_argument("--seed", type=int, default=13, help="seed of the query sets (default 13)")
    scale.add_argument("--max-files", type=int, help="AGENTTY_RAG_CODE_MAX_FILES for these runs (default: yours)")
    scale.add_argument("--no-baseline", action="store_true", help="skip the whole-file bm25s reference")
    scale.add_argument("--json", type=Path, help="write every figure to this file")


def _size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _child(task: str, root: Path, state_dir: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """Run one build (``index`` or ``bm25s``) in a process of its own, for a peak RSS of its own."""
    code = "from agentty_rag.bench.scale import child; child()"
    done = subprocess.run(
        [sys.executable, "-c", code, task, str(root), str(state_dir), json.dumps(dict(env))],
        capture_output=True,
        text=True,
        env=environment_without_agentty(),
        check=False,
    )
    if done.returncode != 0:
        raise UsageError(f"the {task} build of {root} failed: {done.stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def child() -> None:
    """The child process's side of ``_child``: build, then print the figures as one JSON line."""
    import resource

    task, root, state_dir, env = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4])
    workspace = Target(root, env, state_dir).workspace()
    index = workspace.index("code")
    started = time.perf_counter()
    figures: dict[str, Any] = {}
    if task == "index":
        index.refresh(force_rebuild=True)
        figures.update(files=index.n_files, chunks=index.n_chunks)
    else:
        from agentty_rag.bench.baseline import WholeFileBaseline

        baseline = WholeFileBaseline(index)
        figures["documents"] = len(baseline.documents)
        baseline.retriever.save(str(state_dir / "bm25s"))
    figures["build_s"] = time.perf_counter() - started
    workspace.close()
    mine, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    kib = 1 if sys.platform != "darwin" else 1024  # ru_maxrss is in KiB on Linux, in bytes on macOS
    figures.update(peak_rss_mb=mine.ru_maxrss / kib / 1024, workers_peak_rss_mb=workers.ru_maxrss / kib / 1024)
    print(json.dumps(figures))


def _timed(run: Callable[[], object], times: int) -> list[float]:
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def _each(run: Callable[[str], object], queries: Sequence[str]) -> list[float]:
    """Milliseconds of ``run`` for each query."""
    spent = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def _searches(target: Target, count: int, seed: int) -> dict[str, Any]:
    """Freshness, search and ranking latencies on the built index, in this process."""
    workspace = target.workspace()
    index = workspace.index("code")
    index.refresh()  # opens the index: the figures below are of a warm server
    fresh = _timed(index.refresh, FRESHNESS_RUNS)
    chunks = index.all_chunks()
    # Eight words of a passage, as rag-bench asks; a tree of tiny passages gets two-word queries instead.
    picked = known_item_queries(chunks, count, seed) or known_item_queries(chunks, count, seed, words=2)
    queries = [query.text for query in picked]

    def tool_call(query: str) -> object:
        outcome = workspace.search(code_request(workspace.places, query, 10))
        return outcome.text, outcome.structured  # rendered, as a tool call's answer is

    for query in queries[:3]:
        tool_call(query)
    searched = _each(tool_call, queries)
    ranked = _each(lambda query: workspace.search(ranking_request("code", query, 10)), queries)
    workspace.close()
    return {
        "queries": len(queries),
        "freshness_ms": statistics.median(fresh),
        "search_p50_ms": percentile(searched, 0.5),
        "search_p95_ms": percentile(searched, 0.95),
        "ranking_p50_ms": percentile(ranked, 0.5),
        "query_texts": queries,
    }


def _baseline(root: Path, env: Mapping[str, str], queries: Sequence[str], state_dir: Path) -> dict[str, Any]:
    """The whole-file bm25s reference over the same files: build (own process), query p50, size on disk."""
    figures = _child("bm25s", root, state_dir, env)
    figures["disk_mb"] = _size(state_dir / "bm25s") / 1e6
    from agentty_rag.bench.baseline import WholeFileBaseline

    workspace = Target(root, env, state_dir).workspace()
    baseline = WholeFileBaseline(workspace.index("code"))
    workspace.close()
    figures["query_p50_ms"] = percentile(_each(lambda query: baseline.search(query, 10), queries), 0.5)
    return figures


def _bm25s_missing() -> str:
    import importlib.util

    return "" if importlib.util.find_spec("bm25s") else "bm25s is not installed: no whole-file reference"


def measure_tree(root: Path, env: Mapping[str, str], args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    """Every figure of one tree."""
    with tempfile.TemporaryDirectory(prefix="rag-bench-scale-") as temporary:
        state_dir = Path(temporary) / "index"
        progress(f"{root.name}: full build")
        row: dict[str, Any] = {"tree": str(root), **_child("index", root, state_dir, env)}
        row["disk_mb"] = _size(state_dir) / 1e6
        progress(f"{root.name}: freshness and searches")
        row.update(_searches(Target(root, env, state_dir), args.queries, args.seed))
        if not args.no_baseline and not _bm25s_missing():
            progress(f"{root.name}: whole-file bm25s")
            reference = Path(temporary) / "reference"
            reference.mkdir()
            row["bm25s"] = _baseline(root, env, row["query_texts"], reference)
    return row  # the query texts stay in the JSON: a peer tool is measured on the same queries


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    header = [
        "tree",
        "files / chunks",
        "full build",
        "peak RSS",
        "disk",
        "freshness",
        "search_code p50 / p95",
        "ranking p50",
        "bm25s build / query / disk",
    ]
    lines = [header]
    for row in rows:
        reference = row.get("bm25s")
        lines.append(
            [
                Path(row["tree"]).name,
                f"{row['files']:,} / {row['chunks']:,}",
                f"{row['build_s']:.1f} s",
                f"{row['peak_rss_mb']:.0f} MB",
                f"{row['disk_mb']:.1f} MB",
                f"{row['freshness_ms']:.0f} ms",
                f"{row['search_p50_ms']:.1f} / {row['search_p95_ms']:.1f} ms",
                f"{row['ranking_p50_ms']:.1f} ms",
                (
                    f"{reference['build_s']:.1f} s / {reference['query_p50_ms']:.2f} ms / {reference['disk_mb']:.1f} MB"
                    if reference
                    else "—"
                ),
            ]
        )
    return columns(lines)


def run_scale(args: argparse.Namespace) -> int:
    """``rag-bench scale``: one row per tree, printed as a table (and written as JSON with ``--json``)."""
    trees = [tree.expanduser().resolve() for tree in args.trees]
    for tree in trees:
        if not tree.is_dir():
            raise UsageError(f"{tree} is not a folder")
    if args.queries < 1:
        raise UsageError("--queries must be at least 1")
    env = {**agentty_environment(), **LEXICAL}
    if args.max_files is not None:
        env["AGENTTY_RAG_CODE_MAX_FILES"] = str(args.max_files)
    progress = Progress()
    rows: list[dict[str, Any]] = []
    for tree in trees:
        rows.append(measure_tree(tree, env, args, progress))
        if args.json:  # after every tree: a long run stopped half-way keeps what it measured
            write_json(args.json, {"version": __version__, "machine": machine(), "settings": env, "trees": rows})
    progress.done()
    print(f"rag-bench scale · code index, BM25 mode · {len(rows)} trees")
    print(machine_line())
    missing = "" if args.no_baseline else _bm25s_missing()
    if missing:
        print(missing)
    print()
    print(_table(rows))
    return 0


__all__ = ["add_parser", "child", "measure_tree", "run_scale"]
