"""An untrusted repository, second sweep: each hostile input or injected fault is built here with real files,
links, FIFOs, mounts and processes, and the real command line, index and server meet it.

Nothing here is mocked: a fault is made the way the world makes it (a FIFO where a file was, a hard link
into the workspace, a small file system filled to the last byte)."""

from __future__ import annotations

import json
import math
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentty_rag.config import load_settings
from agentty_rag.index.storage.database import checksum
from agentty_rag.state import feedback
from agentty_rag.state.machine_key import machine_key
from agentty_rag.workspace import leg_check
from agentty_rag.workspace.service import Workspace
from tests.conftest import FAKE_DENSE, FIXTURES, LEXICAL, run_main, run_module, write


def _key() -> bytes:
    """The session's machine key, which seals the verdicts its workspaces keep."""
    return machine_key(Path(os.environ["XDG_STATE_HOME"]))


def _ws(root: Path, **env: str) -> Workspace:
    return Workspace(root, load_settings({**LEXICAL, "HOME": str(root.parent / "home"), **env}))


def _cli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return run_main("agentty_rag", root, args, env)


# -- a file name that is not UTF-8, beside a .gitignore ------------------------------------------------------


def test_a_name_that_is_not_utf8_beside_a_gitignore_leaves_every_command_working(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "src/ok.py": "def capybara():\n    pass\n",
            "docs/ok.md": "# Capybara\n\nThe capybara grazes.\n",
            ".gitignore": "build/\n",
        },
    )
    for name in (b"src/c\xff.py", b"docs/d\xfe.md"):
        with open(os.path.join(os.fsencode(tmp_path), name), "wb") as handle:
            handle.write(b"x = 1\n")
    code, docs, status = (
        _cli(tmp_path, "search-code", "capybara"),
        _cli(tmp_path, "search-docs", "capybara"),
        _cli(tmp_path, "status"),
    )
    for done in (code, docs, status):
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    assert "code:src/ok.py" in code.stdout and "docs:docs/ok.md" in docs.stdout
    assert "name not UTF-8" in status.stdout


# -- a .gitignore of one huge line, or of thousands of lines ---------------------------------------------------


def test_a_gitignore_line_of_a_million_characters_costs_the_search_nothing(tmp_path: Path) -> None:
    # '*a*a…x' of 1 MB: translating it to a regular expression took minutes per search (quadratic); no path
    # can match it, so it is left out unread. The command would exceed the subprocess timeout before.
    write(tmp_path, {".gitignore": "*a" * 500_000 + "x\n*.log\n", "src/a.py": "def rotate_keys():\n    pass\n"})
    write(tmp_path, {"src/a.log.py": "def logged():\n    pass\n", "src/b.log": "not code\n"})
    done = run_module("agentty_rag", tmp_path, ("search-code", "rotate", "keys"), {}, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "code:src/a.py" in done.stdout


def test_a_gitignore_of_thousands_of_lines_applies_every_line(tmp_path: Path) -> None:
    # RE2 refuses one set of a few thousand patterns: every search raised before; now they are several sets.
    lines = [f"generated_{i}/" for i in range(6000)] + ["secret_notes.py", "!keep_*.py", "keep_out.py"]
    write(
        tmp_path,
        {
            ".gitignore": "\n".join(lines) + "\n",
            "src/app.py": "def rotate_keys():\n    pass\n",
            "src/secret_notes.py": "def rotate_secret_keys():\n    pass\n",
            "src/keep_out.py": "def rotate_kept_keys():\n    pass\n",
            "generated_5999/gen.py": "def rotate_generated_keys():\n    pass\n",
            "generated_6000/gen.py": "def rotate_listed_keys():\n    pass\n",
        },
    )
    workspace = _ws(tmp_path)
    workspace.search_code("rotate keys")
    paths = [os.path.relpath(path, tmp_path) for path in workspace.index("code").file_paths()]
    assert sorted(paths) == ["generated_6000/gen.py", "src/app.py"]


# -- the leg check's verdict file ------------------------------------------------------------------------------

FAKE = FAKE_DENSE


def _code_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "code", root, ignore=shutil.ignore_patterns(".agentty"))
    return root


def _verdict(root: Path) -> Path:
    return root / ".agentty" / "rag_code.legcheck.json"


