"""An executable reference model of the BlobStore port, and random call sequences against it.

``ReferenceBlobStore`` is a dictionary from key to (bytes, content type): a put
replaces, a window past the end reads short or empty, a negative window is refused, a
missing key is ``BlobNotFound`` for ``get``, None for ``stat`` and False for
``delete``. ``check_blob_store_against_reference`` drives random sequences of the
four calls over keys chosen to collide when a store maps them carelessly (case,
slashes, percent signs, parts that join alike), comparing each answer.
"""

import asyncio
import itertools
from collections.abc import Awaitable
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from typing import ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine
from hypothesis.stateful import rule
from hypothesis.stateful import run_state_machine_as_test

from psych_contract import _data as data
from psych_contract.stateful import hypothesis_settings
from psych_runtime import PsychError
from psych_runtime import RunId
from psych_runtime.adapters.blob import BlobInfo
from psych_runtime.adapters.blob import BlobKey
from psych_runtime.adapters.blob import BlobNotFound
from psych_runtime.adapters.blob import BlobStore
from psych_runtime.records import ToolCallId


@dataclass
class ReferenceBlobStore:
    """The BlobStore port's behaviour, one synchronous call at a time."""

    blobs: dict[BlobKey, tuple[bytes, str]] = field(default_factory=dict)

    def put(self, key: BlobKey, payload: bytes, content_type: str) -> None:
        """Store (or replace) the bytes under ``key``."""
        if not content_type:
            raise ValueError("a blob needs a non-empty content type")
        self.blobs[key] = (payload, content_type)

    def get(self, key: BlobKey, offset: int = 0, length: int | None = None) -> bytes:
        """The window ``[offset, offset + length)`` of the blob; past the end is short."""
        if offset < 0 or (length is not None and length < 0):
            raise ValueError("negative window")
        if key not in self.blobs:
            raise BlobNotFound(key)
        payload = self.blobs[key][0]
        return payload[offset:] if length is None else payload[offset : offset + length]

    def stat(self, key: BlobKey) -> BlobInfo | None:
        """Size and content type, None for a missing key."""
        if key not in self.blobs:
            return None
        payload, content_type = self.blobs[key]
        return BlobInfo(key=key, size=len(payload), content_type=content_type)

    def delete(self, key: BlobKey) -> bool:
        """Forget the blob; whether there was one."""
        return self.blobs.pop(key, None) is not None


_TENANT_PARTS = ("a", "a/b", "A")
_RUN_PARTS = ("r", "b/r")
_CALLS = ("c", "%2F")
_TYPES = ("application/octet-stream", "text/plain; charset=utf-8", "application/json")
_TENANT = st.integers(0, len(_TENANT_PARTS) - 1)
_RUN = st.integers(0, len(_RUN_PARTS) - 1)
_CALL = st.integers(0, len(_CALLS) - 1)
_examples = itertools.count(1)


class BlobMachine(RuleBasedStateMachine):
    """One example: its own key prefix, a fresh model, the shared blob store."""

    store: ClassVar[BlobStore]
    run: ClassVar[Callable[[Callable[[], Awaitable[object]]], object]]

    def __init__(self) -> None:
        super().__init__()
        self.model = ReferenceBlobStore()
        self.tag = f"{data.new_key('blob')}-{next(_examples)}"

    def _key(self, tenant: int, run: int, call: int) -> BlobKey:
        return BlobKey(
            f"{self.tag}-{_TENANT_PARTS[tenant]}",
            RunId(_RUN_PARTS[run]),
            ToolCallId(_CALLS[call]),
        )

    def _both(
        self,
        name: str,
        store_call: Callable[[], Awaitable[object]],
        model_call: Callable[[], object],
    ) -> None:
        try:
            expected: object = model_call()
            expected_error: BaseException | None = None
        except (PsychError, ValueError) as exc:
            expected, expected_error = None, exc
        try:
            got: object = type(self).run(store_call)
            got_error: BaseException | None = None
        except (PsychError, ValueError) as exc:
            got, got_error = None, exc
        if expected_error is not None or got_error is not None:
            assert expected_error is not None and isinstance(got_error, type(expected_error)), (
                f"{name}: the store raised {got_error!r} (or returned {got!r}); "
                f"the reference model {expected_error!r}"
            )
            return
        assert got == expected, f"{name}: the store returned {got!r}, the model {expected!r}"

    @rule(
        tenant=_TENANT,
        run=_RUN,
        call=_CALL,
        size=st.sampled_from((0, 1, 5, 300)),
        seed=st.integers(0, 3),
        kind=st.integers(0, 2),
    )
    def put(self, tenant: int, run: int, call: int, size: int, seed: int, kind: int) -> None:
        """``put`` of a few sizes and content types, often over an existing blob."""
        key = self._key(tenant, run, call)
        payload = bytes((seed + i) % 251 for i in range(size))
        self._both(
            "put",
            lambda: self.store.put(key, payload, content_type=_TYPES[kind]),
            lambda: self.model.put(key, payload, _TYPES[kind]),
        )

    @rule(
        tenant=_TENANT,
        run=_RUN,
        call=_CALL,
        offset=st.sampled_from((0, 0, 1, 4, 299, 300, 1000, -1)),
        length=st.none() | st.sampled_from((0, 1, 3, 500, -1)),
    )
    def get(self, tenant: int, run: int, call: int, offset: int, length: int | None) -> None:
        """``get`` of whole blobs and windows, inside, across and past the end."""
        key = self._key(tenant, run, call)
        self._both(
            "get",
            lambda: self.store.get(key, offset=offset, length=length),
            lambda: self.model.get(key, offset, length),
        )

    @rule(tenant=_TENANT, run=_RUN, call=_CALL)
    def stat(self, tenant: int, run: int, call: int) -> None:
        """``stat`` of written, replaced, deleted and never-written keys."""
        key = self._key(tenant, run, call)
        self._both("stat", lambda: self.store.stat(key), lambda: self.model.stat(key))

    @rule(tenant=_TENANT, run=_RUN, call=_CALL)
    def delete(self, tenant: int, run: int, call: int) -> None:
        """``delete``, twice in a row as often as not."""
        key = self._key(tenant, run, call)
        self._both("delete", lambda: self.store.delete(key), lambda: self.model.delete(key))


async def check_blob_store_against_reference(
    store: BlobStore, *, examples: int, steps: int
) -> None:
    """Run the blob state machine against ``store`` (see ``check_against_reference``)."""
    loop = asyncio.get_running_loop()

    def run(make: Callable[[], Awaitable[object]]) -> object:
        async def call() -> object:
            return await make()

        return asyncio.run_coroutine_threadsafe(call(), loop).result(60.0)

    machine = type("BlobMachineForTest", (BlobMachine,), {"store": store, "run": staticmethod(run)})
    config = hypothesis_settings(examples, steps)
    await asyncio.to_thread(run_state_machine_as_test, machine, settings=config)


__all__ = ["BlobMachine", "ReferenceBlobStore", "check_blob_store_against_reference"]
