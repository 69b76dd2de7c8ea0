"""The ``psych`` command: scaffolding and diagnostics for developers.

It writes files and reports on the installation. It never starts a Worker or executes
a Run: running agents is the job of code the developer owns and starts themselves.
"""
