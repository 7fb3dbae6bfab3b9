"""Move the package's modules into packages that say what they hold, and rewrite every reference to them.

Run from the repository's root, on a clean checkout, with the project's virtual environment (ruff is run
through it)::

    .venv/bin/python tools/relayout.py            # check, move, rewrite, sort imports, format
    .venv/bin/python tools/relayout.py --check    # only check the mapping against the tree; moves nothing

The moves are in ``tools/relayout.json`` (``src``: paths below ``src/agentty_rag``, ``tests``: paths below
``tests``). The script

* stops, listing them, when a module of the package root or of ``index/`` (or a test file of ``tests/`` or
  ``tests/index/``) is neither moved nor listed as staying: a module added since the mapping was written must
  be given a place first;
* refuses to run on a tree with uncommitted changes, or where a move's source is missing or its target
  exists (a second run): the rewriting is not idempotent, so it runs once, on the tree the mapping names;
* ``git mv``s every file and creates the new packages' ``__init__.py`` (a docstring for each source package,
  empty for tests, as the test packages are);
* rewrites every reference in the tracked text files (src, tests, docs, README.md, pyproject.toml, .ci,
  scripts, fixtures): dotted names (imports, ``mock.patch``/``monkeypatch`` targets, ``python -m``, entry
  points, logger names), ``agentty_rag/x.py`` and ``index/x.py`` paths, ``tests/test_x.py`` paths, and
  ``from agentty_rag import feedback``-style imports of a moved module (the bound name is kept with ``as``);
* updates ``tests/test_architecture.py``: the layers, the rule that finds a module's layer (the longest
  name in ``LAYERS`` it starts with, so ``status.types`` can sit below ``status``), and the command-line
  modules allowed to print;
* fixes ``Path(__file__)...parent`` chains in moved tests that reach above their own folder;
* sorts the imports and formats (``ruff check --select I --fix``, ``ruff format``), and lists the mentions
  of a moved module's bare file name (``service.py``) in docs and comments, to be read by hand.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "src" / "agentty_rag"
TESTS = ROOT / "tests"
MAPPING = Path(__file__).with_suffix(".json")
# Where references are rewritten (tracked files only), and what is never read.
REWRITTEN = ("src/", "tests/", "docs/", "README.md", "pyproject.toml", ".ci/", "scripts/", "fixtures/")
SKIPPED = ("tests/data/",)
ARCHITECTURE = TESTS / "test_architecture.py"


class Refused(Exception):
    """The tree is not the one the mapping was written for: nothing was changed."""


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout


def dotted(prefix: str, path: str) -> str:
    parts = Path(path).with_suffix("").parts
    return ".".join((prefix, *(parts[:-1] if parts[-1] == "__init__" else parts)))


def load() -> dict[str, object]:
    return json.loads(MAPPING.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


# -- checks ---------------------------------------------------------------------------------------------------


def problems(mapping: dict[str, object], *, require_clean: bool) -> list[str]:
    """Everything that stops the move: unmapped modules, missing sources, existing targets, a dirty tree."""
    found: list[str] = []
    for base, moves, stay, folders in (
        (PACKAGE, mapping["src"], mapping["stay"], ("", "index")),
        (TESTS, mapping["tests"], mapping["tests_stay"], ("", "index")),
    ):
        assert isinstance(moves, dict) and isinstance(stay, list)
        label = base.relative_to(ROOT).as_posix()
        for folder in folders:
            for path in sorted((base / folder).glob("*.py")):
                rel = path.relative_to(base).as_posix()
                if rel not in moves and rel not in stay:
                    found.append(f"not in the mapping: {label}/{rel} (add it to 'src'/'tests' or to the 'stay' list)")
        for old, new in moves.items():
            if not (base / old).is_file():
                found.append(f"missing: {label}/{old} (already moved? the script runs once, on a tree not moved)")
            if (base / new).exists():
                found.append(f"exists already: {label}/{new}")
        targets = list(moves.values())
        found += [f"two modules move to {label}/{t}" for t in sorted({t for t in targets if targets.count(t) > 1})]
    packages, moves = mapping["packages"], mapping["src"]
    assert isinstance(packages, dict) and isinstance(moves, dict)
    for target in moves.values():
        for parent in Path(target).parents[:-1]:
            if not (PACKAGE / parent).is_dir() and parent.as_posix() not in packages:
                found.append(f"no docstring in 'packages' for the new package {parent.as_posix()}")
    if require_clean:
        dirty = [line for line in git("status", "--porcelain", "--untracked-files=no").splitlines() if line.strip()]
        if dirty:
            found.append("uncommitted changes (commit or stash them first): " + ", ".join(d[3:] for d in dirty[:10]))
    return found


# -- moving ---------------------------------------------------------------------------------------------------


def move(mapping: dict[str, object]) -> list[Path]:
    """``git mv`` every file; create the new packages' ``__init__.py``. Returns the files created."""
    created: list[Path] = []
    docs = mapping["packages"]
    assert isinstance(docs, dict)
    for base, key in ((PACKAGE, "src"), (TESTS, "tests")):
        moves = mapping[key]
        assert isinstance(moves, dict)
        for old, new in moves.items():
            target = base / new
            for folder in reversed(target.relative_to(base).parents[:-1]):
                package = base / folder
                package.mkdir(exist_ok=True)
                init = package / "__init__.py"
                if not init.exists():
                    doc = docs.get(folder.as_posix()) if base == PACKAGE else None
                    if base == PACKAGE and doc is None:
                        raise Refused(f"no docstring for the new package {folder.as_posix()} in 'packages'")
                    text = textwrap.fill(doc, width=114) if doc else ""
                    init.write_text(f'"""{text}"""\n' if doc else "", encoding="utf-8")
                    created.append(init)
            git("mv", str(base / old), str(target))
    if created:
        git("add", *(str(p) for p in created))
    return created


