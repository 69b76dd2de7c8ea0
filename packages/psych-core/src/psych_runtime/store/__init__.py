"""The Store port and its in-process adapter."""
