"""Built-in backends, registered through the same entry point a third party uses."""
