"""Executing Runs: the Worker, its supervisor, the Journal and the agent loop."""
