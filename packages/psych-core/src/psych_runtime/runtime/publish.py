"""Publishing a Spec: validated, hashed and stored once as an immutable Version."""

from psych_runtime.core.errors import PsychError
from psych_runtime.core.records import JsonObject
from psych_runtime.core.scope import DEFAULT_SCOPE
from psych_runtime.core.scope import Scope
from psych_runtime.core.spec import AgentSpec
from psych_runtime.core.spec import WorkflowSpec
from psych_runtime.core.validation import ValidationContext
from psych_runtime.core.validation import validate
from psych_runtime.core.version import Version
from psych_runtime.plugins.installed import installed_capabilities
from psych_runtime.runtime.clock import utcnow
from psych_runtime.store.checks import check_key
from psych_runtime.store.port import Store


class SharedVersionScope(PsychError, ValueError):
    """``publish`` was given both a tenant's Scope and ``shared=True``.

    A shared Version belongs to no tenant, so the two say opposite things.
    """

    def __init__(self, tenant: str) -> None:
        super().__init__(
            f"publish(shared=True) makes a Version every tenant may use; it takes no "
            f"scope (got tenant {tenant!r}). Pass one or the other."
        )
        self.tenant = tenant


async def publish(
    store: Store,
    spec: AgentSpec | WorkflowSpec | JsonObject,
    *,
    scope: Scope | None = None,
    shared: bool = False,
    context: ValidationContext | None = None,
) -> Version:
    """Validate a Spec, hash it into a Version, and store it for a tenant.

    A Version belongs to the tenant that published it: only that tenant can dispatch
    it or read it back. The hash depends on the Spec alone, so two tenants publishing
    the same Spec get the same hash, each with a grant of its own that the other never
    sees. Publishing the same Spec again for the same tenant returns the Version it
    already holds, with its original ``published_at``.

    Args:
        store: where the Version is kept.
        spec: the Spec, as a model or as plain data.
        scope: the tenant the Version belongs to. Left out, it is the default Scope
            (tenant ``"default"``), the same one ``session()`` uses, so a
            single-tenant program needs no scope anywhere.
        shared: publish for every tenant instead (a platform's catalogue agent, say):
            any tenant may dispatch it and read its Runs' reports. Only for Specs
            whose instructions every tenant may see.
        context: what validation checks tool names and models against. The Spec
            fields installed plugins run (MCP servers with psych-mcp, say) are added
            to its capabilities.

    Raises:
        SpecValidationError: every problem found, each with its path.
        SharedVersionScope: ``shared=True`` was given together with a ``scope``.
        UnstorableValue: the tenant holds a character no store can keep (NUL, a lone
            surrogate).
    """
    if shared and scope is not None:
        raise SharedVersionScope(scope.tenant)
    owner = None if shared else (scope or DEFAULT_SCOPE).tenant
    # Refused before anything is stored, as dispatch refuses it, so no store's driver
    # ever meets a tenant it cannot keep.
    check_key(owner, "tenant")
    base = context if context is not None else ValidationContext()
    checked = validate(spec, context=base.with_capabilities(installed_capabilities()))
    return await store.put_version(Version.of(checked, utcnow()), tenant=owner)


__all__ = ["SharedVersionScope", "publish"]
