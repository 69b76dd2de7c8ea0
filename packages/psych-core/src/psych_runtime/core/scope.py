"""Scope: who a call is made for, stamped on every Record."""

from typing import Annotated

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field


class Scope(BaseModel):
    """The tenant and identity a call is made on behalf of.

    The tenant is the isolation boundary: stores filter by it and every read refuses a
    Run that belongs to another tenant. The principal and labels are carried along for
    the consumer's own use (policy decisions, metering) and never interpreted here.

    The model is frozen so a Scope cannot change between the moment a check passes and
    the moment the checked call runs.

    Attributes:
        tenant: the isolation boundary, 1 to 256 characters.
        principal: the acting user or service, when the consumer knows it.
        labels: free-form string metadata.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tenant: Annotated[str, Field(min_length=1, max_length=256)]
    principal: Annotated[str | None, Field(max_length=256)] = None
    labels: dict[str, str] = Field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.tenant, self.principal, tuple(sorted(self.labels.items()))))

    @property
    def pool_key(self) -> tuple[str, str | None]:
        """What this Scope contributes to the key of a pooled connection: tenant, principal.

        Connections to MCP servers and A2A peers are pooled by this, the server and the
        credential identity, never by URL, so a tenant's connection (and the token it
        carries) can never serve another tenant's call. Labels are left out: they are
        the consumer's metadata, not an identity.
        """
        return (self.tenant, self.principal)


DEFAULT_SCOPE = Scope(tenant="default")
"""The Scope of a program that names none: ``session()`` and ``publish()`` use it.

A single-tenant program never has to think about tenancy; its Versions and Runs all
belong to the tenant ``"default"``.
"""
