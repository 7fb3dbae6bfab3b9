"""Structural rules of the code base, checked by reading the source."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "agentty_rag"


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(SRC.rglob("*.py"))]


def test_only_the_settings_module_reads_the_environment() -> None:
    offenders = []
    for path, tree in _modules():
        if path.relative_to(SRC).parts[0] == "config":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "environb"):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def test_runtime_code_never_imports_the_benchmark() -> None:
    offenders = []
    for path, tree in _modules():
        if "bench" in path.parts:
            continue
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("agentty_rag.bench")]
    assert offenders == []


def test_only_the_server_imports_the_mcp_sdk() -> None:
    offenders = []
    for path, tree in _modules():
        if path.name == "server.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mcp":
                offenders.append(str(path.relative_to(SRC)))
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "mcp" for a in node.names):
                offenders.append(str(path.relative_to(SRC)))
    assert offenders == []


def test_no_print_to_stdout_outside_command_line_code() -> None:
    offenders = []
    for path, tree in _modules():
        if path.name in ("cli.py", "__main__.py") or "bench" in path.parts:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                if not any(k.arg == "file" for k in node.keywords):
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []
