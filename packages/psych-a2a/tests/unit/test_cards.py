"""Signing and verifying Agent Cards offline: keys as PEM or JWK, and what is refused."""

import json

import jwt
import pytest
from a2a.types import AgentCard
from a2a.types import AgentSkill
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric import rsa

from psych_a2a import CardRefused
from psych_a2a import CardVerifier
from psych_a2a import sign_card

from ..keys import pem_pair


def _card() -> AgentCard:
    return AgentCard(
        name="billing",
        description="Bills.",
        version="1",
        skills=[AgentSkill(id="refund", name="Refund", description="Refunds.", tags=["x"])],
    )


def test_a_signed_card_verifies_and_any_change_breaks_it() -> None:
    pem, public = pem_pair(ec.generate_private_key(ec.SECP256R1()))
    card = sign_card(_card(), pem, kid="k")
    verifier = CardVerifier({"k": public})
    verifier.verify(card)
    card.skills[0].description = "Refunds everything to someone else."
    with pytest.raises(CardRefused):
        verifier.verify(card)


def test_keys_may_be_given_as_jwks() -> None:
    private = ec.generate_private_key(ec.SECP256R1())
    private_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private))
    public_jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(private.public_key()))
    card = sign_card(_card(), private_jwk, kid="j")
    CardVerifier({"j": public_jwk}).verify(card)


def test_an_unknown_key_id_or_an_algorithm_not_accepted_is_refused() -> None:
    pem, public = pem_pair(ec.generate_private_key(ec.SECP256R1()))
    card = sign_card(_card(), pem, kid="k")
    with pytest.raises(CardRefused):
        CardVerifier({"other": public}).verify(card)
    with pytest.raises(CardRefused):
        CardVerifier({"k": public}, algorithms=("RS256",)).verify(card)
    with pytest.raises(CardRefused):
        CardVerifier({"k": public}).verify(_card())  # unsigned


def test_an_rsa_signature_verifies_under_its_algorithm() -> None:
    pem, public = pem_pair(rsa.generate_private_key(public_exponent=65537, key_size=2048))
    card = sign_card(_card(), pem, kid="r", algorithm="RS256")
    CardVerifier({"r": public}).verify(card)


def test_bad_settings_are_refused_early() -> None:
    with pytest.raises(ValueError, match="at least one trusted key"):
        CardVerifier({})
    with pytest.raises(ValueError, match="algorithm"):
        CardVerifier({"k": "x"}, algorithms=())
    with pytest.raises(ValueError, match="cannot be read"):
        CardVerifier({"k": "not a key"})
    with pytest.raises(ValueError, match="kid"):
        sign_card(_card(), "irrelevant", kid="")
    with pytest.raises(ValueError, match="cannot be read"):
        sign_card(_card(), "not a key", kid="k")


def test_a_verifier_covers_every_peer_or_the_named_ones() -> None:
    _, public = pem_pair(ec.generate_private_key(ec.SECP256R1()))
    assert CardVerifier({"k": public}).applies_to("anyone")
    named = CardVerifier({"k": public}, peers=("billing",))
    assert named.applies_to("billing") and not named.applies_to("search")
