"""Outbound HTTP for everything that calls out: model clients, HTTP tools, and later MCP and A2A.

``policy`` decides which destinations a request may reach (``EgressPolicy``); ``transport``
is the one seam every request goes through (``HttpTransport``), so a test or a deployment
can swap or restrict it in one place. This package sits below ``model`` and ``tools``
and imports only the pure core.
"""
