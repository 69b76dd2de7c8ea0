"""Tool results too large for the model's context or the log.

``render`` decides what the model sees (a preview and a handle), ``offload`` writes the
whole result to the BlobStore, and ``read_tool`` with ``reader`` let the model page
through a stored result later.
"""
