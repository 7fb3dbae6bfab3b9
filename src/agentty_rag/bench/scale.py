"""``rag-bench scale``: how the code index behaves as trees grow, one row per folder the user names.

Each tree is measured where it is: its files are only read, and its index is built in a temporary folder
(deleted after it). Per tree, in BM25 mode (the dense leg off, every other setting the user's):

* files and chunks indexed, the full build's time, the build's peak RSS (its own process, so one tree's
  figure does not carry into the next; the worker processes' peak is reported beside it) and the index's
  size on disk once closed;
* a no-change freshness check (what every search runs before ranking: the scan and the comparison);
* ``search_code`` as a tool call without the MCP transport (freshness check, ranking, rendering) and the
  ranking alone, p50 and p95 over a known-item query set, in a process of its own (its peak RSS: what a
  searching process holds);
* when ``bm25s`` is installed: the same files as whole-file BM25 (``bm25s`` defaults), its build time, query
  p50 and size on disk, measured in the same run as the reference, and what the index costs against it: the
  full build's time and the disk's size, each divided by bm25s's (``build_vs_bm25s``, ``disk_vs_bm25s``).

``--backends local,qdrant,shared`` measures each tree once per backend of the code index
(``AGENTTY_RAG_BACKEND``; ``shared``: a machine's first start from a shared index, published from a build
first, in qdrant-client's local mode), one row each, in a fresh temporary folder each; the table gains a
backend column and, since the backends differ in what a searching process holds, the searching process's
peak RSS. The bm25s reference is measured once per tree, on its first row.

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
from agentty_rag.config import VARIABLES, agentty_environment, environment_without_agentty, load_settings
from agentty_rag.workspace.request import code_request, ranking_request

# The settings every scale run uses on top of the user's: BM25 mode.
LEXICAL = {"AGENTTY_RAG_DENSE": "0"}
FRESHNESS_RUNS = 5
BACKEND = "AGENTTY_RAG_BACKEND"
# The code-index backends, and ``shared``: a machine starting from a shared index (qdrant-client's local mode in
# a temporary folder stands for the server; the index is published from a build first, not timed as one).
BACKENDS = (*next(v.choices for v in VARIABLES if v.name == BACKEND), "shared")


def _backends(text: str) -> list[str]:
    """``--backends``: comma-separated backend names, each one of ``BACKENDS``, repeats dropped."""
    names = list(dict.fromkeys(name.strip().lower() for name in text.split(",") if name.strip()))
    unknown = [name for name in names if name not in BACKENDS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown backend {', '.join(unknown) or repr(text)}; use {', '.join(BACKENDS)}"
        )
    return names


def add_parser(commands: Any) -> None:
    """``rag-bench scale``'s arguments."""
    scale = commands.add_parser("scale", help="build and measure the code index of each tree: the scale table")
    scale.add_argument("trees", type=Path, nargs="+", help="the folders to measure (each one a workspace)")
    scale.add_argument("--queries", type=int, default=50, help="known-item queries per tree (default 50)")
    scale.add_argument("--seed", type=int, default=13, help="seed of the query sets (default 13)")
    scale.add_argument("--max-files", type=int, help="AGENTTY_RAG_CODE_MAX_FILES for these runs (default: yours)")
    scale.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the whole-file bm25s reference (and the build ÷ bm25s, disk ÷ bm25s columns)",
    )
    scale.add_argument(
        "--backends",
        type=_backends,
        help=f"measure each tree with each of these code-index backends ({', '.join(BACKENDS)}; default: yours)",
    )
    scale.add_argument("--json", type=Path, help="write every figure to this file")


def _size(folder: Path) -> int:
    """The room the files under ``folder`` take: their allocated blocks where the system counts them (Qdrant's
    engine makes sparse files of 32 MB that hold a few kB), else their sizes."""
    total = 0
    for path in folder.rglob("*"):
        if path.is_file():
            stat = path.stat()
            blocks = getattr(stat, "st_blocks", None)
            total += stat.st_size if blocks is None else blocks * 512
    return total


