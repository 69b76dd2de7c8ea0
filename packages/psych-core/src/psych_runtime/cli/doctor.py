"""``psych doctor``: what is installed, which plugins loaded, and whether they are healthy.

Plugins' own checks decide what "healthy" means for them. Only with ``--store`` does
the doctor connect to a database, and then it only reads: the schema version, what
migrations are pending and how long a round trip takes. It never starts a Worker.
"""

import argparse
import asyncio
import importlib.metadata
import os
import platform
import sys
import time
from collections.abc import Callable
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from pydantic import BaseModel
from pydantic import ConfigDict

from psych_runtime._version import __version__
from psych_runtime.cli._common import missing_database_file
from psych_runtime.cli.command import Command
from psych_runtime.core.errors import PsychError
from psych_runtime.core.ids import RunId
from psych_runtime.plugins import BlobStoreBackend
from psych_runtime.plugins import DoctorResult
from psych_runtime.plugins import LoadedPlugin
from psych_runtime.plugins import PluginError
from psych_runtime.plugins import Registered
from psych_runtime.plugins import StoreBackend
from psych_runtime.plugins import autoload_disabled
from psych_runtime.plugins import autoload_enabled
from psych_runtime.plugins import broken_plugins
from psych_runtime.plugins import canonical_distribution
from psych_runtime.plugins import doctor_checks
from psych_runtime.plugins import loaded_plugins
from psych_runtime.plugins import open_store
from psych_runtime.plugins import registrations
from psych_runtime.plugins import scheme_conflicts
from psych_runtime.plugins import unloaded_plugins
from psych_runtime.store.port import SchemaInspection

SECRET_MARKERS = ("KEY", "SECRET", "TOKEN", "PASSWORD")
MASK = "********"


class DistributionInfo(BaseModel):
    """An installed distribution whose name starts with ``psych-``."""

    model_config = ConfigDict(frozen=True)

    name: str
    version: str


class PluginInfo(BaseModel):
    """A loaded plugin and the schemes it registered."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str
    distribution: str | None
    version: str | None
    store_schemes: list[str]
    blob_store_schemes: list[str]
    single_process_schemes: list[str] = []


class CheckResult(BaseModel):
    """One health check's outcome; ``plugin`` is None for the doctor's own checks."""

    model_config = ConfigDict(frozen=True)

    name: str
    plugin: str | None
    ok: bool
    detail: str


class PythonInfo(BaseModel):
    """The interpreter the report was made with."""

    model_config = ConfigDict(frozen=True)

    version: str
    implementation: str
    executable: str


class StoreReport(BaseModel):
    """What ``--store`` found, read without changing anything.

    Attributes:
        url: the store's URL with any password masked.
        backend: the class of the store the URL opened.
        reachable: whether the store answered at all.
        schema_version: the version recorded in the database (0 when never migrated),
            or None when the store has no schema to inspect.
        expected_schema_version: the version the installed adapter needs, or None.
        pending_migrations: the versions ``migrate()`` would apply, oldest first.
        round_trip_ms: one read's round trip once connected, in milliseconds.
        ok: reachable, and the schema exactly what the adapter needs.
        detail: a sentence saying what to do when something is off.
    """

    model_config = ConfigDict(frozen=True)

    url: str
    backend: str | None = None
    reachable: bool = False
    schema_version: int | None = None
    expected_schema_version: int | None = None
    pending_migrations: list[int] = []
    round_trip_ms: float | None = None
    ok: bool = False
    detail: str = ""


class DoctorReport(BaseModel):
    """Everything ``psych doctor`` found; the ``--json`` output is this model."""

    model_config = ConfigDict(frozen=True)

    psych_runtime: str
    python: PythonInfo
    distributions: list[DistributionInfo]
    plugin_autoload: bool
    plugins: list[PluginInfo]
    checks: list[CheckResult]
    environment: dict[str, str]
    ok: bool
    store: StoreReport | None = None


def _arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``psych doctor``."""
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--store",
        metavar="URL",
        default=None,
        help=(
            "also connect to this store and report its schema version, pending "
            "migrations and round-trip time (read-only)"
        ),
    )


def run(args: argparse.Namespace) -> int:
    """Carry out ``psych doctor``; 0 when every check passes, 1 otherwise."""
    report = gather_report()
    if args.store is not None:
        found = asyncio.run(inspect_store(args.store))
        report = report.model_copy(update={"store": found, "ok": report.ok and found.ok})
    if args.json:
        print(report.model_dump_json(indent=2))
    else:
        print(render_text(report))
    return 0 if report.ok else 1


