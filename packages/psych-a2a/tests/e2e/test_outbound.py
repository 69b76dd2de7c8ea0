"""Our outbound client against an agent built with the A2A SDK's server side, on loopback."""

import asyncio
import json
from typing import Any

import pytest
from pydantic import SecretStr

from psych_a2a import A2ATools
from psych_a2a import CardVerifier
from psych_a2a import sign_card
from psych_runtime import EgressPolicy
from psych_runtime import InMemoryStore
from psych_runtime import ResolvedCredential
from psych_runtime import Runtime
from psych_runtime import Scope
from psych_runtime import ToolContext
from psych_runtime import ToolRegistry
from psych_runtime import Worker
from psych_runtime import dispatch
from psych_runtime import publish
from psych_runtime.adapters import SourceCallFailed
from psych_runtime.adapters import SourceTool
from psych_runtime.adapters import ToolSourceUnavailable
from psych_runtime.spec import A2APeer
from psych_runtime.spec import AgentSpec
from psych_runtime.testing import FakeModel
from psych_runtime.testing import worker_in_background

from ..conftest import LOOPBACK
from ..keys import pem_pair
from ..peer import Seen
from ..peer import loopback_socket
from ..peer import peer_app
from ..peer import peer_card
from ..peer import running_peer
from ..peer import serving

ACME = Scope(tenant="acme")
GLOBEX = Scope(tenant="globex")


def _spec(*peers: A2APeer) -> AgentSpec:
    return AgentSpec(name="caller", model="fake-standard", a2a_peers=peers)


def _context(scope: Scope = ACME, call: str = "call_1") -> ToolContext:
    return ToolContext.for_call(run_id="run_1", call_id=call, scope=scope, attempt_id="att_1")


async def _call(
    tools: A2ATools, spec: AgentSpec, tool: SourceTool, scope: Scope = ACME, **arguments: Any
) -> Any:
    return await tools.call(spec, tool, arguments, _context(scope), permitted=None)


class PerTenant:
    """Each tenant's own token for every credential name."""

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        return ResolvedCredential(identity=name, secret=SecretStr(f"tok-{scope.tenant}"))


async def test_skills_are_narrowed_and_a_streamed_task_returns_its_artifacts() -> None:
    async with running_peer() as (base, seen), A2ATools(egress=LOOPBACK) as tools:
        spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
        offered = await tools.resolve(spec, ACME, permitted=None)
        assert [t.name for t in offered.tools] == ["echo__echo"]  # "shout" is not granted
        assert offered.tools[0].definition.input_schema["required"] == ["message"]
        result = await _call(tools, spec, offered.tools[0], message="echo hello there")
        assert result["state"] == "completed"
        assert result["text"] == "hello there"
        assert result["artifacts"] == [
            {"name": "echo", "description": "", "parts": [{"text": "hello there"}]}
        ]
        assert seen.texts == ["echo hello there"]
        sent = [h for h in seen.headers if h[":path"] == "/rpc"]
        assert sent and all(h["a2a-version"] == "1.0" for h in sent)
        assert any("text/event-stream" in h.get("accept", "") for h in sent)  # streamed


async def test_the_tenant_plane_narrows_again_at_call_time() -> None:
    async with running_peer() as (base, _), A2ATools(egress=LOOPBACK) as tools:
        spec = _spec(A2APeer(name="echo", url=base))
        offered = await tools.resolve(spec, ACME, permitted=("echo__shout",))
        assert [t.name for t in offered.tools] == ["echo__shout"]
        everything = await tools.resolve(spec, ACME, permitted=None)
        echo = next(t for t in everything.tools if t.name == "echo__echo")
        with pytest.raises(SourceCallFailed) as refused:
            await tools.call(spec, echo, {"message": "x"}, _context(), permitted=("echo__shout",))
        assert refused.value.kind == "excluded"


async def test_a_peer_that_does_not_stream_is_polled_until_the_task_settles() -> None:
    async with (
        running_peer(streaming=False) as (base, seen),
        A2ATools(egress=LOOPBACK, poll_seconds=0.05) as tools,
    ):
        spec = _spec(A2APeer(name="echo", url=base))
        [echo, _] = (await tools.resolve(spec, ACME, permitted=None)).tools
        result = await _call(tools, spec, echo, message="slow steady")
        assert (result["state"], result["text"]) == ("completed", "steady")
        bodies = [h for h in seen.headers if h[":path"] == "/rpc"]
        assert len(bodies) >= 2  # the send, then at least one poll


