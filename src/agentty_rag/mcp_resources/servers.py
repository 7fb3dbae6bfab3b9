"""Which MCP servers to read resources from: the ones the workspace's agent is configured with.

The project's ``.mcp.json`` (Claude Code), ``.cursor/mcp.json`` (Cursor) and ``.codex/config.toml`` (Codex),
in that order; or, when ``AGENTTY_RAG_MCP_SERVERS`` names a file, that file alone (``.mcp.json``'s shape).
agentty-rag's own entry is left out, and so is a disabled one; so is every server the user has not approved
(``approval``), listed apart with how to approve it. Each file is read bounded, never through a FIFO or a
device, and a project's files never through a link out of the workspace. A name configured in two files is read once
(the first file wins), and so is one server configured under two names.

Each file's variables are expanded as its client expands them: ``${VAR}`` and ``${VAR:-default}`` in
``.mcp.json``; ``${env:NAME}``, ``${userHome}`` and ``${workspaceFolder}`` in Cursor's file; Codex's
``env_vars``, ``bearer_token_env_var`` and ``env_http_headers`` name variables whose values are passed on. An
entry that cannot be used (a variable that is not set, neither a command nor a URL, the SSE transport) is
left out with the reason. Nothing here starts a server.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentty_rag.config import environment_without_agentty
from agentty_rag.errors import JsoncError
from agentty_rag.fsguard import UnsafeFile, read_regular
from agentty_rag.jsonc import parse
from agentty_rag.mcp_resources.approval import Approvals

# (file relative to the workspace, the client whose syntax it follows)
PROJECT_FILES: tuple[tuple[str, str], ...] = (
    (".mcp.json", "claude"),
    (".cursor/mcp.json", "cursor"),
    (".codex/config.toml", "codex"),
)
OWN_NAME = "agentty-rag"
_FILE_MAX_BYTES = 1 << 20
_CLAUDE_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_CURSOR_VARIABLE = re.compile(r"\$\{(env:[A-Za-z_][A-Za-z0-9_]*|userHome|workspaceFolder|workspaceFolderBasename|/)\}")


@dataclass(frozen=True)
class ServerSpec:
    """One server to read: a command to start (stdio) or a URL (streamable HTTP)."""

    name: str
    origin: str  # the file that configures it, as the user wrote its name (".mcp.json")
    command: str = ""
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # added to this process's environment (less AGENTTY_* variables)
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        """What it runs or where it is, for reports: the command line, or the URL without query or password."""
        if self.url:
            return re.sub(r"//[^/@]*@", "//", self.url.split("?", 1)[0].split("#", 1)[0])
        return " ".join((Path(self.command).name, *self.args))

    def identity(self) -> tuple[object, ...]:
        """Two entries with the same identity are one server."""
        return (self.command, self.args, self.env, self.cwd, self.url, self.headers)


@dataclass(frozen=True)
class Unapproved:
    """A configured server the user has not approved (never started), and how to approve it."""

    name: str
    origin: str
    how: str


@dataclass(frozen=True)
class ServerList:
    """The servers to read (each approved: ``approved`` says by what), the files they came from, the entries
    left out with their reasons, and the servers not approved with how to approve them."""

    servers: tuple[ServerSpec, ...] = ()
    files: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    unapproved: tuple[Unapproved, ...] = ()
    approved: tuple[tuple[str, str], ...] = ()  # (server, why it may be started)


class _Unusable(Exception):
    """An entry that cannot be used; the message says why."""


def configured_servers(
    root: Path,
    servers_file: Path | None = None,
    environ: Mapping[str, str] | None = None,
    home: Path | None = None,
    approvals: Approvals | None = None,
) -> ServerList:
    """The servers the workspace's agent is configured with (see the module doc), the approved ones only.

    Args:
        root: the workspace root.
        servers_file: ``AGENTTY_RAG_MCP_SERVERS``: read this file (``.mcp.json``'s shape) instead; the user
            named it, which approves its servers.
        environ: the variables expanded into entries (default: this process's, less ``AGENTTY_*``).
        home: the user's home folder (Cursor's ``${userHome}``).
        approvals: which of the project files' servers the user approved (None: every one, for a caller that
            starts none); an entry not approved is listed in ``unapproved``, its variables never expanded.
    """
    env = environment_without_agentty() if environ is None else environ
    if servers_file is not None:
        path = servers_file if servers_file.is_absolute() else root / servers_file
        files = [(path, "claude", str(servers_file), "")]
    else:
        real_root = os.path.realpath(root)
        files = [(root / rel, dialect, rel, real_root) for rel, dialect in PROJECT_FILES]
    servers: list[ServerSpec] = []
    read: list[str] = []
    problems: list[str] = []
    unapproved: list[Unapproved] = []
    approved: list[tuple[str, str]] = []
    for path, dialect, shown, boundary in files:
        try:
            data = read_regular(str(path), boundary, _FILE_MAX_BYTES)  # never a FIFO, nor a link out
            if len(data) > _FILE_MAX_BYTES:
                raise UnsafeFile(f"it is larger than {_FILE_MAX_BYTES} bytes")
            text = data.decode("utf-8")
        except FileNotFoundError:
            if servers_file is not None:
                problems.append(f"{shown}: no such file (AGENTTY_RAG_MCP_SERVERS)")
            continue
        except (OSError, UnicodeDecodeError) as error:
            reason = error if isinstance(error, UnsafeFile) else getattr(error, "strerror", None) or error
            problems.append(f"{shown}: cannot be read ({reason}); its servers are left out")
            continue
        read.append(shown)
        expand = _expander(dialect, env, root, home)
        try:
            entries = _codex_entries(text, env) if dialect == "codex" else _json_entries(text)
        except _Unusable as error:
            problems.append(f"{shown}: {error}; its servers are left out")
            continue
        for name, raw in entries.items():
            if _off(name, raw):
                continue
            decision = approvals.decide(name, dialect, shown) if approvals and servers_file is None else None
            if decision is not None and not decision.approved:
                unapproved.append(Unapproved(name, shown, decision.why))
                continue
            try:
                spec = _spec(name, raw, shown, expand, root)
            except _Unusable as error:
                problems.append(f"{shown}: server {name!r} {error}; it is left out")
                continue
            if spec is not None and not _known(spec, servers):
                servers.append(spec)
                approved.append((name, decision.why if decision is not None else "named in the servers file"))
    return ServerList(tuple(servers), tuple(read), tuple(problems), tuple(unapproved), tuple(approved))


def _off(name: str, raw: object) -> bool:
    """An entry that is switched off, or agentty-rag itself: neither started nor listed."""
    if not isinstance(raw, dict):
        return False
    if raw.get("disabled") is True or raw.get("enabled") is False or name == OWN_NAME:
        return True
    command, args = raw.get("command"), raw.get("args")
    return isinstance(command, str) and _is_self(
        ServerSpec(
            name,
            "",
            command=command,
            args=tuple(a for a in args if isinstance(a, str)) if isinstance(args, list) else (),
        )
    )


def _known(spec: ServerSpec, servers: list[ServerSpec]) -> bool:
    return any(other.name == spec.name or other.identity() == spec.identity() for other in servers)


# -- the three files ------------------------------------------------------------------------------------------


def _json_entries(text: str) -> dict[str, Any]:
    try:
        document = parse(text).value
    except JsoncError as error:
        raise _Unusable(f"not valid JSON ({error})") from None
    table = document.get("mcpServers") if isinstance(document, dict) else None
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise _Unusable("mcpServers is not an object")
    return table


def _codex_entries(text: str, env: Mapping[str, str]) -> dict[str, Any]:
    """Codex's ``[mcp_servers.NAME]`` tables, in the shape of a ``.mcp.json`` entry."""
    import tomlkit  # only when a Codex configuration is read: the command line starts without it
    from tomlkit.exceptions import TOMLKitError

    try:
        document = tomlkit.parse(text).unwrap()
    except TOMLKitError as error:
        raise _Unusable(f"not valid TOML ({error})") from None
    table = document.get("mcp_servers")
    if not isinstance(table, dict):
        return {}
    return {name: _from_codex(raw, env) if isinstance(raw, dict) else raw for name, raw in table.items()}