def _child(task: str, root: Path, state_dir: Path, env: Mapping[str, str], *extra: str) -> dict[str, Any]:
    """Run one task (``index`` or ``bm25s``: a build; ``search``: the searches) in a process of its own, for a
    peak RSS of its own."""
    code = "from agentty_rag.bench.scale import child; child()"
    done = subprocess.run(
        [sys.executable, "-c", code, task, str(root), str(state_dir), json.dumps(dict(env)), *extra],
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
    """The child process's side of ``_child``: build or search, then print the figures as one JSON line."""
    import resource

    task, root, state_dir, env = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4])
    if task == "search":
        searched = _searches(Target(root, env, state_dir), int(sys.argv[5]), int(sys.argv[6]))
        print(json.dumps({**searched, "peak_rss_mb": _peak_rss_mb(resource.getrusage(resource.RUSAGE_SELF))}))
        return
    workspace = Target(root, env, state_dir).workspace()
    index = workspace.index("code")
    started = time.perf_counter()
    figures: dict[str, Any] = {}
    if task in ("index", "publish", "start"):
        # ``start``: a first refresh on an empty folder, which starts from the shared index
        index.refresh(force_rebuild=task != "start")
        figures.update(files=index.n_files, chunks=index.n_chunks)
        if task == "publish":
            from agentty_rag.index.qdrant.shared import Provenance

            index.publish(Provenance())
    else:
        from agentty_rag.bench.baseline import WholeFileBaseline

        baseline = WholeFileBaseline(index)
        figures["documents"] = len(baseline.documents)
        baseline.retriever.save(str(state_dir / "bm25s"))
    figures["build_s"] = time.perf_counter() - started
    workspace.close()
    mine, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    figures.update(peak_rss_mb=_peak_rss_mb(mine), workers_peak_rss_mb=_peak_rss_mb(workers))
    print(json.dumps(figures))


def _peak_rss_mb(usage: Any) -> float:
    kib = 1 if sys.platform != "darwin" else 1024  # ru_maxrss is in KiB on Linux, in bytes on macOS
    return float(usage.ru_maxrss) / kib / 1024


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


def ratios(row: Mapping[str, Any], reference: Mapping[str, Any]) -> dict[str, float]:
    """What the index costs against the bm25s reference of the same tree: its full build's time and its size
    on disk, each divided by the reference's (none for a reference that measured nothing)."""
    out = {}
    if reference.get("build_s"):
        out["build_vs_bm25s"] = row["build_s"] / reference["build_s"]
    if reference.get("disk_mb"):
        out["disk_vs_bm25s"] = row["disk_mb"] / reference["disk_mb"]
    return out


def _bm25s_missing() -> str:
    import importlib.util

    return "" if importlib.util.find_spec("bm25s") else "bm25s is not installed: no whole-file reference"


