"""The Sandbox port: model-written programs in a separate process, calling tools back.

The core has no sandbox of its own (running model code in the host interpreter is
not an option at any isolation level); ``psych-sandbox`` provides backends, registered
through the plugin entry point like stores.
"""
