"""The BlobStore port: where the bytes of oversized tool results live."""
