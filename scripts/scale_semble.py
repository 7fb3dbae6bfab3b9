"""semble beside ``rag-bench scale``: its build, peak RSS, disk and query times on the same trees and queries.

Run it with a Python that has semble installed, never the project's own environment (semble is no dependency
of agentty-rag, and this script imports nothing of it)::

    rag-bench scale TREE... --max-files 100000 --json ours.json
    python3 -m venv /tmp/venv-semble && /tmp/venv-semble/bin/pip install semble==0.7.0
    /tmp/venv-semble/bin/python scripts/scale_semble.py ours.json --json semble.json

Per tree, in a process of its own (for a peak RSS of its own): ``SembleIndex.from_path`` with an empty
cache folder (a full build: walk, chunk in semble's worker processes, embed, BM25), ``save`` to a
temporary folder (its size is the disk figure), then the known-item queries ``rag-bench scale`` drew for
that tree (``query_texts`` in its JSON), ranked (semble's default: hybrid search and its code reranker) and
without the reranker.

semble's default embedding model (``minishlab/potion-code-16M-v2``) comes from the Hugging Face hub. Give a
downloaded copy with ``--model DIR``; without it the script builds an offline stand-in of the same shape:
a model2vec ``StaticModel`` of 256 float16 dimensions over a WordPiece vocabulary of 63,500 tokens (the
hub model's size: 16.2M parameters, about 63.5k tokens), the vocabulary made from the first tree's code
files (its most frequent words, then the most frequent word starts and continuations, every character as
a fallback), the vectors drawn from a seeded generator. Build and query run exactly semble's code and cost
what a static-embedding lookup costs; the stand-in's rankings are meaningless, so only its timings,
memory and disk are worth reading.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

DIMENSIONS = 256
VOCABULARY = 63_500
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PIECE_LENGTHS = range(2, 7)


def _code_files(root: Path) -> list[Path]:
    """The files semble itself indexes as code, in a stable order."""
    from semble.index.file_walker import walk_files
    from semble.index.files import get_extensions
    from semble.types import ContentType

    return sorted(walk_files(root, get_extensions([ContentType.CODE])))


def _word_counts(files: list[Path]) -> Counter[str]:
    from tokenizers import normalizers, pre_tokenizers

    normalize, split = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    counts: Counter[str] = Counter()
    for path in files:
        text = normalize.normalize_str(path.read_text(encoding="utf-8", errors="replace"))
        counts.update(word for word, _ in split.pre_tokenize_str(text))
    return counts


def _vocabulary(counts: Counter[str]) -> list[str]:
    """Special tokens, every character (alone and as a continuation), then words and pieces by frequency."""
    characters = sorted({character for word in counts for character in word})
    vocabulary = SPECIAL + characters + [f"##{character}" for character in characters]
    by_frequency = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    words = [word for word, _ in by_frequency if len(word) > 1][: (VOCABULARY - len(vocabulary)) * 2 // 3]
    pieces: Counter[str] = Counter()
    for word, count in by_frequency:
        for length in PIECE_LENGTHS:
            if len(word) > length:
                pieces[word[:length]] += count
                pieces.update(
                    {f"##{word[start : start + length]}": count for start in range(1, len(word) - length + 1)}
                )
    known = set(vocabulary) | set(words)
    ranked = [piece for piece, _ in sorted(pieces.items(), key=lambda item: (-item[1], item[0])) if piece not in known]
    return vocabulary + words + ranked[: VOCABULARY - len(vocabulary) - len(words)]


def build_stand_in(corpus: Path, folder: Path) -> None:
    """The offline stand-in for semble's model: same shape, deterministic, meaningless vectors."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    vocabulary = _vocabulary(_word_counts(_code_files(corpus)))
    tokenizer = Tokenizer(models.WordPiece({token: i for i, token in enumerate(vocabulary)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    vectors = np.random.default_rng(0).standard_normal((len(vocabulary), DIMENSIONS)).astype(np.float16)
    StaticModel(vectors, tokenizer, normalize=True, base_model_name="offline stand-in").save_pretrained(folder)


def _milliseconds(run: Any, queries: list[str]) -> list[float]:
    spent = []
    for query in queries:
        started = time.perf_counter()
        run(query)
        spent.append((time.perf_counter() - started) * 1000)
    return spent


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def child(tree: Path, queries: list[str], temporary: Path) -> dict[str, Any]:
    """One tree in this process: full build, save, queries. The environment names the model and the cache."""
    import resource

    from semble import SembleIndex

    started = time.perf_counter()
    index = SembleIndex.from_path(tree)
    figures: dict[str, Any] = {"build_s": time.perf_counter() - started}
    started = time.perf_counter()
    index.save(temporary / "index")
    figures["save_s"] = time.perf_counter() - started
    figures["disk_mb"] = sum(p.stat().st_size for p in (temporary / "index").rglob("*") if p.is_file()) / 1e6
    mine, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    figures.update(peak_rss_mb=mine.ru_maxrss / 1024, workers_peak_rss_mb=workers.ru_maxrss / 1024)
    figures.update(files=index.stats.indexed_files, chunks=index.stats.total_chunks, queries=len(queries))
    for query in queries[:3]:  # warm, as rag-bench scale warms its searches
        index.search(query, top_k=10)
    ranked = _milliseconds(lambda query: index.search(query, top_k=10), queries)
    plain = _milliseconds(lambda query: index.search(query, top_k=10, rerank=False), queries)
    figures.update(
        query_p50_ms=statistics.median(ranked),
        query_p95_ms=_percentile(ranked, 0.95),
        no_rerank_p50_ms=statistics.median(plain),
    )
    return figures


def measure(tree: Path, queries: list[str], model: Path) -> dict[str, Any]:
    """One tree in a fresh process, with an empty cache folder of its own (so the build is a full one)."""
    with tempfile.TemporaryDirectory(prefix="scale-semble-") as temporary:
        env = {**os.environ, "SEMBLE_MODEL_NAME": str(model), "SEMBLE_CACHE_LOCATION": f"{temporary}/cache"}
        env["HF_HUB_OFFLINE"] = "1"  # a local model folder: the hub is never asked
        arguments = [sys.executable, __file__, "--child", str(tree), temporary, json.dumps(queries)]
        done = subprocess.run(arguments, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise SystemExit(f"semble on {tree} failed:\n{done.stderr[-3000:]}")
        figures: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return {"tree": str(tree), **figures}


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        tree, temporary, queries = Path(sys.argv[2]), Path(sys.argv[3]), json.loads(sys.argv[4])
        print(json.dumps(child(tree, queries, temporary)))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scale_json", type=Path, help="rag-bench scale --json output: the trees and their queries")
    parser.add_argument("--model", type=Path, help="a model2vec model folder (default: the offline stand-in)")
    parser.add_argument("--stand-in", type=Path, default=Path(tempfile.gettempdir()) / "semble-stand-in")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    trees = json.loads(args.scale_json.read_text(encoding="utf-8"))["trees"]
    model = args.model
    if model is None:
        model = args.stand_in
        if not (model / "config.json").exists():
            print(f"building the offline stand-in model from {trees[0]['tree']} in {model}", file=sys.stderr)
            build_stand_in(Path(trees[0]["tree"]), model)
    # rag-bench scale --backends gives a tree one row per backend, each with the same queries: semble runs once.
    first: dict[str, dict[str, Any]] = {}
    for row in trees:
        first.setdefault(row["tree"], row)
    rows = []
    for row in first.values():
        rows.append(measure(Path(row["tree"]), row["query_texts"], model))
        figures = rows[-1]
        print(
            f"{Path(row['tree']).name}: {figures['files']:,} files / {figures['chunks']:,} chunks, "
            f"build {figures['build_s']:.1f} s, peak RSS {figures['peak_rss_mb']:.0f} MB "
            f"(workers {figures['workers_peak_rss_mb']:.0f} MB), disk {figures['disk_mb']:.1f} MB, "
            f"query p50 {figures['query_p50_ms']:.2f} ms (no reranker {figures['no_rerank_p50_ms']:.2f} ms)"
        )
        if args.json:
            stand_in = args.model is None
            args.json.write_text(json.dumps({"model": str(model), "stand_in": stand_in, "trees": rows}, indent=2))


if __name__ == "__main__":
    main()