def gather_report() -> DoctorReport:
    """Collect the report. Plugin failures become failed checks instead of tracebacks."""
    checks: list[CheckResult] = []
    plugins: list[PluginInfo] = []

    loaded = _attempt(checks, "load plugins", loaded_plugins)
    if loaded is not None:
        checks.append(
            CheckResult(
                name="load plugins",
                plugin=None,
                ok=True,
                detail=f"{len(loaded)} plugin(s) loaded",
            )
        )
        stores = _attempt(
            checks, "store backends", lambda: registrations("psych_register_stores", StoreBackend)
        )
        blobs = _attempt(
            checks,
            "blob store backends",
            lambda: registrations("psych_register_blob_stores", BlobStoreBackend),
        )
        # A scheme two plugins claim: the rightful owner keeps it (or nobody, when none
        # has the right) and the other claims are set aside; each is a failed check.
        if stores is not None and blobs is not None:
            for conflict in _attempt(checks, "URL schemes", scheme_conflicts) or []:
                checks.append(
                    CheckResult(
                        name=f"{conflict.what} {conflict.scheme}",
                        plugin=None,
                        ok=False,
                        detail=conflict.message,
                    )
                )
        # Installed plugins autoload left alone: the user meant to register them by
        # hand, and a report that says every check passes would hide that they did not.
        for record in unloaded_plugins():
            where = f" from {record.origin}" if record.origin else ""
            module = record.source.split(":", 1)[0]
            checks.append(
                CheckResult(
                    name=f"plugin {record.name}{where}",
                    plugin=record.name,
                    ok=False,
                    detail=(
                        "installed but not loaded: PSYCH_DISABLE_PLUGIN_AUTOLOAD is set; "
                        f"register it with psych_runtime.adapters.register_plugin("
                        f"importlib.import_module({module!r}), name={record.name!r}) "
                        "or unset PSYCH_DISABLE_PLUGIN_AUTOLOAD"
                    ),
                )
            )
        plugins = [_plugin_info(record, stores or [], blobs or []) for record in loaded]
        registered_checks = _attempt(checks, "doctor checks", doctor_checks) or []
        # Plugins set aside while loading or while registering: each is a failed check.
        for entry in broken_plugins():
            where = f" from {entry.plugin.origin}" if entry.plugin.origin else ""
            checks.append(
                CheckResult(
                    name=f"plugin {entry.plugin.name}{where}",
                    plugin=entry.plugin.name,
                    ok=False,
                    detail=f"set aside: {entry.error}",
                )
            )
        for registered in registered_checks:
            result = _run_check(registered.item.run)
            checks.append(
                CheckResult(
                    name=registered.item.name,
                    plugin=registered.plugin,
                    ok=result.ok,
                    detail=result.detail,
                )
            )

    # The manager records the switch it was built with; without one, read the switch.
    autoload = autoload_enabled() if loaded is not None else not autoload_disabled()
    return DoctorReport(
        psych_runtime=__version__,
        python=PythonInfo(
            version=platform.python_version(),
            implementation=platform.python_implementation(),
            executable=sys.executable,
        ),
        distributions=psych_distributions(),
        plugin_autoload=autoload,
        plugins=plugins,
        checks=checks,
        environment=psych_environment(),
        ok=all(check.ok for check in checks),
    )


async def inspect_store(url: str) -> StoreReport:
    """Connect to the store at ``url`` and describe its schema; never writes.

    Failures (an unknown scheme, an unreachable server) are reported, not raised.
    """
    shown = mask_url(url)
    missing = missing_database_file(url)
    if missing is not None:
        return StoreReport(url=shown, detail=f"there is no database file at {missing}")
    try:
        store = await open_store(url)
    except PsychError as exc:
        return StoreReport(url=shown, detail=f"cannot open the store: {exc}")
    backend = type(store).__name__
    try:
        if not isinstance(store, SchemaInspection):
            # Nothing to compare: time a read of a Run that cannot exist.
            await store.head(RunId("psych-doctor-probe"))
            started = time.perf_counter()
            await store.head(RunId("psych-doctor-probe"))
            elapsed = (time.perf_counter() - started) * 1000
            return StoreReport(
                url=shown,
                backend=backend,
                reachable=True,
                round_trip_ms=round(elapsed, 3),
                ok=True,
                detail="the store keeps no schema",
            )
        await store.schema_version()  # the first call also connects
        started = time.perf_counter()
        found = await store.schema_version() or 0
        elapsed = (time.perf_counter() - started) * 1000
        expected = store.expected_schema_version
    except PsychError as exc:
        return StoreReport(url=shown, backend=backend, detail=f"cannot reach the store: {exc}")
    finally:
        await store.close()
    pending = list(range(found + 1, expected + 1))
    if found > expected:
        detail = (
            f"the database is at version {found}, newer than the {expected} this adapter "
            "knows: upgrade the adapter package"
        )
    elif pending:
        detail = (
            f"{len(pending)} migration(s) pending: run `await store.migrate()` or open the "
            "store with migrate=True from a process allowed to change the schema"
        )
    else:
        detail = "the schema is current"
    return StoreReport(
        url=shown,
        backend=backend,
        reachable=True,
        schema_version=found,
        expected_schema_version=expected,
        pending_migrations=pending,
        round_trip_ms=round(elapsed, 3),
        ok=found == expected,
        detail=detail,
    )


