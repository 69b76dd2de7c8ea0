"""The Sandbox contract against one mutant, chosen by ``PSYCH_MUTANT``.

``test_sandbox_mutants`` runs this module in a subprocess per mutant. It is not
collected on its own.
"""

import os
from collections.abc import AsyncIterator

import pytest_asyncio

from contract.tests.mutants.sandbox_mutants import sandbox_by_name
from psych_contract import SandboxContract
from psych_runtime.adapters import Sandbox

MUTANT = sandbox_by_name(os.environ.get("PSYCH_MUTANT", "control-subprocess"))


class TestMutant(SandboxContract):
    kernel_enforced = MUTANT.kernel_enforced

    @pytest_asyncio.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        sandbox = await MUTANT.open()
        yield sandbox
        await sandbox.close()