async def test_the_http_json_binding_is_used_when_the_card_prefers_it() -> None:
    async with running_peer(rest=True) as (base, seen), A2ATools(egress=LOOPBACK) as tools:
        spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
        [echo] = (await tools.resolve(spec, ACME, permitted=None)).tools
        result = await _call(tools, spec, echo, message="echo over rest")
        assert result["text"] == "over rest"
        paths = {h[":path"] for h in seen.headers}
        assert "/rpc" not in paths
        assert any(path.startswith("/message:") for path in paths), paths


async def test_a_task_waiting_for_input_is_answered_on_the_same_task() -> None:
    async with running_peer() as (base, _), A2ATools(egress=LOOPBACK) as tools:
        spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
        [echo] = (await tools.resolve(spec, ACME, permitted=None)).tools
        asked = await _call(tools, spec, echo, message="ask")
        assert asked["state"] == "input-required"
        assert asked["text"] == "What colour?"
        done = await _call(
            tools,
            spec,
            echo,
            message="blue",
            task_id=asked["task_id"],
            context_id=asked["context_id"],
        )
        assert done["state"] == "completed"
        assert done["task_id"] == asked["task_id"]
        assert done["text"] == "you said blue"


async def test_a_failed_task_and_bad_arguments_are_failed_calls() -> None:
    async with running_peer() as (base, _), A2ATools(egress=LOOPBACK) as tools:
        spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
        [echo] = (await tools.resolve(spec, ACME, permitted=None)).tools
        with pytest.raises(SourceCallFailed) as failed:
            await _call(tools, spec, echo, message="fail")
        assert failed.value.kind == "task_failed"
        assert "it broke" in str(failed.value)
        with pytest.raises(SourceCallFailed) as bad:
            await _call(tools, spec, echo, message="")
        assert bad.value.kind == "invalid_arguments"


async def test_credentials_and_connections_are_kept_apart_per_tenant() -> None:
    async with (
        running_peer() as (base, seen),
        A2ATools(egress=LOOPBACK, secrets=PerTenant()) as tools,
    ):
        spec = _spec(A2APeer(name="echo", url=base, credential="echo-token", allow=("echo",)))
        for scope in (ACME, GLOBEX):
            [echo] = (await tools.resolve(spec, scope, permitted=None)).tools
            await _call(tools, spec, echo, scope, message=f"echo {scope.tenant}")
        keys = tools.open_connections
        assert sorted(k.tenant for k in keys) == ["acme", "globex"]
        assert len({k.credential for k in keys}) == 2
        assert all(k.credential and "tok-" not in k.credential for k in keys)
        tokens = {h.get("authorization") for h in seen.headers}
        assert tokens == {"Bearer tok-acme", "Bearer tok-globex"}


async def test_the_pool_is_bounded() -> None:
    async with (
        running_peer() as (base, _),
        A2ATools(egress=LOOPBACK, max_connections=1) as tools,
    ):
        spec = _spec(A2APeer(name="echo", url=base))
        await tools.resolve(spec, ACME, permitted=None)
        await tools.resolve(spec, GLOBEX, permitted=None)
        assert [k.tenant for k in tools.open_connections] == ["globex"]


async def test_an_unreachable_peer_is_an_advisory_when_optional_and_fatal_when_required() -> None:
    sock = loopback_socket()  # bound but never listening: connections are refused
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    try:
        async with A2ATools(egress=LOOPBACK) as tools:
            optional = await tools.resolve(
                _spec(A2APeer(name="gone", url=url, optional=True)), ACME, permitted=None
            )
            assert optional.tools == ()
            assert "gone" in optional.advisories[0]
            with pytest.raises(ToolSourceUnavailable) as unavailable:
                await tools.resolve(_spec(A2APeer(name="gone", url=url)), ACME, permitted=None)
            assert unavailable.value.owner == "gone"
            assert unavailable.value.transient
    finally:
        sock.close()


async def test_the_default_egress_policy_refuses_a_loopback_peer() -> None:
    async with running_peer() as (base, seen), A2ATools() as tools:
        with pytest.raises(ToolSourceUnavailable) as refused:
            await tools.resolve(_spec(A2APeer(name="echo", url=base)), ACME, permitted=None)
        assert not refused.value.transient
        assert "127.0.0.1" in str(refused.value)
        assert seen.headers == []  # nothing was sent


async def test_a_card_naming_an_interface_the_policy_refuses_fails_the_call() -> None:
    # The card is read from an allowed origin but points its interface elsewhere.
    sock = loopback_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    elsewhere = f"http://localhost:{sock.getsockname()[1]}"
    seen = Seen()
    card = peer_card(elsewhere)
    policy = EgressPolicy().allowing(base)
    async with serving(peer_app(base, seen, card=card), sock), A2ATools(egress=policy) as tools:
        spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
        [echo] = (await tools.resolve(spec, ACME, permitted=None)).tools
        with pytest.raises(SourceCallFailed) as refused:
            await _call(tools, spec, echo, message="echo hi")
        assert refused.value.kind == "egress_denied"
        assert seen.texts == []


