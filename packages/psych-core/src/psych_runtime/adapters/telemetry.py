"""The Telemetry port, for whoever writes a telemetry adapter.

The protocol, the span schema it is held to and its checker, the no-op adapter, and the
provider names model calls are reported under.
"""

from psych_runtime import telemetry as _telemetry
from psych_runtime.telemetry import *  # noqa: F403

# What the runtime alone uses: the attribute and carrier aliases of its spans, and the
# lookup of a model client's provider (an adapter is handed the name, never the client).
_RUNTIME_ONLY = {"AttributeValue", "Attributes", "Carrier", "provider_of"}

__all__ = [name for name in _telemetry.__all__ if name not in _RUNTIME_ONLY]