def test_the_verdict_is_never_written_into_a_state_folder_that_links_out(tmp_path: Path) -> None:
    root, outside = _code_corpus(tmp_path), tmp_path / "outside"
    outside.mkdir()
    (root / ".agentty").symlink_to(outside, target_is_directory=True)
    done = _cli(root, "index", "code", **FAKE)
    assert done.returncode == 0, done.stderr
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize("what", ["fifo", "/dev/zero", "deep json"])
def test_a_verdict_path_that_is_a_fifo_a_device_or_deep_json_never_hangs_or_crashes(
    indexed_code: Path, what: str
) -> None:
    root = indexed_code  # indexed with FAKE
    path = _verdict(root)
    path.unlink()
    if what == "fifo":
        os.mkfifo(path)  # opened for reading, it blocks until a writer comes: forever
    elif what == "/dev/zero":
        path.symlink_to("/dev/zero")  # read whole, it never ends
    else:
        path.write_text("[" * 100_000)  # past the JSON parser's depth
    search = run_module("agentty_rag", root, ("search-code", "rotate", "signing", "keys"), FAKE, timeout=90)
    index = run_module("agentty_rag", root, ("index", "code"), FAKE, timeout=90)
    for done in (search, index):
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
    assert "code:" in search.stdout


def test_the_verdict_is_written_through_no_planted_temporary_link(tmp_path: Path, indexed_code: Path) -> None:
    path = _verdict(indexed_code)
    stored = leg_check.load(path, _key())
    assert stored is not None
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    for name in (f"{path.name}.{os.getpid()}.tmp", f"{path.name}.tmp"):  # names a writer might choose
        (path.parent / name).symlink_to(victim)
    leg_check.save(path, stored, _key())
    assert victim.read_text() == "precious\n"
    assert leg_check.load(path, _key()) == stored


# -- forged state files: a graph nested past the parser's depth, feedback rows that are not numbers ---------


def _nan_weights(body: bytes) -> bytes:
    """The graph as built, its fingerprint kept (so it is not merely stale), every weight NaN."""
    graph = json.loads(body)
    graph["links"] = {ref: [[t, k, math.nan] for t, k, _ in found] for ref, found in graph["links"].items()}
    return json.dumps(graph).encode()


@pytest.mark.parametrize("forge", [lambda body: b"[" * 100_000, _nan_weights], ids=["deep", "nan"])
def test_a_forged_graph_file_is_rebuilt_and_the_search_answers(tmp_path: Path, forge: Callable[[bytes], bytes]) -> None:
    write(
        tmp_path,
        {"app/store.py": "def save(value):\n    return value\n", "app/main.py": "from app.store import save\n"},
    )
    graph = {"AGENTTY_RAG_GRAPH": "1"}
    assert _cli(tmp_path, "search-code", "save", "value", **graph).returncode == 0
    path = tmp_path / ".agentty" / "rag_code.graph.json"
    body = forge(path.read_bytes().partition(b"\n")[2])
    sealed = checksum(body, key=machine_key(load_settings(LEXICAL).state_home))  # this machine's: it matches
    path.write_bytes(sealed.encode() + b"\n" + body)
    done = _cli(tmp_path, "search-code", "save", "value", **graph)
    assert done.returncode == 0, done.stderr
    assert "code:app/store.py" in done.stdout and "Traceback" not in done.stderr
    assert path.read_bytes().partition(b"\n")[2] != body  # rebuilt and rewritten


def test_feedback_rows_of_nan_or_infinity_are_left_out_and_learning_goes_on(tmp_path: Path) -> None:
    write(tmp_path, {"src/tokens.py": "def refresh_token(user):\n    return user\n", ".git/HEAD": "ref\n"})
    learn = {"AGENTTY_RAG_LEARN": "1"}
    assert _cli(tmp_path, "search-code", "refresh", "token", **learn).returncode == 0
    rows = [
        "opened_at\tsearched_at\tindex\tref\trank\tquery",
        "nan\t1.0\tcode\tsrc/tokens.py\t1\trefresh token",
        "inf\t1.0\tcode\tsrc/tokens.py\t1\trefresh token",
        "-inf\tnan\tcode\tsrc/tokens.py\t1\trefresh token",
        f"{time.time():.0f}\t{time.time():.3f}\tcode\tsrc/tokens.py\t1\trefresh token",
    ]
    (tmp_path / ".agentty" / "rag_feedback.tsv").write_text("\n".join(rows) + "\n")
    done = _cli(tmp_path, "search-code", "refresh", "token", "--explain", **learn)
    assert done.returncode == 0, done.stderr
    assert "code:src/tokens.py" in done.stdout and "Traceback" not in done.stderr
    assert [row.opened_at for row in feedback.read_rows(tmp_path / ".agentty")] == [float(rows[-1].split("\t")[0])]