# -- rewriting ------------------------------------------------------------------------------------------------


def renames(mapping: dict[str, object]) -> tuple[dict[str, str], dict[str, str]]:
    """Dotted names (old -> new) and paths (old -> new, as written from the repository root)."""
    names: dict[str, str] = {}
    paths: dict[str, str] = {}
    src, tests = mapping["src"], mapping["tests"]
    assert isinstance(src, dict) and isinstance(tests, dict)
    for old, new in src.items():
        names[dotted("agentty_rag", old)] = dotted("agentty_rag", new)
        paths[f"agentty_rag/{old}"] = f"agentty_rag/{new}"
        if "/" in old:  # index/lexical.py: distinctive enough to rewrite without the package's name
            paths[old] = new
    for old, new in tests.items():
        names[dotted("tests", old)] = dotted("tests", new)
        paths[f"tests/{old}"] = f"tests/{new}"
    return names, paths


def alternation(keys: list[str]) -> str:
    return "|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True))


def rewrite_text(text: str, names: dict[str, str], paths: dict[str, str]) -> str:
    """Dotted names, then paths, each in one pass (a name rewritten is never rewritten again). A path that
    starts with the package's or the tests' folder may follow a ``/`` (``src/agentty_rag/x.py``); a bare
    ``index/x.py`` may not (it would match inside ``agentty_rag/index/x.py``, rewritten already)."""
    text = re.sub(rf"(?<![\w.])({alternation(list(names))})(?!\w)", lambda m: names[m.group(1)], text)
    rooted = [k for k in paths if k.startswith(("agentty_rag/", "tests/"))]
    bare = [k for k in paths if k not in rooted]
    text = re.sub(rf"(?<![\w.-])({alternation(rooted)})(?!\w)", lambda m: paths[m.group(1)], text)
    return re.sub(rf"(?<![\w./-])({alternation(bare)})(?!\w)", lambda m: paths[m.group(1)], text) if bare else text


