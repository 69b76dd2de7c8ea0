"""Ready-made health checks for plugins to hand to ``psych doctor``.

Most adapters only need to say whether their driver can be imported. Writing that by
hand in every plugin means the same try/except each time; ``import_check`` builds the
check from the module name and the two messages instead.
"""

import importlib

from psych_runtime.plugins.backends import DoctorCheck, DoctorResult


def import_check(name: str, module: str, *, ok: str, missing: str) -> DoctorCheck:
    """A health check that passes when ``module`` can be imported.

    The module is imported only when the check runs, never when the plugin registers
    it, so loading a plugin stays cheap.

    Example::

        @hookimpl
        def psych_doctor_checks(register):
            register(
                import_check(
                    "acme store",
                    "acme_driver",
                    ok="acme_driver {version} available",
                    missing="cannot import acme_driver ({error}); pip install acme-psych",
                )
            )

    Args:
        name: the label ``psych doctor`` shows next to the result.
        module: the dotted name of the module to import.
        ok: the detail when the import works; ``{version}`` in it is replaced by the
            module's ``__version__`` (``unknown`` when it has none).
        missing: the detail when the import fails; ``{error}`` in it is replaced by
            the ``ImportError``'s message. Say what to install.

    Returns:
        A ``DoctorCheck`` to pass to ``register``.
    """

    def run() -> DoctorResult:
        try:
            imported = importlib.import_module(module)
        except ImportError as exc:
            return DoctorResult(False, missing.format(error=exc))
        version = getattr(imported, "__version__", "unknown")
        return DoctorResult(True, ok.format(version=version))

    return DoctorCheck(name, run)


__all__ = ["import_check"]
