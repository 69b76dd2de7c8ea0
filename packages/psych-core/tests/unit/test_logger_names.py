"""Every module logs under its own import path.

A consumer configures logging by package (``psych_runtime.runtime`` quiets the loop and
the Worker together); a module logging under a hand-written name escapes that, and a
rename of the module would silently leave its logger behind.
"""

import importlib
import logging
import pkgutil

import psych_runtime


def test_every_module_logger_is_named_after_its_module() -> None:
    strays: list[str] = []
    checked = 0
    for info in pkgutil.walk_packages(psych_runtime.__path__, "psych_runtime."):
        module = importlib.import_module(info.name)
        for attribute, value in vars(module).items():
            if isinstance(value, logging.Logger) and value.name.startswith("psych"):
                checked += 1
                if value.name != info.name:
                    strays.append(f"{info.name}.{attribute} logs as {value.name!r}")
    assert checked >= 3, "expected the Worker, the runtime and the loop to log"
    assert not strays, strays
