"""The Sandbox port, for whoever writes a sandbox backend.

The protocol, what a program asks for (``Program``, ``ResolvedLimits``), what a backend
returns (``Execution``), the guarantees a backend claims, and the reference API's types.
"""

from psych_runtime.sandbox import port as _port
from psych_runtime.sandbox.port import *  # noqa: F403

# Every name of the port module but the runtime's own lookup of a profile's backend.
__all__ = [name for name in _port.__all__ if name != "profile_for"]
