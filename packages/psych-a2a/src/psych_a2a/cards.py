"""Agent Card signatures: signing the cards this process serves, checking the ones it reads.

An Agent Card may carry JWS signatures over its canonical JSON form (RFC 8785, the
``signatures`` member left out). ``sign_card`` adds one with a private key;
``CardVerifier`` checks a peer's card against public keys the consumer trusts.

Keys are never taken from the card itself: a ``jku`` in a signature's header is not
followed, because a key the card points at proves nothing about who wrote it. A
signature counts only when its ``kid`` names one of the verifier's keys and its
algorithm is one the verifier accepts, so an attacker cannot pick a weaker one.
"""

from collections.abc import Collection
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

if TYPE_CHECKING:
    from a2a.types import AgentCard

type KeyMaterial = str | bytes | Mapping[str, Any]
"""A key as PEM text or bytes, or as a JWK (a mapping with ``kty``)."""

ASYMMETRIC_ALGORITHMS = ("ES256", "ES384", "ES512", "EdDSA", "PS256", "RS256")
"""The JWS algorithms accepted unless a verifier names others (no shared-secret HMAC)."""


class CardRefused(Exception):
    """A peer's Agent Card failed verification: unsigned, or no signature checks out."""


class CardVerifier:
    """Which public keys may sign peers' Agent Cards, and which peers must present one.

    Args:
        keys: the trusted public keys by key id (the ``kid`` a signature names).
        algorithms: the JWS algorithms a signature may use.
        peers: the names of the Spec's peers whose cards must be signed; None (the
            default) requires it of every peer.

    Raises:
        ValueError: no keys, no algorithms, or a key that cannot be read.
    """

    def __init__(
        self,
        keys: Mapping[str, KeyMaterial],
        *,
        algorithms: Collection[str] = ASYMMETRIC_ALGORITHMS,
        peers: Collection[str] | None = None,
    ) -> None:
        if not keys:
            raise ValueError("a CardVerifier needs at least one trusted key")
        if not algorithms:
            raise ValueError("a CardVerifier needs at least one algorithm")
        self._keys = {kid: _public_key(kid, key) for kid, key in keys.items()}
        self._algorithms = sorted(algorithms)
        self._peers = None if peers is None else frozenset(peers)

    def applies_to(self, peer: str) -> bool:
        """Whether the card of the peer named ``peer`` must be verified."""
        return self._peers is None or peer in self._peers

    def verify(self, card: "AgentCard") -> None:
        """Check that at least one of ``card``'s signatures is valid under a trusted key.

        Raises:
            CardRefused: the card has no signature, or none verifies.
        """
        from a2a.utils.signing import SignatureVerificationError
        from a2a.utils.signing import create_signature_verifier

        def key_for(kid: str | None, jku: str | None) -> Any:
            import jwt

            key = self._keys.get(kid or "")
            if key is None:
                raise jwt.exceptions.InvalidKeyError(f"no trusted key with id {kid!r}")
            return key

        try:
            create_signature_verifier(key_for, self._algorithms)(card)
        except SignatureVerificationError as error:
            raise CardRefused(f"the Agent Card's signature does not verify ({error})") from None


def sign_card(
    card: "AgentCard", key: KeyMaterial, *, kid: str, algorithm: str = "ES256"
) -> "AgentCard":
    """Add a JWS signature over ``card`` with the private ``key``; returns the card.

    The card is changed in place (a signature is appended) and returned. Sign last:
    any later change to the card invalidates the signature.

    Raises:
        ValueError: the key cannot be read or ``kid`` is empty.
    """
    from a2a.utils.signing import create_agent_card_signer

    if not kid:
        raise ValueError("a card signature needs a key id (kid)")
    private = _private_key(kid, key)
    header: Any = {"kid": kid, "alg": algorithm, "typ": "JOSE"}  # no jku: keys are not fetched
    signer = create_agent_card_signer(private, header)
    return signer(card)


def _public_key(kid: str, key: KeyMaterial) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        if isinstance(key, Mapping):
            import jwt

            return jwt.PyJWK(dict(key)).key
        data = key.encode() if isinstance(key, str) else key
        return load_pem_public_key(data)
    except Exception as error:
        raise ValueError(f"trusted key {kid!r} cannot be read as a public key: {error}") from None


def _private_key(kid: str, key: KeyMaterial) -> Any:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        if isinstance(key, Mapping):
            import jwt

            return jwt.PyJWK(dict(key)).key
        data = key.encode() if isinstance(key, str) else key
        return load_pem_private_key(data, password=None)
    except Exception as error:
        raise ValueError(f"signing key {kid!r} cannot be read as a private key: {error}") from None


__all__ = ["ASYMMETRIC_ALGORITHMS", "CardRefused", "CardVerifier", "KeyMaterial", "sign_card"]
