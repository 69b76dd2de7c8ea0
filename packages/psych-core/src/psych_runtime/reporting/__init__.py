"""The store-backed ``report()``, kept importable here; it lives with the other reads."""

from psych_runtime.runtime.reads import report

__all__ = ["report"]
