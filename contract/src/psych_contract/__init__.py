"""Conformance suites for Psych Runtime adapters.

Each suite is a plain pytest class. Subclass it in your adapter's test package and
override the one fixture that builds a fresh adapter instance::

    from psych_contract import StoreContract

    class TestMyStore(StoreContract):
        @pytest.fixture
        async def store(self):
            yield MyStore(...)
"""

from psych_contract._version import __version__

__all__ = ["__version__"]
