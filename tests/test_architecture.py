"""Structural rules of the code base, checked by reading the source."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import agentty_rag
from agentty_rag import errors

SRC = Path(__file__).resolve().parent.parent / "src" / "agentty_rag"

# The pipeline's layers, lowest first: a module imports from its own layer and the layers before it, never
# from a later one. A package (``sources``, ``index`` ...) is one layer, or a module of it is
# (``status.types``: value types every layer reads, below the rest of ``status``); ``agentty_rag`` is
# the package's own ``__init__`` (its version).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("agentty_rag", "config", "types", "errors", "fsguard", "jsonc", "jobs", "source_kinds", "status.types", "state"),
    ("sources", "mcp_resources"),
    ("chunking",),
    ("ollama_api",),
    ("index",),
    ("retrieve",),
    ("budget",),
    ("render",),
    ("workspace",),
    ("server", "cli", "status", "bench", "__main__", "reference"),
)
_LAYER = {name: rank for rank, names in enumerate(LAYERS) for name in names}


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
        if "bench" in path.parts or "reference" in path.parts:  # reference: the docs pages, rag-bench's included
            continue
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            )
            offenders += [f"{path.name}: {n}" for n in names if n.startswith("agentty_rag.bench")]
    assert offenders == []


# The MCP server (a package), and the client that reads other servers' resources and follows their changes.
SDK_USERS = ("mcp_resources/connect.py", "mcp_resources/reader.py", "mcp_resources/changes.py")


def test_only_the_server_and_the_resource_reader_import_the_mcp_sdk() -> None:
    offenders = []
    for path, tree in _modules():
        if path.relative_to(SRC).parts[0] == "server" or path.relative_to(SRC).as_posix() in SDK_USERS:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mcp":
                offenders.append(str(path.relative_to(SRC)))
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "mcp" for a in node.names):
                offenders.append(str(path.relative_to(SRC)))
    assert offenders == []


# The command line's modules, which print to stdout.
COMMAND_LINE = (
    "cli/command.py",
    "cli/hook.py",
    "cli/init.py",
)


def test_no_print_to_stdout_outside_command_line_code() -> None:
    offenders = []
    for path, tree in _modules():
        if (
            path.stem in ("cli", "__main__")
            or path.relative_to(SRC).as_posix() in COMMAND_LINE
            or "bench" in path.parts
        ):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                if not any(k.arg == "file" for k in node.keywords):
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


def _unit(module: str) -> str:
    """The layer a dotted module name belongs to: the longest name in ``LAYERS`` it starts with (a package
    below ``agentty_rag``, or a module of one), or the module itself."""
    parts = module.split(".")[1:] or ["agentty_rag"]
    for end in range(len(parts), 0, -1):
        if ".".join(parts[:end]) in _LAYER:
            return ".".join(parts[:end])
    return parts[0]


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(tree: ast.Module) -> set[str]:
    """Project modules a module imports, anywhere in it (deferred imports inside functions too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "agentty_rag"}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "agentty_rag":
            assert node.level == 0, "imports of the project are absolute"
            module = node.module or ""
            # `from agentty_rag import jsonc` imports the module jsonc, not the package's __init__
            submodules = [f"{module}.{a.name}" for a in node.names if _is_module(f"{module}.{a.name}")]
            found |= set(submodules) if submodules else {module}
    return found


def _is_module(name: str) -> bool:
    path = SRC.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def test_every_module_belongs_to_a_layer() -> None:
    assert sorted({_unit(_module_name(path)) for path, _ in _modules()} - set(_LAYER)) == []


def test_imports_flow_down_the_pipeline() -> None:
    """config → sources → chunking → index → retrieve → budget → render → service → server/cli/inject/bench."""
    offenders = []
    for path, tree in _modules():
        importer = _unit(_module_name(path))
        for module in sorted(_imported(tree)):
            if _LAYER.get(_unit(module), -1) > _LAYER.get(importer, len(LAYERS)):
                offenders.append(f"{path.relative_to(SRC)} imports {module}")
    assert offenders == []


def _project_exceptions() -> set[type[BaseException]]:
    found: set[type[BaseException]] = set()
    for info in pkgutil.walk_packages(agentty_rag.__path__, "agentty_rag."):
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__.startswith("agentty_rag"):
                found.add(value)
    return found


def test_every_error_is_defined_in_the_one_error_tree() -> None:
    exceptions = _project_exceptions()
    assert errors.AgenttyError in exceptions
    assert sorted(e.__qualname__ for e in exceptions if e.__module__ != "agentty_rag.errors") == []
    assert sorted(e.__qualname__ for e in exceptions if not issubclass(e, errors.AgenttyRagError)) == []


def test_the_error_tree_is_drawn_with_every_error() -> None:
    drawn = errors.__doc__ or ""
    assert [name for name in errors.__all__ if f" {name} " not in drawn and f"\n{name} " not in drawn] == []
