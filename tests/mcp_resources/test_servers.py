"""Which MCP servers are read: the project's agent configuration files, as each client reads them."""

from __future__ import annotations

import json
from pathlib import Path

from agentty_rag.mcp_resources.servers import ServerSpec, configured_servers
from tests.conftest import write

ENV = {"WIKI_TOKEN": "s3cret", "HOME": "/home/dev", "PATH": "/usr/bin"}


def _claude(servers: dict[str, object]) -> str:
    return json.dumps({"mcpServers": servers})


def test_the_three_project_files_are_read_in_order_without_agentty_rag_itself(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".mcp.json": _claude(
                {
                    "agentty-rag": {"command": "agentty-rag", "args": ["serve"]},
                    "wiki": {"command": "wiki-mcp", "args": ["--space", "TEAM"], "env": {"LEVEL": "info"}},
                    "tracker": {"type": "http", "url": "https://tracker.example/mcp", "headers": {"X-Team": "a"}},
                }
            ),
            ".cursor/mcp.json": '{\n  // Cursor allows comments\n  "mcpServers": {\n'
            '    "wiki": {"command": "other-wiki"},\n'
            '    "ourselves": {"command": "python", "args": ["-m", "agentty_rag", "serve"]},\n'
            '    "schema": {"command": "schema-mcp", "args": ["${workspaceFolder}/db"]},\n  },\n}\n',
            ".codex/config.toml": '[mcp_servers.notes]\ncommand = "notes-mcp"\n\n'
            '[mcp_servers.off]\ncommand = "off-mcp"\nenabled = false\n\n'
            '[mcp_servers.tracker-again]\nurl = "https://tracker.example/mcp"\nhttp_headers = { "X-Team" = "a" }\n',
        },
    )
    found = configured_servers(tmp_path, environ=ENV)
    assert [(s.name, s.origin, s.transport) for s in found.servers] == [
        ("wiki", ".mcp.json", "stdio"),
        ("tracker", ".mcp.json", "http"),
        ("schema", ".cursor/mcp.json", "stdio"),
        ("notes", ".codex/config.toml", "stdio"),
    ]
    assert found.files == (".mcp.json", ".cursor/mcp.json", ".codex/config.toml")
    assert found.problems == ()
    wiki, tracker, schema, _ = found.servers
    assert (wiki.command, wiki.args, wiki.env, wiki.cwd) == (
        "wiki-mcp",
        ("--space", "TEAM"),
        (("LEVEL", "info"),),
        str(tmp_path),
    )
    assert (tracker.url, tracker.headers) == ("https://tracker.example/mcp", (("X-Team", "a"),))
    assert schema.args == (f"{tmp_path}/db",)


def test_each_file_expands_its_own_variables(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".mcp.json": _claude(
                {
                    "wiki": {
                        "command": "wiki-mcp",
                        "args": ["--token", "${WIKI_TOKEN}", "--level", "${LEVEL:-warn}"],
                        "env": {"HOME_AT": "${HOME}"},
                    },
                    "tracker": {
                        "type": "http",
                        "url": "https://t.example/mcp",
                        "headers": {"Authorization": "Bearer ${WIKI_TOKEN}"},
                    },
                }
            ),
            ".cursor/mcp.json": _claude(
                {"cursor-one": {"command": "c-mcp", "env": {"T": "${env:WIKI_TOKEN}", "H": "${userHome}"}}}
            ),
            ".codex/config.toml": '[mcp_servers.codex-one]\nurl = "https://c.example/mcp"\nbearer_token_env_var = "WIKI_TOKEN"\n'
            'env_http_headers = { "X-Home" = "HOME" }\n\n'
            '[mcp_servers.codex-two]\ncommand = "two"\nenv_vars = ["PATH", "NOT_SET"]\nenv = { A = "1" }\n',
        },
    )
    wiki, tracker, cursor, codex_one, codex_two = configured_servers(
        tmp_path, environ=ENV, home=Path("/home/dev")
    ).servers
    assert wiki.args == ("--token", "s3cret", "--level", "warn")
    assert wiki.env == (("HOME_AT", "/home/dev"),)
    assert tracker.headers == (("Authorization", "Bearer s3cret"),)
    assert cursor.env == (("H", "/home/dev"), ("T", "s3cret"))
    assert codex_one.headers == (("Authorization", "Bearer s3cret"), ("X-Home", "/home/dev"))
    assert codex_two.env == (("A", "1"), ("PATH", "/usr/bin"))


def test_an_entry_that_cannot_be_used_is_left_out_with_the_reason(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".mcp.json": _claude(
                {
                    "needs-var": {"command": "x", "args": ["${MISSING_TOKEN}"]},
                    "old-sse": {"type": "sse", "url": "https://old.example/sse"},
                    "nothing": {"args": ["a"]},
                    "ftp": {"url": "ftp://files.example/mcp"},
                    "bad-args": {"command": "x", "args": "--one"},
                    "fine": {"command": "fine-mcp"},
                }
            ),
            ".cursor/mcp.json": '{"mcpServers": {"a": {"command": "x"},,}}',
            ".codex/config.toml": '[mcp_servers.token]\nurl = "https://c.example/mcp"\nbearer_token_env_var = "NOPE"\n',
        },
    )
    found = configured_servers(tmp_path, environ=ENV)
    assert [s.name for s in found.servers] == ["fine"]
    assert found.problems == (
        ".mcp.json: server 'needs-var' needs the variable MISSING_TOKEN, which is not set; it is left out",
        ".mcp.json: server 'old-sse' uses the SSE transport, which is not read (stdio and streamable HTTP are); it is left out",
        ".mcp.json: server 'nothing' has neither a command nor a url; it is left out",
        ".mcp.json: server 'ftp' has a url that is not http(s): 'ftp://files.example/mcp'; it is left out",
        ".mcp.json: server 'bad-args' has args that are not a list of strings; it is left out",
        ".cursor/mcp.json: not valid JSON (expected a quoted key at line 1, column 39); its servers are left out",
        ".codex/config.toml: server 'token' needs the variable NOPE, which is not set; it is left out",
    )


def test_the_servers_file_replaces_the_project_files(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            ".mcp.json": _claude({"project": {"command": "project-mcp"}}),
            "team/servers.json": _claude({"team": {"command": "team-mcp", "args": ["${LEVEL:-info}"]}}),
        },
    )
    found = configured_servers(tmp_path, Path("team/servers.json"), environ=ENV)
    assert [(s.name, s.origin, s.args) for s in found.servers] == [("team", "team/servers.json", ("info",))]
    missing = configured_servers(tmp_path, Path("nowhere.json"), environ=ENV)
    assert missing.servers == ()
    assert missing.problems == ("nowhere.json: no such file (AGENTTY_RAG_MCP_SERVERS)",)


def test_no_configuration_means_no_servers(tmp_path: Path) -> None:
    assert configured_servers(tmp_path, environ=ENV).servers == ()
    assert configured_servers(tmp_path, environ=ENV).files == ()


def test_reports_show_a_server_without_its_secrets() -> None:
    http = ServerSpec("t", ".mcp.json", url="https://user:pw@tracker.example/mcp?token=abc#x")
    stdio = ServerSpec("w", ".mcp.json", command="/opt/bin/wiki-mcp", args=("--space", "TEAM"))
    assert http.target == "https://tracker.example/mcp"
    assert stdio.target == "wiki-mcp --space TEAM"
