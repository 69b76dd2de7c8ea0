"""Documented import paths for names that ship in separately installed adapter packages.

The product description imports its store adapter as ``psych_runtime.store.postgres``
and names the sandbox backends ``psych_runtime.sandbox.subprocess`` and ``.container``.
Those live in their own distributions here (``psych-store-postgres``,
``psych-sandbox``...) so a program installs only what it uses. The modules at the
documented paths are aliases: importing one loads the adapter package and hands its
names through; when the package is missing, the import fails with the distribution to
install.
"""

import importlib
from types import ModuleType


def load(module: str, distribution: str, alias: str) -> ModuleType:
    """Import ``module`` for the alias module ``alias``, or say what to install.

    Raises:
        ImportError: ``module`` is not installed; the message names ``distribution``.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as missing:
        if missing.name is None or not module.startswith(missing.name):
            raise
        raise ImportError(
            f"{alias} is provided by the separately installed {distribution} package; "
            f"install it (pip install {distribution}) to import it",
            name=alias,
        ) from None


__all__ = ["load"]
