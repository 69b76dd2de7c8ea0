"""Durable memory: facts an agent keeps about one end user of one tenant, across Runs.

``port`` holds the ``MemoryStore`` protocol and its values, ``checks`` the rules every
implementation applies before touching its backend (so all of them refuse the same
input alike), and ``local`` the in-process implementation. Durable implementations
live in the store adapter packages, next to the Store they share a database with.
"""