def measure_tree(
    root: Path,
    env: Mapping[str, str],
    args: argparse.Namespace,
    progress: Progress,
    baseline: bool = True,
    backend: str | None = None,
    reference: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every figure of one tree with one backend (``backend``, else ``env``'s); the bm25s reference too when
    ``baseline`` (or ``reference``, the one measured for the tree's first row: the ratios to it). For
    ``shared`` the index is published from a build first, and the build measured is a machine's first start
    from it."""
    backend = backend or load_settings(env).backend
    name = root.name if args.backends is None else f"{root.name} ({backend})"
    with tempfile.TemporaryDirectory(prefix="rag-bench-scale-") as temporary:
        state_dir = Path(temporary) / "index"
        row: dict[str, Any] = {"tree": str(root), "backend": backend}
        task = "index"
        if backend == "shared":
            env = {
                **env,
                BACKEND: "qdrant",
                "AGENTTY_QDRANT_URL": f"file:{Path(temporary) / 'collection'}",
                "AGENTTY_QDRANT_COLLECTION": "scale",
            }
            progress(f"{name}: build and publish")
            published = _child("publish", root, Path(temporary) / "published", env)
            row.update(publish_s=published["build_s"], collection_mb=_size(Path(temporary) / "collection") / 1e6)
            task = "start"
        progress(f"{name}: full build" if task == "index" else f"{name}: first start from the shared index")
        row.update(_child(task, root, state_dir, env))
        row["disk_mb"] = _size(state_dir) / 1e6
        if (state_dir / "qdrant").is_dir():
            row["qdrant_disk_mb"] = _size(state_dir / "qdrant") / 1e6
        progress(f"{name}: freshness and searches")
        searched = _child("search", root, state_dir, env, str(args.queries), str(args.seed))
        row["search_peak_rss_mb"] = searched.pop("peak_rss_mb")
        row.update(searched)
        if baseline and not args.no_baseline and not _bm25s_missing():
            progress(f"{name}: whole-file bm25s")
            (Path(temporary) / "reference").mkdir()
            reference = row["bm25s"] = _baseline(root, env, row["query_texts"], Path(temporary) / "reference")
        if reference:
            row.update(ratios(row, reference))
    return row  # the query texts stay in the JSON: a peer tool is measured on the same queries


def table(rows: Sequence[Mapping[str, Any]], by_backend: bool) -> str:
    """The scale table; ``by_backend`` adds the backend and the searching process's peak RSS."""
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
        "build ÷ bm25s",
        "disk ÷ bm25s",
    ]
    if by_backend:
        header[1:1] = ["backend"]
        header[5:5] = ["search RSS"]
    lines = [header]
    for row in rows:
        reference = row.get("bm25s")
        cells = [
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
            f"{row['build_vs_bm25s']:.1f}×" if "build_vs_bm25s" in row else "—",
            f"{row['disk_vs_bm25s']:.1f}×" if "disk_vs_bm25s" in row else "—",
        ]
        if by_backend:
            cells[1:1] = [row["backend"]]
            cells[5:5] = [f"{row['search_peak_rss_mb']:.0f} MB"]
        lines.append(cells)
    return columns(lines)


def run_scale(args: argparse.Namespace) -> int:
    """``rag-bench scale``: one row per tree (per backend with ``--backends``), printed as a table (and written
    as JSON with ``--json``)."""
    trees = [tree.expanduser().resolve() for tree in args.trees]
    for tree in trees:
        if not tree.is_dir():
            raise UsageError(f"{tree} is not a folder")
    if args.queries < 1:
        raise UsageError("--queries must be at least 1")
    env = {**agentty_environment(), **LEXICAL}
    if args.max_files is not None:
        env["AGENTTY_RAG_CODE_MAX_FILES"] = str(args.max_files)
    variants: list[tuple[str | None, dict[str, str]]] = (
        [(None, env)]
        if args.backends is None
        else [(backend, env if backend == "shared" else {**env, BACKEND: backend}) for backend in args.backends]
    )
    progress = Progress()
    rows: list[dict[str, Any]] = []
    for tree in trees:
        reference = None
        for number, (backend, variant) in enumerate(variants):
            row = measure_tree(tree, variant, args, progress, number == 0, backend, reference)
            reference = reference or row.get("bm25s")  # the tree's reference, for the ratios of its other rows
            rows.append(row)
            if args.json:  # after every row: a long run stopped half-way keeps what it measured
                write_json(args.json, {"version": __version__, "machine": machine(), "settings": env, "trees": rows})
    progress.done()
    backends = "" if args.backends is None else f" · backends {', '.join(args.backends)}"
    print(f"rag-bench scale · code index, BM25 mode · {len(trees)} trees{backends}")
    print(machine_line())
    missing = "" if args.no_baseline else _bm25s_missing()
    if missing:
        print(missing)
    print()
    print(table(rows, by_backend=args.backends is not None))
    return 0


__all__ = ["add_parser", "child", "measure_tree", "ratios", "run_scale", "table"]
