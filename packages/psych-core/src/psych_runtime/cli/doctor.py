"""``psych doctor``: what is installed, which plugins loaded, and whether they are healthy.

Nothing here connects to a database or starts a Worker; plugins' own checks decide what
"healthy" means for them.
"""

import argparse
import importlib.metadata
import os
import platform
import sys
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from psych_runtime._version import __version__
from psych_runtime.plugins import (
    BlobStoreBackend,
    DoctorResult,
    LoadedPlugin,
    PluginError,
    Registered,
    StoreBackend,
    autoload_disabled,
    autoload_enabled,
    blob_store_backends,
    broken_plugins,
    canonical_distribution,
    doctor_checks,
    loaded_plugins,
    registrations,
    store_backends,
)

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


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Register ``psych doctor`` on the top-level parser."""
    parser = commands.add_parser(
        "doctor",
        help="report installed Psych packages, plugins and their health",
        description=(
            "Report installed Psych distributions, loaded plugins, their health checks, "
            "the Python version and PSYCH_* settings. Exits 1 when any check fails."
        ),
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace) -> int:
    """Carry out ``psych doctor``; 0 when every check passes, 1 otherwise."""
    report = gather_report()
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
        # The per-scheme tables raise DuplicateBackend when two plugins claim a scheme;
        # skip them when collecting already failed, so one fault is reported once.
        if stores is not None:
            _attempt(checks, "store schemes", store_backends)
        if blobs is not None:
            _attempt(checks, "blob store schemes", blob_store_backends)
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
            provides.append("stores: " + ", ".join(plugin.store_schemes))
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
    failed = sum(not check.ok for check in report.checks)
    lines += ["", "All checks passed." if failed == 0 else f"{failed} check(s) failed."]
    return "\n".join(lines)


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
