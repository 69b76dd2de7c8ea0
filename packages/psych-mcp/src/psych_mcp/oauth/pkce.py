"""PKCE (RFC 7636) with the S256 method, and the ``state`` value.

The verifier is 64 random bytes in unpadded base64url (86 characters, inside the 43
to 128 that RFC 7636 allows); only its SHA-256 hash leaves the process before the code
is exchanged. ``state`` is 32 random bytes, enough that nobody can guess a pending
authorization.
"""

import base64
import hashlib
import secrets


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_code_verifier() -> str:
    """A fresh PKCE code verifier."""
    return _b64url(secrets.token_bytes(64))


def s256_challenge(verifier: str) -> str:
    """The S256 code challenge of ``verifier``."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def new_state() -> str:
    """A fresh, unguessable ``state`` value."""
    return _b64url(secrets.token_bytes(32))


__all__ = ["new_code_verifier", "new_state", "s256_challenge"]
