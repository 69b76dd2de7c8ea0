"""The SecretResolver port: how a credential named in a Spec becomes a usable secret.

A Spec is hashed, stored and shown to people, so it may only carry the *name* of a
credential. The value is looked up at call time, for the tenant the call is made for,
through this port; the application decides where secrets really live (a vault, a
database, the environment). Two small resolvers ship here for tests and simple
deployments.

The secret travels as ``pydantic.SecretStr`` so that printing, logging or serialising
a ``ResolvedCredential`` by accident shows asterisks rather than the value.
"""

import os
import re
from collections.abc import Mapping
from typing import Annotated
from typing import Protocol

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import SecretStr

from psych_runtime.core.scope import Scope

DEFAULT_ENV_PREFIX = "PSYCH_SECRET_"
"""What ``EnvSecretResolver`` puts in front of a secret's name by default."""

_NOT_ENV_SAFE = re.compile(r"[^A-Za-z0-9_]")


class ResolvedCredential(BaseModel):
    """A secret ready to be sent, plus an identity that is safe to show.

    Attributes:
        identity: names whose credential this is (for pooling connections and for
            messages) without revealing it; never the secret itself.
        secret: the value, masked in ``repr``, ``str`` and JSON dumps. Read it with
            ``secret.get_secret_value()`` at the last moment, where it is sent.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    identity: Annotated[str, Field(min_length=1, max_length=256)]
    secret: SecretStr


class SecretResolver(Protocol):
    """Looks up the value of a named credential for one tenant.

    Implementations receive the Scope so that two tenants using the same credential
    name in their Specs each get their own secret. Returning None means "no such
    secret for this tenant"; the call that needed it then fails with
    ``missing_credential`` instead of being sent without authorization.
    """

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        """The credential called ``name`` for ``scope``, or None when there is none."""
        ...


def env_variable_for(name: str, prefix: str = DEFAULT_ENV_PREFIX) -> str:
    """The environment variable ``EnvSecretResolver`` reads for the secret ``name``.

    Characters that cannot appear in a portable variable name (``-``, ``.``...) become
    underscores, and the result is upper-cased: ``crm-token`` -> ``PSYCH_SECRET_CRM_TOKEN``.
    """
    return prefix + _NOT_ENV_SAFE.sub("_", name).upper()


class EnvSecretResolver:
    """Reads secrets from environment variables: one variable per secret name.

    The environment belongs to the whole process, so every tenant sees the same
    secrets; a deployment that serves several tenants with different credentials
    should implement ``SecretResolver`` against its own secret store instead.

    Args:
        prefix: prepended to the upper-cased name to form the variable name.
        environ: where to read from; defaults to ``os.environ`` as it is at call time.
    """

    def __init__(
        self, prefix: str = DEFAULT_ENV_PREFIX, *, environ: Mapping[str, str] | None = None
    ) -> None:
        self._prefix = prefix
        self._environ = environ

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        """The variable's value as a credential; None when it is unset or empty."""
        environ = self._environ if self._environ is not None else os.environ
        value = environ.get(env_variable_for(name, self._prefix))
        if not value:
            return None
        return ResolvedCredential(identity=name, secret=SecretStr(value))

    def __repr__(self) -> str:
        return f"EnvSecretResolver(prefix={self._prefix!r})"


class StaticSecretResolver:
    """Secrets held in memory, the same for every tenant; for tests and small apps.

    Args:
        mapping: secret name to secret value.
    """

    def __init__(self, mapping: Mapping[str, str]) -> None:
        # An empty value would send "Bearer " with nothing after it; treat it as absent.
        self._secrets = {name: SecretStr(value) for name, value in mapping.items() if value}

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        """The stored value for ``name``, or None when it was never given."""
        secret = self._secrets.get(name)
        if secret is None:
            return None
        return ResolvedCredential(identity=name, secret=secret)

    def __repr__(self) -> str:
        # Names only: the values must never reach a log line through a repr.
        return f"StaticSecretResolver(names={sorted(self._secrets)!r})"


__all__ = [
    "DEFAULT_ENV_PREFIX",
    "EnvSecretResolver",
    "ResolvedCredential",
    "SecretResolver",
    "StaticSecretResolver",
    "env_variable_for",
]
