"""A SecretResolver for tests: one token per tenant, whatever the credential's name."""

from pydantic import SecretStr

from psych_runtime import ResolvedCredential
from psych_runtime import Scope


class PerTenant:
    """Each tenant's own token for every credential name."""

    def __init__(self, tokens: dict[str, str]) -> None:
        self.tokens = tokens

    async def resolve(self, scope: Scope, name: str) -> ResolvedCredential | None:
        token = self.tokens.get(scope.tenant)
        return None if token is None else ResolvedCredential(identity=name, secret=SecretStr(token))
