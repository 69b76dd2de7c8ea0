"""Signing keys for the Agent Card tests, made fresh for each test that asks."""

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric import rsa


def pem_pair(
    private: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | None = None,
) -> tuple[str, str]:
    """``private`` (a new P-256 key when None) and its public key, both as PEM text."""
    if private is None:
        private = ec.generate_private_key(ec.SECP256R1())
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return pem, public.decode()
