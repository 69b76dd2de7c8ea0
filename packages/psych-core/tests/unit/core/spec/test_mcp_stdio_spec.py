"""A stdio MCP server in a Spec: data only, checked when the Spec is built or published,
and no change to the hash of a Spec written before stdio servers existed."""

import hashlib
import json
from typing import Any

import pytest
from pydantic import ValidationError

from psych_runtime import Scope
from psych_runtime import SpecValidationError
from psych_runtime import publish
from psych_runtime.adapters import InMemoryStore
from psych_runtime.core.version import canonical_json
from psych_runtime.core.version import spec_hash
from psych_runtime.spec import AgentSpec
from psych_runtime.spec import McpEnv
from psych_runtime.spec import McpServer


def test_an_http_server_hashes_exactly_as_before() -> None:
    spec = AgentSpec(
        name="golden",
        model="m",
        mcp_servers=(McpServer(name="crm", url="https://crm.example.com/mcp"),),
    )
    server = json.loads(canonical_json(spec))["mcp_servers"][0]
    # The stored form of an HTTP server is the one it always had: no stdio fields.
    assert server == {
        "allow": [],
        "credential": None,
        "name": "crm",
        "oauth": None,
        "optional": False,
        "preload": None,
        "transport": "http",
        "url": "https://crm.example.com/mcp",
    }
    expected = (
        '{"allow":[],"credential":null,"name":"crm","oauth":null,"optional":false,'
        '"preload":null,"transport":"http","url":"https://crm.example.com/mcp"}'
    )
    assert json.dumps(server, sort_keys=True, separators=(",", ":")) == expected
    assert spec_hash(spec).startswith("sha256:")


def test_a_command_makes_a_stdio_server_and_its_env_is_data() -> None:
    server = McpServer(
        name="time",
        command="uvx",
        args=("mcp-server-time", "--local-timezone", "UTC"),
        env=(McpEnv(name="TZ_TOKEN", secret="tz"), McpEnv(name="A_MODE", value="x")),
    )
    assert server.transport == "stdio" and server.url is None
    assert [variable.name for variable in server.env] == ["A_MODE", "TZ_TOKEN"]  # sorted
    dumped = server.model_dump(mode="json")
    assert "url" not in dumped
    assert dumped["env"] == [{"name": "A_MODE", "value": "x"}, {"name": "TZ_TOKEN", "secret": "tz"}]
    again = McpServer.model_validate(dumped)
    assert again == server
    reordered = server.model_copy(update={"env": tuple(reversed(server.env))})
    spec_a = AgentSpec(name="a", model="m", mcp_servers=(server,))
    spec_b = AgentSpec(
        name="a", model="m", mcp_servers=(McpServer.model_validate(reordered.model_dump()),)
    )
    assert spec_hash(spec_a) == spec_hash(spec_b)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (
            {"command": "npx -y @modelcontextprotocol/server-everything"},
            "put its arguments in args",
        ),
        ({"command": "server; rm -rf /"}, "not a shell line"),
        ({"command": "$HOME/bin/server"}, "not a shell line"),
        ({"command": "./server"}, "relative path"),
        ({"command": "bin/server"}, "relative path"),
        ({"command": "serv\x00er"}, "control characters"),
        ({"command": "server\n"}, "control characters"),
        ({"command": ""}, "at least 1 character"),
        ({"command": "server", "args": ("a\x00b",)}, "NUL"),
        ({"command": "server", "url": "https://x.example.com/mcp"}, "not a url"),
        ({"transport": "stdio"}, "needs a command"),
        ({"command": "server", "credential": "token"}, "env"),
        ({"command": "server", "oauth": {"grant": "client_credentials"}}, "env"),
        ({"command": "server", "transport": "http"}, "needs a url"),
        ({"url": "https://x.example.com/mcp", "args": ("x",)}, "for transport='stdio'"),
        (
            {"url": "https://x.example.com/mcp", "command": "server", "transport": "http"},
            "for transport='stdio'",
        ),
        ({}, "needs a url"),
        ({"command": "server", "transport": "STDIO"}, "transport"),
        (
            {
                "command": "server",
                "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}],
            },
            "listed twice",
        ),
        (
            {"command": "server", "env": [{"name": "A", "value": "1", "secret": "s"}]},
            "a value or a secret",
        ),
        ({"command": "server", "env": [{"name": "A"}]}, "a value or a secret"),
        ({"command": "server", "env": [{"name": "1A", "value": "x"}]}, "pattern"),
        ({"command": "server", "env": [{"name": "A=B", "value": "x"}]}, "pattern"),
        ({"command": "server", "env": [{"name": "A", "value": "x\x00"}]}, "NUL"),
        ({"command": ["node", "x.js"]}, "string"),
        ({"command": print}, "callable"),
    ],
)
def test_what_cannot_start_one_program_is_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises((ValidationError, ValueError), match=message):
        McpServer.model_validate({"name": "s", **settings})


async def test_a_bad_command_is_refused_at_publish() -> None:
    raw = {
        "kind": "agent",
        "name": "ops",
        "model": "m",
        "mcp_servers": [{"name": "s", "command": "npx -y some-server"}],
    }
    with pytest.raises(SpecValidationError, match="put its arguments in args"):
        await publish(InMemoryStore(), raw, scope=Scope(tenant="acme"))


def test_the_canonical_form_of_a_stdio_server_is_pinned() -> None:
    spec = AgentSpec(
        name="golden",
        model="m",
        mcp_servers=(McpServer(name="t", command="/usr/bin/t", args=("x",)),),
    )
    server = json.loads(canonical_json(spec))["mcp_servers"][0]
    assert server == {
        "allow": [],
        "args": ["x"],
        "command": "/usr/bin/t",
        "credential": None,
        "name": "t",
        "oauth": None,
        "optional": False,
        "preload": None,
        "transport": "stdio",
    }
    assert spec_hash(spec) == "sha256:" + hashlib.sha256(canonical_json(spec)).hexdigest()
