"""Only the transport module may open outbound connections.

An egress policy enforced on some routes out of the process and not others is worse
than none, because people trust it. This walks the source of every package in the
repository (``packages/*/src`` and ``contract/src``) and fails when a module other than
the egress seam builds an HTTP client (of ``httpx`` or of the ``httpx2`` fork the MCP
SDK uses), imports an HTTP library that would let it build one, or opens a socket.

The check reads the syntax tree, following import aliases (``import httpx as h``,
``from socket import create_connection as cc``), so docstrings that merely mention a
forbidden name do not trip it and a renamed import does not slip past it. Database
drivers open their own sockets inside third-party code, which is not scanned.

If this fails: route the request through ``HttpTransport`` (take one as a constructor
argument) instead of opening a connection yourself.
"""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[5]
ALLOWED = {
    Path("packages/psych-core/src/psych_runtime/egress/transport.py"),
    # SDKs that send through an httpx client they are handed (the A2A SDK) get it from
    # here, built around the core's GatedTransport, which asks the egress policy about
    # every request (tests/unit/egress/test_gated.py).
    Path("packages/psych-core/src/psych_runtime/egress/sdk_client.py"),
    # The same GatedTransport bound to httpx2, the HTTP client of the MCP SDK.
    Path("packages/psych-mcp/src/psych_mcp/_egress.py"),
}
TEMPLATES = "packages/psych-core/src/psych_runtime/templates"
"""Projects ``psych new`` writes out: a user's code, which this library does not run."""

FORBIDDEN_CALLS = {
    "httpx.AsyncClient",
    "httpx.Client",
    "httpx.AsyncHTTPTransport",
    "httpx.HTTPTransport",
    "httpx.request",
    "httpx.stream",
    "httpx.get",
    "httpx.post",
    "httpx.put",
    "httpx.patch",
    "httpx.delete",
    "httpx.head",
    "httpx.options",
    "httpx2.AsyncClient",
    "httpx2.Client",
    "httpx2.AsyncHTTPTransport",
    "httpx2.HTTPTransport",
    "httpx2.request",
    "httpx2.stream",
    "httpx2.get",
    "httpx2.post",
    "socket.socket",
    "socket.create_connection",
    "socket.socketpair",
    "socket.fromfd",
    "asyncio.open_connection",
    "asyncio.open_unix_connection",
    "ssl.wrap_socket",
}
FORBIDDEN_MODULES = {
    "aiohttp",
    "requests",
    "urllib3",
    "httpcore",
    "pycurl",
    "websockets",
    "urllib.request",
    "http.client",
}
# Event-loop methods reached through a loop object whose type the parser cannot see.
FORBIDDEN_METHODS = {
    "create_connection",
    "create_unix_connection",
    "create_datagram_endpoint",
    "open_connection",
    "sock_connect",
}


def sources() -> list[Path]:
    roots = [*REPO.glob("packages/*/src"), REPO / "contract" / "src"]
    found = (path for root in roots if root.is_dir() for path in root.rglob("*.py"))
    return sorted(path for path in found if not path.is_relative_to(REPO / TEMPLATES))


def _forbidden_module(name: str) -> bool:
    return any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN_MODULES)


def _dotted(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def violations(source: str, filename: str = "<memory>") -> list[str]:
    tree = ast.parse(source, filename=filename)
    aliases: dict[str, str] = {}
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _forbidden_module(alias.name):
                    found.append(f"line {node.lineno}: imports {alias.name}")
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                qualified = f"{node.module}.{alias.name}"
                if _forbidden_module(node.module) or _forbidden_module(qualified):
                    found.append(f"line {node.lineno}: imports {qualified}")
                aliases[alias.asname or alias.name] = qualified
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func)
        if dotted is not None:
            head, _, rest = dotted.partition(".")
            resolved = aliases.get(head, head) + (f".{rest}" if rest else "")
            if resolved in FORBIDDEN_CALLS:
                found.append(f"line {node.lineno}: calls {resolved}()")
                continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in FORBIDDEN_METHODS:
            found.append(f"line {node.lineno}: calls .{node.func.attr}()")
    return found


def test_the_scan_sees_every_package() -> None:
    scanned = {path.relative_to(REPO).parts[:2] for path in sources()}
    assert ("packages", "psych-core") in scanned
    assert ("contract", "src") in scanned
    assert REPO / "packages/psych-core/src/psych_runtime/egress/transport.py" in sources()


@pytest.mark.parametrize("allowed", sorted(ALLOWED), ids=str)
def test_the_allowed_modules_are_where_clients_are_made(allowed: Path) -> None:
    # The allow-list is not decorative: each entry really is where a client is made.
    module = REPO / allowed
    if not module.exists():
        pytest.skip(f"{allowed} is not in this checkout")
    assert violations(module.read_text()) != []


@pytest.mark.parametrize("path", sources(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_other_module_opens_connections(path: Path) -> None:
    if path.relative_to(REPO) in ALLOWED:
        return
    assert violations(path.read_text(), str(path)) == []


PLANTED = [
    ("import httpx\nc = httpx.AsyncClient()\n", "httpx.AsyncClient"),
    ("import httpx as h\nc = h.Client(timeout=1)\n", "httpx.Client"),
    ("from httpx import AsyncClient as Sneaky\nc = Sneaky()\n", "httpx.AsyncClient"),
    ("import httpx\nhttpx.get('https://example.com')\n", "httpx.get"),
    ("import httpx2\nc = httpx2.AsyncClient()\n", "httpx2.AsyncClient"),
    ("import aiohttp\n", "aiohttp"),
    ("from aiohttp import ClientSession\n", "aiohttp"),
    ("import urllib.request\n", "urllib.request"),
    ("from urllib.request import urlopen\n", "urllib.request"),
    ("from urllib import request\n", "urllib.request"),
    ("import http.client\n", "http.client"),
    ("import socket\ns = socket.socket()\n", "socket.socket"),
    ("from socket import create_connection as cc\ncc(('h', 1))\n", "socket.create_connection"),
    ("import asyncio\nasyncio.open_connection('h', 1)\n", "asyncio.open_connection"),
    ("async def f(loop):\n    await loop.create_connection(object, 'h', 1)\n", "create_connection"),
]


@pytest.mark.parametrize(("source", "expected"), PLANTED)
def test_the_scan_catches_a_planted_offender(source: str, expected: str) -> None:
    problems = violations(source)
    assert any(expected in p for p in problems), problems


def test_the_scan_catches_an_offender_file_in_a_package_tree(tmp_path: Path) -> None:
    offender = tmp_path / "sneaky.py"
    offender.write_text('"""Calls home."""\nimport httpx\n\nCLIENT = httpx.AsyncClient()\n')
    assert violations(offender.read_text(), str(offender)) == ["line 4: calls httpx.AsyncClient()"]


def test_harmless_neighbours_are_not_flagged() -> None:
    source = (
        '"""Mentions httpx.AsyncClient( and socket.socket( in prose only."""\n'
        "import socket\nimport httpx\nfrom urllib.parse import urlsplit\n"
        "kind = socket.SOCK_STREAM\nurl = httpx.URL('https://example.com')\n"
        "timeout = httpx.Timeout(3.0)\nparts = urlsplit('https://example.com')\n"
    )
    assert violations(source) == []