def rewrite_module_imports(text: str, names: dict[str, str]) -> str:
    """``from agentty_rag.index import lexical`` -> ``from agentty_rag.index.lexical import inverted as lexical``:
    imports that name a moved module as a member of its package (the bound name stays the same)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:  # a fixture written as a broken file on purpose
        return text
    edits: list[tuple[int, int, int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or node.level or not node.module:
            continue
        moved = [a for a in node.names if f"{node.module}.{a.name}" in names]
        if not moved:
            continue
        kept = [a for a in node.names if a not in moved]
        statements = []
        if kept:
            listed = ", ".join(a.name + (f" as {a.asname}" if a.asname else "") for a in kept)
            statements.append(f"from {node.module} import {listed}")
        for alias in moved:
            parent, _, name = names[f"{node.module}.{alias.name}"].rpartition(".")
            bound = alias.asname or alias.name
            statements.append(f"from {parent} import {name}" + (f" as {bound}" if bound != name else ""))
        assert node.end_lineno is not None and node.end_col_offset is not None
        joined = ("\n" + " " * node.col_offset).join(statements)
        edits.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset, joined))
    if not edits:
        return text
    lines = text.splitlines(keepends=True)
    for start, col, end, end_col, new in sorted(edits, reverse=True):
        head = lines[start - 1][:col]
        tail = lines[end - 1][end_col:]
        lines[start - 1 : end] = [head + new + tail]
    return "".join(lines)


def fix_file_paths(path: Path, depth_change: int) -> str | None:
    """``Path(__file__).resolve().parent.parent`` in a test moved ``depth_change`` folders deeper: one more
    ``.parent`` per folder where the chain reaches above the test's own folder. A chain that stays in its
    folder (a sibling file) is returned as a problem: the sibling did not move with it."""
    text = path.read_text(encoding="utf-8")
    problem = None

    def deeper(match: re.Match[str]) -> str:
        nonlocal problem
        chain = match.group(2)
        if chain.count(".parent") == 1:
            problem = f"{path.relative_to(ROOT)}: Path(__file__) names a file beside it; check it by hand"
            return match.group(0)
        return match.group(1) + chain + ".parent" * depth_change

    text = re.sub(r"(Path\(__file__\)(?:\.resolve\(\))?)((?:\.parent)+)", deeper, text)
    path.write_text(text, encoding="utf-8")
    return problem


def architecture(mapping: dict[str, object]) -> str:
    """``tests/test_architecture.py`` with the new layers, the unit of a module (the longest name in ``LAYERS``
    it starts with) and the command-line modules; ``Refused`` when the text to replace is not found."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    layers = mapping["layers"]
    assert isinstance(layers, list)
    body = "".join(
        f"    ({', '.join(json.dumps(n) for n in layer)}{',' if len(layer) == 1 else ''}),\n" for layer in layers
    )
    layers_re = re.compile(r"LAYERS: tuple\[tuple\[str, \.\.\.\], \.\.\.\] = \(\n.*?\n\)\n", re.S)
    if not layers_re.search(text):
        raise Refused("tests/test_architecture.py: LAYERS not found where expected; update it by hand")
    text = layers_re.sub(lambda _: f"LAYERS: tuple[tuple[str, ...], ...] = (\n{body})\n", text, count=1)
    text = text.replace(
        "# from a later one. A package (``sources``, ``index`` ...) is one layer; ``agentty_rag`` is the package's\n"
        "# own ``__init__`` (its version).",
        "# from a later one. A package (``sources``, ``index`` ...) is one layer, or a module of it is\n"
        "# (``status.types``: value types every layer reads, below the rest of ``status``); ``agentty_rag`` is\n"
        "# the package's own ``__init__`` (its version).",
    )
    old_unit = (
        "def _unit(module: str) -> str:\n"
        '    """The layer a dotted module name belongs to: its package below ``agentty_rag``, or the module '
        'itself."""\n'
        '    parts = module.split(".")\n'
        "    return parts[1] if len(parts) > 1 else parts[0]\n"
    )
    new_unit = (
        "def _unit(module: str) -> str:\n"
        '    """The layer a dotted module name belongs to: the longest name in ``LAYERS`` it starts with (a package\n'
        '    below ``agentty_rag``, or a module of one), or the module itself."""\n'
        '    parts = module.split(".")[1:] or ["agentty_rag"]\n'
        "    for end in range(len(parts), 0, -1):\n"
        '        if ".".join(parts[:end]) in _LAYER:\n'
        '            return ".".join(parts[:end])\n'
        "    return parts[0]\n"
    )
    old_print = 'if path.stem in ("cli", "__main__") or path.stem.startswith("cli_") or "bench" in path.parts:'
    new_print = (
        'if path.stem in ("cli", "__main__") or path.relative_to(SRC).as_posix() in COMMAND_LINE or "bench" in '
        "path.parts:"
    )
    for old, new in ((old_unit, new_unit), (old_print, new_print)):
        if old not in text:
            raise Refused(f"tests/test_architecture.py: not found, update by hand:\n{old}")
        text = text.replace(old, new)
    commands = mapping["command_line"]
    assert isinstance(commands, list)
    src = mapping["src"]
    assert isinstance(src, dict)
    listed = ", ".join(json.dumps(src[c]) for c in commands)
    anchor = "\n\ndef test_no_print_to_stdout_outside_command_line_code() -> None:"
    text = text.replace(
        anchor, f"\n\n# The command line's modules, which print to stdout.\nCOMMAND_LINE = ({listed},)\n{anchor}", 1
    )
    return text