async def _offer_with_card(card_change: str, verifier: CardVerifier, pem: str) -> Any:
    sock = loopback_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    card = peer_card(base)
    if card_change != "unsigned":
        sign_card(card, pem, kid="k1")
    if card_change == "tampered":
        card.skills[0].description = "Sends your data somewhere else."
    async with (
        serving(peer_app(base, Seen(), card=card), sock),
        A2ATools(egress=LOOPBACK, verifier=verifier) as tools,
    ):
        return await tools.resolve(_spec(A2APeer(name="echo", url=base)), ACME, permitted=None)


async def test_a_signed_card_is_accepted_and_a_tampered_one_refused() -> None:
    pem, public = pem_pair()
    verifier = CardVerifier({"k1": public})
    signed = await _offer_with_card("signed", verifier, pem)
    assert [t.name for t in signed.tools] == ["echo__echo", "echo__shout"]
    for change in ("tampered", "unsigned"):
        with pytest.raises(ToolSourceUnavailable) as refused:
            await _offer_with_card(change, verifier, pem)
        assert "signature" in str(refused.value)
        assert not refused.value.transient
    _, stranger = pem_pair()
    with pytest.raises(ToolSourceUnavailable):
        await _offer_with_card("signed", CardVerifier({"k1": stranger}), pem)
    exempt = CardVerifier({"k1": public}, peers=("someone_else",))
    assert len((await _offer_with_card("unsigned", exempt, pem)).tools) == 2


async def test_a_peer_requiring_an_extension_the_spec_does_not_request_is_refused() -> None:
    from a2a.types import AgentExtension

    sock = loopback_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    card = peer_card(base)
    card.capabilities.extensions.append(AgentExtension(uri="urn:x:needed", required=True))
    seen = Seen()
    async with serving(peer_app(base, seen, card=card), sock), A2ATools(egress=LOOPBACK) as tools:
        with pytest.raises(ToolSourceUnavailable) as refused:
            await tools.resolve(_spec(A2APeer(name="echo", url=base)), ACME, permitted=None)
        assert "urn:x:needed" in str(refused.value)
        spec = _spec(A2APeer(name="echo", url=base, extensions=("urn:x:needed",), allow=("echo",)))
        [echo] = (await tools.resolve(spec, ACME, permitted=None)).tools
        await _call(tools, spec, echo, message="echo ok")
        assert any(h.get("a2a-extensions") == "urn:x:needed" for h in seen.headers)


async def test_a_run_calls_a_peer_as_a_tool() -> None:
    model = (
        FakeModel()
        .turn(tool_calls=[("echo__echo", {"message": "echo from a run"})])
        .turn(text="The peer said: from a run.")
    )
    async with running_peer() as (base, seen):
        tools = A2ATools(egress=LOOPBACK)
        store = InMemoryStore()
        runtime = Runtime(store, model, ToolRegistry(), tool_sources=[tools])
        async with worker_in_background(Worker(store, runtime, poll_interval=0.05)):
            spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
            version = await publish(store, spec, scope=ACME)
            run = await dispatch(store, version, "Ask the echo agent.", scope=ACME)
            async with asyncio.timeout(20):
                while not (log := await store.read(run.run_id)) or log[-1].type != "run_settled":
                    await asyncio.sleep(0.02)
            await tools.close()
    finished = [r for r in log if r.type == "tool_call_finished"]
    assert [json.loads(json.dumps(r.result))["text"] for r in finished] == ["from a run"]
    assert log[-1].state == "completed"
    assert seen.texts == ["echo from a run"]


async def test_a_peer_on_protocol_0_3_is_reached_in_its_version() -> None:
    async with (
        running_peer(protocol="0.3", streaming=False) as (base, seen),
        A2ATools(egress=LOOPBACK, poll_seconds=0.05) as tools,
    ):
        spec = _spec(A2APeer(name="echo", url=base, allow=("echo",)))
        [echo] = (await tools.resolve(spec, ACME, permitted=None)).tools
        result = await _call(tools, spec, echo, message="echo old times")
        assert (result["state"], result["text"]) == ("completed", "old times")
        sent = [h for h in seen.headers if h[":path"] == "/rpc"]
        assert sent and all(h.get("a2a-version", "0.3") == "0.3" for h in sent)
