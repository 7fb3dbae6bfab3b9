"""``python -m agentty_rag.reference [--check] [--root DIR]``: write (or check) the generated docs pages;
``--from-rag-bench REPORT.json`` turns a ``rag-bench --json`` report into a benchmark result file."""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from agentty_rag.errors import ResultFileError
from agentty_rag.reference import COMMAND, stale, write
from agentty_rag.reference.benchmarks import from_rag_bench


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=COMMAND, description="Write the generated parts of the docs pages.")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the repository (default: this folder)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page differs")
    result = parser.add_argument_group("a benchmark result file from a rag-bench --json report")
    result.add_argument("--from-rag-bench", type=Path, metavar="REPORT", help="the report of rag-bench docs|code")
    result.add_argument("--set", help="the set's name (the section heading)")
    result.add_argument("--about", default="", help="what the set is, in one paragraph")
    result.add_argument("--command", help="the command that made the report, as a user runs it")
    result.add_argument("--configuration", default="every setting at its default", help="what was configured")
    result.add_argument("--out", type=Path, help="the result file to write (docs/benchmarks/NAME.json)")
    return parser


def _result_file(args: argparse.Namespace) -> int:
    if not (args.set and args.command and args.out):
        print(f"{COMMAND}: --from-rag-bench needs --set, --command and --out", file=sys.stderr)
        return 2
    report = json.loads(args.from_rag_bench.read_text(encoding="utf-8"))
    today = datetime.date.today().isoformat()
    result = from_rag_bench(report, args.set, args.command, args.about, args.configuration, today)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.out}: written; run {COMMAND} to put it on the benchmarks page", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.from_rag_bench is not None:
            return _result_file(args)
        if args.check:
            pages = stale(args.root)
            for page in pages:
                print(f"{page}: differs from its sources; run {COMMAND}", file=sys.stderr)
            return 1 if pages else 0
        changed = write(args.root)
    except (ResultFileError, ValueError, OSError) as error:
        print(f"{COMMAND}: {error}", file=sys.stderr)
        return 1
    print(
        f"{COMMAND}: {', '.join(changed) or 'every page'} {'rewritten' if changed else 'already current'}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
