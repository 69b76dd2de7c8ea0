"""Plugin system: pluggy hooks over the ``psych_runtime`` entry-point group."""
