"""Talking to models: the ModelClient port and what surrounds it."""
