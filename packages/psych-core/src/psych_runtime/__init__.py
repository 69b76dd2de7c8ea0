"""Psych Runtime: an embeddable, durable agent runtime."""

from psych_runtime._version import __version__

__all__ = ["__version__"]
