"""The store-backed ``report()``: a projection of a Run's log and its pinned Version."""

from psych_runtime.core.errors import VersionNotFound
from psych_runtime.core.ids import RunId
from psych_runtime.core.projections.report import build_report
from psych_runtime.core.projections.report_types import RunReport
from psych_runtime.core.scope import Scope
from psych_runtime.runtime.reads import FOLDS, checked_header
from psych_runtime.store.port import Store


async def report(store: Store, run_id: RunId, *, scope: Scope | None = None) -> RunReport:
    """What a Run did, used, cost and spent its time on, recomputed from its log.

    Raises:
        RunNotFound: no such Run.
        AccessDenied: the Run belongs to another tenant.
        VersionNotFound: the Version the Run pinned is missing from the store, or is
            neither the Run's tenant's own nor shared.
        CorruptLog: the log contradicts itself.
    """
    header = await checked_header(store, run_id, scope)
    fold = await FOLDS.fold(store, run_id)
    pinned = fold.state.version_hash
    # The Version is read as the Run's own tenant sees it, so a Run can never be used
    # to read a Version its tenant was not allowed to dispatch.
    version = (
        await store.get_version(pinned, tenant=header.scope.tenant) if pinned is not None else None
    )
    if version is None:
        raise VersionNotFound(str(pinned))
    spec = version.spec
    return build_report(
        fold.records,
        spec_name=spec.name,
        failure_streak_threshold=spec.limits.failure_streak_threshold,
    )


__all__ = ["report"]
