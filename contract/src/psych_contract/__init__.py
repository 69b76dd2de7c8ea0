"""Conformance suites for Psych Runtime adapters.

Each suite is a plain pytest class. Subclass it in your adapter's test package and
override the one fixture that builds a fresh adapter instance::

    import pytest_asyncio
    from psych_contract import StoreContract

    class TestMyStore(StoreContract):
        @pytest_asyncio.fixture
        async def store(self):
            store = MyStore(...)
            yield store
            await store.close()
"""

from psych_contract._version import __version__
from psych_contract.blob import BlobStoreContract
from psych_contract.memory import MemoryContract
from psych_contract.sandbox import SandboxContract
from psych_contract.store import StoreContract
from psych_contract.telemetry import Measurement
from psych_contract.telemetry import TelemetryContract
from psych_contract.telemetry import TelemetryHarness

__all__ = [
    "BlobStoreContract",
    "Measurement",
    "MemoryContract",
    "SandboxContract",
    "StoreContract",
    "TelemetryContract",
    "TelemetryHarness",
    "__version__",
]