def mask_url(url: str) -> str:
    """``url`` with its password, if any, replaced by a mask."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if not password:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port is not None else ""
    user = parts.username or ""
    netloc = f"{user}:{MASK}@{host}{port}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def psych_distributions() -> list[DistributionInfo]:
    """Installed distributions named ``psych-*``, one per name, sorted."""
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        raw = dist.metadata["Name"]
        if not raw:
            continue
        name = canonical_distribution(raw)
        if name.startswith("psych-"):
            found.setdefault(name, dist.version)
    return [DistributionInfo(name=name, version=found[name]) for name in sorted(found)]


def psych_environment() -> dict[str, str]:
    """``PSYCH_*`` variables, with values hidden when the name suggests a secret."""
    return {
        name: MASK if any(marker in name.upper() for marker in SECRET_MARKERS) else value
        for name, value in sorted(os.environ.items())
        if name.upper().startswith("PSYCH_")
    }


def render_text(report: DoctorReport) -> str:
    """The human-readable form of ``report``."""
    lines = [
        f"psych-runtime {report.psych_runtime}",
        f"Python {report.python.version} ({report.python.implementation}) "
        f"at {report.python.executable}",
        "",
        "Installed Psych distributions:",
    ]
    lines += [f"  {d.name} {d.version}" for d in report.distributions] or ["  (none)"]
    lines += ["", f"Plugins (autoload {'on' if report.plugin_autoload else 'off'}):"]
    for plugin in report.plugins:
        origin = (
            f"{plugin.distribution} {plugin.version}"
            if plugin.distribution
            else "registered by hand"
        )
        provides = []
        if plugin.store_schemes:
            provides.append(
                "stores: "
                + ", ".join(
                    f"{scheme} (single process)"
                    if scheme in plugin.single_process_schemes
                    else scheme
                    for scheme in plugin.store_schemes
                )
            )
        if plugin.blob_store_schemes:
            provides.append("blob stores: " + ", ".join(plugin.blob_store_schemes))
        suffix = f"; {'; '.join(provides)}" if provides else ""
        lines.append(f"  {plugin.name} ({plugin.source}) from {origin}{suffix}")
    if not report.plugins:
        lines.append("  (none)")
    lines += ["", "Checks:"]
    for check in report.checks:
        mark = "ok  " if check.ok else "FAIL"
        owner = f" [{check.plugin}]" if check.plugin else ""
        lines.append(f"  {mark} {check.name}{owner}: {check.detail}")
    lines += ["", "Environment:"]
    lines += [f"  {name}={value}" for name, value in report.environment.items()] or [
        "  (no PSYCH_* variables set)"
    ]
    if report.store is not None:
        lines += ["", *render_store(report.store)]
    failed = sum(not check.ok for check in report.checks)
    if report.store is not None and not report.store.ok:
        failed += 1
    lines += ["", "All checks passed." if failed == 0 else f"{failed} check(s) failed."]
    return "\n".join(lines)


def render_store(found: StoreReport) -> list[str]:
    """The lines of the report's store section."""
    lines = [f"Store {found.url}:"]
    if found.backend is not None:
        lines.append(f"  backend: {found.backend}")
    if found.reachable:
        if found.expected_schema_version is not None:
            lines.append(
                f"  schema version: {found.schema_version} "
                f"(this adapter needs {found.expected_schema_version})"
            )
            pending = ", ".join(map(str, found.pending_migrations)) or "none"
            lines.append(f"  pending migrations: {pending}")
        lines.append(f"  round trip: {found.round_trip_ms:.2f} ms")
    mark = "ok  " if found.ok else "FAIL"
    lines.append(f"  {mark} {found.detail}")
    return lines


def _plugin_info(
    record: LoadedPlugin,
    stores: list[Registered[StoreBackend]],
    blobs: list[Registered[BlobStoreBackend]],
) -> PluginInfo:
    return PluginInfo(
        name=record.name,
        source=record.source,
        distribution=record.distribution,
        version=record.version,
        store_schemes=sorted(
            scheme
            for found in stores
            if found.plugin == record.name
            for scheme in found.item.schemes
        ),
        blob_store_schemes=sorted(
            scheme
            for found in blobs
            if found.plugin == record.name
            for scheme in found.item.schemes
        ),
        single_process_schemes=sorted(
            scheme
            for found in stores
            if found.plugin == record.name and found.item.single_process
            for scheme in found.item.schemes
        ),
    )


def _attempt[T](checks: list[CheckResult], name: str, action: Callable[[], T]) -> T | None:
    try:
        return action()
    except PluginError as exc:
        checks.append(CheckResult(name=name, plugin=None, ok=False, detail=str(exc)))
        return None


def _run_check(check: Callable[[], object]) -> DoctorResult:
    try:
        result = check()
    except Exception as exc:
        return DoctorResult(False, f"the check raised {type(exc).__name__}: {exc}")
    if not isinstance(result, DoctorResult):
        return DoctorResult(
            False, f"the check returned {type(result).__name__}, not a DoctorResult"
        )
    return result


COMMAND = Command(
    "doctor",
    help="report installed Psych packages, plugins and their health",
    description=(
        "Report installed Psych distributions, loaded plugins, their health checks, "
        "the Python version and PSYCH_* settings. Exits 1 when any check fails."
    ),
    arguments=_arguments,
    run=run,
)