# -- a disk that fills up ---------------------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 16 MiB file system (tmpfs) to fill up; skipped where this process cannot mount one."""
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small file system here ({done.stderr.decode().strip()})")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def _fill(disk: Path, leave: int = 0) -> Path:
    """Fill the file system to its last byte, then free ``leave`` bytes."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
        except OSError:
            pass
        try:
            while True:
                handle.write(b"\0" * 512)
        except OSError:
            pass
    os.truncate(filler, max(0, filler.stat().st_size - leave))
    return filler


def _functions(name: str, count: int) -> str:
    return "\n\n".join(
        f'def {name}_{i}(value):\n    """Rotate the {name} keys, step {i}."""\n    return value + {i}\n'
        for i in range(count)
    )


@pytest.mark.parametrize("leave", [0, 16 * 1024], ids=["full before the lock", "full during the patch"])
def test_a_disk_that_fills_up_answers_from_the_committed_index_then_catches_up(small_disk: Path, leave: int) -> None:
    root = small_disk / "repo"
    write(root, {"src/old.py": _functions("walrus", 5), "src/other.py": _functions("heron", 5), ".git/HEAD": "x\n"})
    workspace = _ws(root)  # a server: the index is open when the disk fills
    assert "code:src/old.py" in workspace.search_code("rotate walrus keys").text
    write(root, {"src/old.py": _functions("narwhal", 400)})  # the edit is on disk; its index update is not
    filler = _fill(small_disk, leave)
    outcome = workspace.search_code("rotate walrus keys")
    assert "code:src/old.py" in outcome.text  # the committed index: the file as it was
    assert any("full" in note and "last committed index" in note for note in outcome.structured["notes"])
    assert "code:src/other.py" in workspace.search_code("rotate heron keys").text
    filler.unlink()
    caught_up = workspace.search_code("rotate narwhal keys")
    assert "code:src/old.py" in caught_up.text and "narwhal_" in caught_up.text
    assert not any("full" in note for note in caught_up.structured["notes"])
    assert str(workspace.index("code").status()["storage"]) == "disk"


# -- hard links to files outside the workspace -------------------------------------------------------------


def test_a_lock_or_index_file_that_is_a_hard_link_outside_is_never_written(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    write(ws, {"src/a.py": "def alpha_rollout():\n    return 1\n", "docs/a.md": "# Alpha\n\nAlpha rollout notes.\n"})
    write(outside, {"victim.txt": "precious\n", "journal.txt": "keep me\n"})
    other = sqlite3.connect(outside / "other.db")
    other.execute("CREATE TABLE mine (x)")
    other.commit()
    other.close()
    before = {p.name: p.read_bytes() for p in outside.iterdir()}
    state = ws / ".agentty"
    state.mkdir()
    os.link(outside / "victim.txt", state / "rag_code.lock")  # as an archive unpacks it
    os.link(outside / "other.db", state / "rag_docs.ragdb")
    os.link(outside / "journal.txt", state / "rag_docs.ragdb-wal")
    workspace = _ws(ws)
    code, docs = workspace.search_code("alpha rollout"), workspace.search_docs("alpha rollout")
    assert {p.name: p.read_bytes() for p in outside.iterdir()} == before
    assert "code:src/a.py" in code.text and "docs:docs/a.md" in docs.text  # answered, from memory
    for outcome in (code, docs):
        assert any("kept in memory" in note and "hard link" in note for note in outcome.structured["notes"])
    assert "hard link" in str(workspace.index("code").status()["storage"])


# -- an empty --root, as a hook gets it when $CLAUDE_PROJECT_DIR is not set ---------------------------------------


def test_an_empty_root_makes_no_workspace_of_the_folder_the_hook_runs_in(tmp_path: Path) -> None:
    unmarked = tmp_path / "opt" / "tool"  # no .git, no .agentty: not a project
    write(unmarked, {"docs/a.md": "# Deploy\n\nDeploys need the release captain's approval.\n"})
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AGENTTY_")}
    environment.update({**LEXICAL, "AGENTTY_RAG_PROACTIVE": "1", "HOME": str(tmp_path / "home")})
    event = json.dumps({"prompt": "who approves deploys?", "hook_event_name": "UserPromptSubmit"})
    runs = {
        command: subprocess.run(
            [sys.executable, "-m", "agentty_rag", command, "--root", "", *extra],
            input=stdin,
            cwd=unmarked,
            capture_output=True,
            text=True,
            env=environment,
            timeout=120,
        )
        for command, extra, stdin in (
            ("inject", ["--format", "json"], event),
            (
                "feedback",
                [],
                json.dumps(
                    {
                        "hook_event_name": "PostToolUse",
                        "tool_name": "Read",
                        "tool_input": {"file_path": str(unmarked / "docs/a.md")},
                    }
                ),
            ),
            ("search-docs", ["deploy"], ""),
        )
    }
    assert (runs["inject"].returncode, runs["inject"].stdout) == (0, "")
    assert "--root is empty" in runs["inject"].stderr and "--root is empty" in runs["feedback"].stderr
    assert runs["feedback"].returncode == 0
    assert runs["search-docs"].returncode == 2 and "--root is empty" in runs["search-docs"].stderr
    assert not (unmarked / ".agentty").exists()


# -- init through links and FIFOs ------------------------------------------------------------------------------


def _init(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_main("agentty_rag", root, ("init", *args), {})


@pytest.mark.parametrize("client", ["claude-code", "codex", "cursor", "vscode", "gemini"])
def test_init_never_writes_into_a_client_folder_that_links_out_of_the_workspace(tmp_path: Path, client: str) -> None:
    folder = {
        "claude-code": ".claude",
        "codex": ".codex",
        "cursor": ".cursor",
        "vscode": ".vscode",
        "gemini": ".gemini",
    }
    ws, users = tmp_path / "ws", tmp_path / "home" / folder[client]  # the user's own settings folder
    write(users, {"settings.json": '{"theme": "dark"}\n', "config.toml": 'model = "o3"\n', "mcp.json": "{}\n"})
    before = {p.name: p.read_bytes() for p in users.iterdir()}
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / folder[client]).symlink_to(users, target_is_directory=True)
    done = _init(ws, client, *(["--hook"] if client == "claude-code" else []))
    assert done.returncode == 1 and "outside the workspace" in done.stderr and "nothing written" in done.stderr
    assert {p.name: p.read_bytes() for p in users.iterdir()} == before


def test_init_never_copies_an_outside_file_a_link_names_nor_waits_on_a_fifo(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    write(outside, {"secrets.json": '{"mcpServers": {}, "token": "zanzibarquokka"}\n'})
    ws.mkdir()
    (ws / ".mcp.json").symlink_to(outside / "secrets.json")
    linked = _init(ws, "claude-code")
    assert linked.returncode == 1 and "outside the workspace" in linked.stderr
    assert (ws / ".mcp.json").is_symlink() and "zanzibarquokka" not in linked.stdout
    assert (outside / "secrets.json").read_text() == '{"mcpServers": {}, "token": "zanzibarquokka"}\n'
    (ws / ".mcp.json").unlink()
    os.mkfifo(ws / ".mcp.json")
    fifo = _init(ws, "claude-code")  # would wait for a writer forever
    assert fifo.returncode == 1 and "not a regular file" in fifo.stderr


def test_init_follows_a_link_inside_the_workspace_and_keeps_it(tmp_path: Path) -> None:
    write(tmp_path, {"AGENTS.md": "# Agents\n\nShared rules.\n"})
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")  # one instructions file for every client
    done = _init(tmp_path, "claude-code", "--instructions")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "CLAUDE.md").is_symlink()
    assert "agentty-rag:start" in (tmp_path / "AGENTS.md").read_text()


# -- secrets: every one replaced whole -----------------------------------------------------------------------

# Made up, in each format: none is a real credential.
GITHUB_BODY = "Zq8Rt2Lm9Vx4Kp7Wn3Hc6Jd1Fs5Gb0Ty8UeA"  # 36 characters
SECRETS = {
    "ghp": "ghp_" + GITHUB_BODY,
    "gho": "gho_" + GITHUB_BODY[::-1],
    "pat": "github_pat_11AQZT3KY0xRmPqL2sVnW8_" + "hT4kLm9QwErTyUiOpAsDfGhJkLzXcVbNm1234567890aBcDeFgHiJkLmNoPqRsTuV",
    "aws": "Qw7/Er9+Ty2Ui4Op6As8Df0Gh1Jk3Lz5Xc7Vb9Nm",  # 40 characters, AWS's secret key shape
    "password": "hunter2-Wobble-77",
    "url": "Pg-Adm1n-S3cret",
}
NOT_SECRETS = ('password = "${DB_PASSWORD}"', 'TOKEN_HEADER = "X-Auth-Token"', 'api_key = "your-api-key-here"')


def test_every_secret_is_redacted_whole_and_placeholders_are_kept(tmp_path: Path) -> None:
    config = (
        "# deployment settings\n"
        f'GITHUB = "{SECRETS["ghp"]}"\n'
        f'OAUTH = "{SECRETS["gho"]}"\n'
        f'FINE_GRAINED = "{SECRETS["pat"]}"\n'
        f'AWS_SECRET = "{SECRETS["aws"]}"\n'
        f'password = "{SECRETS["password"]}"\n'
        f'DATABASE_URL = "postgres://admin:{SECRETS["url"]}@db.internal:5432/app"\n'
        + "\n".join(NOT_SECRETS)
        + "\n\ndef deployment_region():\n    return 'eu-west-1'\n"
    )
    write(tmp_path, {"src/settings.py": config, "docs/setup.md": f"# Setup\n\nDeploy with {SECRETS['ghp']}.\n"})
    workspace = _ws(tmp_path)
    code = workspace.search_code("deployment settings region", k=10)
    docs = workspace.search_docs("deploy setup", k=10)
    returned = code.text + docs.text + json.dumps([code.structured, docs.structured])
    stored = "\n".join(chunk.text for name in ("code", "docs") for chunk in workspace.index(name).all_chunks())
    for value in (*SECRETS.values(), GITHUB_BODY, GITHUB_BODY[::-1]):
        assert value not in returned and value not in stored
    for kept in NOT_SECRETS:
        assert kept in stored
    assert "postgres://admin:[redacted Basic Auth Credentials]@db.internal" in stored
    assert 'password = "[redacted Secret Keyword]"' in stored
    assert workspace.index("code").status()["redacted"] == {"secrets": 6, "files": 1, "examples": ["src/settings.py"]}


TUTORIAL_KEY = "09d25e094faa6ca2556c818166b7a9563b93f7099f6f0f4caa6cf63b88e8d3e7"  # fastapi's JWT tutorial


def test_search_docs_shows_a_tutorials_example_values_and_still_redacts_a_real_looking_token(tmp_path: Path) -> None:
    tutorial = (
        "# OAuth2 with JWT tokens\n\n"
        "Create a random secret key that will be used to sign the JWT tokens:\n\n"
        "```Python\n"
        f'SECRET_KEY = "{TUTORIAL_KEY}"\n'
        'ALGORITHM = "HS256"\n\n'
        "fake_users_db = {\n"
        '    "johndoe": {"username": "johndoe", "hashed_password": "fakehashedsecret2"},\n'
        "}\n"
        "```\n\n"
        "You will get your user's data, like:\n\n"
        "```JSON\n"
        '{"username": "johndoe", "hashed_password": "fakehashedsecret"}\n'
        "```\n\n"
        f"The deploy job signs the JWT tokens with {SECRETS['ghp']} from the CI settings.\n"
    )
    write(tmp_path, {"docs/tutorial/security/oauth2-jwt.md": tutorial})
    found = _cli(tmp_path, "search-docs", "sign", "the", "JWT", "tokens", "secret", "key", "--json")
    assert found.returncode == 0, found.stderr
    text = json.dumps(json.loads(found.stdout))
    assert f'SECRET_KEY = \\"{TUTORIAL_KEY}\\"' in text
    assert '\\"hashed_password\\": \\"fakehashedsecret2\\"' in text
    assert '\\"hashed_password\\": \\"fakehashedsecret\\"' in text
    assert SECRETS["ghp"] not in text and GITHUB_BODY not in text and "[redacted GitHub Token]" in text
    shown = _cli(tmp_path, "search-docs", "sign", "the", "JWT", "tokens", "secret", "key").stdout
    assert f'SECRET_KEY = "{TUTORIAL_KEY}"' in shown and SECRETS["ghp"] not in shown