def tracked_text_files() -> list[Path]:
    files = []
    for name in git("ls-files").splitlines():
        if name.startswith(REWRITTEN) and not name.startswith(SKIPPED) and not name.startswith("tools/"):
            path = ROOT / name
            try:
                path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
                continue
            files.append(path)
    return files


def bare_mentions(mapping: dict[str, object], files: list[Path]) -> list[str]:
    """Lines of the docs and README (and comments, docstrings) naming a moved module's bare file name."""
    src = mapping["src"]
    assert isinstance(src, dict)
    stems = sorted({Path(old).name for old in src} - {"__init__.py"})
    pattern = re.compile(rf"(?<![\w/.])({alternation(stems)})(?!\w)")
    found = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        if not (rel.startswith(("docs/", "src/")) or rel == "README.md"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                found.append(f"{rel}:{number}: {line.strip()[:110]}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only check the mapping against the tree")
    args = parser.parse_args(argv)
    mapping = load()
    found = problems(mapping, require_clean=not args.check)
    if found:
        print("relayout: refused, nothing was moved:", *found, sep="\n  ", file=sys.stderr)
        return 1
    if args.check:
        print("relayout: the mapping covers the tree; every move can be made")
        return 0
    names, paths = renames(mapping)
    src_moves, test_moves = mapping["src"], mapping["tests"]
    assert isinstance(src_moves, dict) and isinstance(test_moves, dict)
    layered = architecture(mapping)  # before anything moves: it refuses when the test has changed shape
    ARCHITECTURE.write_text(layered, encoding="utf-8")
    move(mapping)
    warnings: list[str] = []
    files = tracked_text_files()
    for path in files:
        text = path.read_text(encoding="utf-8")
        new = rewrite_text(text, names, paths)
        if path.suffix == ".py":
            new = rewrite_module_imports(new, names)
        if new != text:
            path.write_text(new, encoding="utf-8")
            if path.relative_to(ROOT).as_posix().startswith("fixtures/"):
                warnings.append(f"a fixture changed (benchmark input): {path.relative_to(ROOT)}")
    for old, new in test_moves.items():
        change = len(Path(new).parts) - len(Path(old).parts)
        if change and "__file__" in (TESTS / new).read_text(encoding="utf-8"):
            problem = fix_file_paths(TESTS / new, change)
            if problem:
                warnings.append(problem)
    ruff = [sys.executable, "-m", "ruff"]
    subprocess.run([*ruff, "check", "--select", "I", "--fix", "--quiet", "src", "tests"], cwd=ROOT, check=False)
    subprocess.run([*ruff, "format", "--quiet", "src", "tests"], cwd=ROOT, check=True)
    git("add", "-A", "src", "tests")
    git("add", "-u")
    print(f"relayout: moved {len(src_moves)} modules and {len(test_moves)} test files; references rewritten")
    mentions = bare_mentions(mapping, tracked_text_files())
    if mentions:
        print("relayout: bare file names of moved modules (read these by hand):", *mentions, sep="\n  ")
    if warnings:
        print("relayout: warnings:", *warnings, sep="\n  ", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Refused as refused:
        print(f"relayout: {refused}", file=sys.stderr)
        sys.exit(1)
