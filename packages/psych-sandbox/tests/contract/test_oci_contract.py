"""The OCI backend under a real engine (podman, crun) against the Sandbox contract.

The container runs from a Debian root filesystem built locally by
``tools/sandbox_rootfs.py`` (no image registry). Where podman or the root filesystem is
missing the cases skip with the reason; with ``PSYCH_REQUIRE_OCI=1`` (CI) they fail.
"""

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from psych_contract import SandboxContract
from psych_runtime.adapters import Sandbox
from psych_sandbox import OciSandbox
from psych_sandbox import SandboxUnavailable
from tools.sandbox_rootfs import rootfs_path


def unavailable(reason: str) -> None:
    """Skip, or fail where the OCI backend is required."""
    message = f"the OCI sandbox cannot run here: {reason} (python tools/sandbox_rootfs.py)"
    if os.environ.get("PSYCH_REQUIRE_OCI") == "1":
        pytest.fail(message)
    pytest.skip(message)


@pytest.mark.slow
class TestOciSandbox(SandboxContract):
    kernel_enforced = True

    @pytest_asyncio.fixture
    async def sandbox(self) -> AsyncIterator[Sandbox]:
        rootfs = rootfs_path()
        if not Path(rootfs, "usr", "bin", "python3").exists():
            unavailable(f"no root filesystem at {rootfs}")
        try:
            sandbox = await OciSandbox.open(rootfs=str(rootfs))
        except SandboxUnavailable as error:
            unavailable(str(error))
        yield sandbox
        await sandbox.close()
