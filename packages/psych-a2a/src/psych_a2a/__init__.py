"""Other agents over A2A, in both directions, for Psych Runtime agents.

Outbound: installing the package lets a Spec name A2A peers (``AgentSpec.a2a_peers``);
a ``Runtime`` built without explicit ``tool_sources`` gets an ``A2ATools`` with its
egress policy and secrets, and each peer's skills become tools the model can call. A
process that builds its own keeps one ``A2APool`` (connections keyed by tenant,
principal, peer and credential) and hands it to every ``A2ATools``.

Inbound: ``A2AMount`` serves a published agent as an A2A agent from your own ASGI
app, a Run per task; ``RunExecutor`` is the piece behind it for a custom setup.

``CardVerifier`` and ``sign_card`` check and add Agent Card signatures. Names load on
first access, so importing this package never imports the A2A SDK.
"""

from typing import TYPE_CHECKING

from psych_a2a._version import __version__
from psych_runtime.adapters.plugins import lazy_exports

if TYPE_CHECKING:
    from psych_a2a.cards import CardRefused as CardRefused
    from psych_a2a.cards import CardVerifier as CardVerifier
    from psych_a2a.cards import sign_card as sign_card
    from psych_a2a.inbound import A2AMount as A2AMount
    from psych_a2a.inbound import RunExecutor as RunExecutor
    from psych_a2a.inbound import agent_card as agent_card
    from psych_a2a.inbound import push_url_check as push_url_check
    from psych_a2a.pool import A2APool as A2APool
    from psych_a2a.pool import A2APoolKey as A2APoolKey
    from psych_a2a.tools import A2ATools as A2ATools
    from psych_a2a.tools import PoolKey as PoolKey

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "A2APool": "psych_a2a.pool",
        "A2APoolKey": "psych_a2a.pool",
        "A2ATools": "psych_a2a.tools",
        "PoolKey": "psych_a2a.tools",
        "CardRefused": "psych_a2a.cards",
        "CardVerifier": "psych_a2a.cards",
        "sign_card": "psych_a2a.cards",
        "A2AMount": "psych_a2a.inbound",
        "RunExecutor": "psych_a2a.inbound",
        "agent_card": "psych_a2a.inbound",
        "push_url_check": "psych_a2a.inbound",
    },
)

__all__ = [
    "A2AMount",
    "A2APool",
    "A2APoolKey",
    "A2ATools",
    "CardRefused",
    "CardVerifier",
    "PoolKey",
    "RunExecutor",
    "__version__",
    "agent_card",
    "push_url_check",
    "sign_card",
]