def _from_codex(raw: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    entry: dict[str, Any] = {key: raw[key] for key in ("command", "args", "cwd", "url", "enabled") if key in raw}
    passed = {name: env[name] for name in raw.get("env_vars") or () if isinstance(name, str) and name in env}
    entry["env"] = {**passed, **(raw.get("env") or {})}
    headers = dict(raw.get("http_headers") or {})
    for header, variable in (raw.get("env_http_headers") or {}).items():
        if variable in env:
            headers[header] = env[variable]
    token_variable = raw.get("bearer_token_env_var")
    if isinstance(token_variable, str):
        if token_variable not in env:
            entry["unset"] = token_variable
        headers["Authorization"] = f"Bearer {env.get(token_variable, '')}"
    entry["headers"] = headers
    return entry


# -- one entry ------------------------------------------------------------------------------------------------


def _spec(name: str, raw: object, origin: str, expand: Callable[[str], str], root: Path) -> ServerSpec | None:
    """The server an entry describes (None: disabled, or agentty-rag itself).

    Raises:
        _Unusable: the entry cannot be used; the message says why.
    """
    if not isinstance(raw, dict):
        raise _Unusable("is not an object")
    if raw.get("disabled") is True or raw.get("enabled") is False or name == OWN_NAME:
        return None
    if "unset" in raw:
        raise _Unusable(f"needs the variable {raw['unset']}, which is not set")
    kind = raw.get("type") or raw.get("transport")
    if kind == "sse":
        raise _Unusable("uses the SSE transport, which is not read (stdio and streamable HTTP are)")
    command, url = raw.get("command"), raw.get("url") or raw.get("serverUrl")
    if isinstance(command, str) and command.strip():
        spec = ServerSpec(
            name,
            origin,
            command=expand(command),
            args=tuple(expand(a) for a in _strings(raw.get("args"), "args")),
            env=tuple((k, expand(v)) for k, v in _mapping(raw.get("env"), "env")),
            cwd=str(root / expand(raw["cwd"])) if isinstance(raw.get("cwd"), str) else str(root),
        )
        return None if _is_self(spec) else spec
    if isinstance(url, str) and url.strip():
        address = expand(url)
        if not address.startswith(("http://", "https://")):
            raise _Unusable(f"has a url that is not http(s): {address!r}")
        headers = tuple((k, expand(v)) for k, v in _mapping(raw.get("headers"), "headers"))
        return ServerSpec(name, origin, url=address, headers=headers)
    raise _Unusable("has neither a command nor a url")


def _is_self(spec: ServerSpec) -> bool:
    """agentty-rag's own entry, under another name: its script, or ``python -m agentty_rag``."""
    program = Path(spec.command).name.lower().removesuffix(".exe")
    return program == OWN_NAME or "agentty_rag" in spec.args


def _strings(value: object, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _Unusable(f"has {what} that are not a list of strings")
    return tuple(value)


def _mapping(value: object, what: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise _Unusable(f"has {what} that are not an object of strings")
    return tuple(sorted((str(k), v) for k, v in value.items()))


def _expander(dialect: str, env: Mapping[str, str], root: Path, home: Path | None) -> Callable[[str], str]:
    """Expands one file's variables; a variable that is not set (and has no default) makes the entry unusable."""

    def claude(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise _Unusable(f"needs the variable {name}, which is not set")

    places = {
        "userHome": str(home) if home is not None else "",
        "workspaceFolder": str(root),
        "workspaceFolderBasename": root.name,
        "/": os.sep,
    }

    def cursor(match: re.Match[str]) -> str:
        word = match.group(1)
        if not word.startswith("env:"):
            return places[word]
        if word[4:] not in env:
            raise _Unusable(f"needs the variable {word[4:]}, which is not set")
        return env[word[4:]]

    if dialect == "claude":
        return lambda text: _CLAUDE_VARIABLE.sub(claude, text)
    if dialect == "cursor":
        return lambda text: _CURSOR_VARIABLE.sub(cursor, text)
    return lambda text: text


__all__ = ["OWN_NAME", "PROJECT_FILES", "ServerList", "ServerSpec", "Unapproved", "configured_servers"]
