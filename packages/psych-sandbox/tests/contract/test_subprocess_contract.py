"""The subprocess backend against the Sandbox contract and its escape matrix.

Escapes it cannot prevent (the network; on a host that is not root, everything a uid of
its own would keep out) skip with the reason; the README says so too.
"""

from collections.abc import AsyncIterator

import pytest_asyncio

from psych_contract import SandboxContract
from psych_runtime.adapters import Sandbox
from psych_sandbox import SubprocessSandbox


class TestSubprocessSandbox(SandboxContract):
    kernel_enforced = False

    @pytest_asyncio.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        sandbox = await SubprocessSandbox.open()
        yield sandbox
        await sandbox.close()
