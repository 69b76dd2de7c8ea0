"""MkDocs hook: fills each API reference page from its module's ``__all__``.

A page under ``docs/api/`` holds the line ``<!-- api: MODULE -->``. Before the page is
rendered, the line is replaced by one mkdocstrings block per public name of ``MODULE``
(imported, so a lazily built ``__all__`` counts as it is at run time), each pointing at
the object's defining module so that names re-exported from internal modules render with
their own docstrings. The reference therefore always lists what ``__all__`` says, no
more and no less.
"""

import importlib
import inspect
import re
import sys
from typing import Any

PLACEHOLDER = re.compile(r"^<!-- api: (?P<module>[\w.]+) -->$", flags=re.MULTILINE)


def _target(module: str, name: str) -> str:
    """The dotted path mkdocstrings should render for ``module.name``."""
    value = getattr(importlib.import_module(module), name)
    if (inspect.isclass(value) or inspect.isfunction(value)) and "<" not in value.__qualname__:
        return f"{value.__module__}.{value.__qualname__}"
    return _assigned_in(name, value) or f"{module}.{name}"


def _assigned_in(name: str, value: object) -> str | None:
    """Where a constant such as ``PSYCH_SCHEMA`` is assigned, not merely imported."""
    assignment = re.compile(rf"^{re.escape(name)}\s*[:=]", flags=re.MULTILINE)
    for module_name, loaded in sorted(sys.modules.items()):
        if not module_name.startswith("psych_") or vars(loaded).get(name) is not value:
            continue
        try:
            source = inspect.getsource(loaded)
        except (OSError, TypeError):
            continue
        if assignment.search(source):
            return f"{module_name}.{name}"
    return None


def reference(module: str) -> str:
    """The module's docstring, then every public name of ``module`` in ``__all__`` order."""
    names = [n for n in importlib.import_module(module).__all__ if not n.startswith("_")]
    parts = [f"::: {module}\n    options:\n      members: false\n"]
    for name in names:
        parts.append(f"## `{module}.{name}`\n\n::: {_target(module, name)}\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each API placeholder with the module's reference."""
    return PLACEHOLDER.sub(lambda match: reference(match["module"]), markdown)
