"""The SecretResolver port and the two resolvers that ship with it."""

import logging

import pytest
from pydantic import SecretStr
from pydantic import ValidationError

from psych_runtime.core.scope import Scope
from psych_runtime.tools.secrets import EnvSecretResolver
from psych_runtime.tools.secrets import ResolvedCredential
from psych_runtime.tools.secrets import SecretResolver
from psych_runtime.tools.secrets import StaticSecretResolver
from psych_runtime.tools.secrets import env_variable_for

ACME = Scope(tenant="acme")
SECRET = "sk-live-9f8e7d6c5b4a"


def test_a_resolved_credential_never_shows_its_secret() -> None:
    credential = ResolvedCredential(identity="crm", secret=SecretStr(SECRET))
    for shown in (repr(credential), str(credential), credential.model_dump_json()):
        assert SECRET not in shown
    assert "crm" in repr(credential)
    assert credential.secret.get_secret_value() == SECRET


def test_a_resolved_credential_accepts_a_plain_string_and_still_hides_it() -> None:
    credential = ResolvedCredential.model_validate({"identity": "crm", "secret": SECRET})
    assert SECRET not in repr(credential)
    assert credential.secret.get_secret_value() == SECRET


def test_a_resolved_credential_is_frozen() -> None:
    credential = ResolvedCredential(identity="crm", secret=SecretStr(SECRET))
    with pytest.raises(ValidationError):
        credential.identity = "other"  # type: ignore[misc]


def test_logging_a_credential_does_not_leak_it(caplog: pytest.LogCaptureFixture) -> None:
    credential = ResolvedCredential(identity="crm", secret=SecretStr(SECRET))
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("test.secrets").info("resolved %r / %s", credential, credential)
    assert caplog.records
    assert all(SECRET not in record.getMessage() for record in caplog.records)


def test_env_variable_names_are_prefixed_upper_cased_and_portable() -> None:
    assert env_variable_for("crm") == "PSYCH_SECRET_CRM"
    assert env_variable_for("crm-token.v2") == "PSYCH_SECRET_CRM_TOKEN_V2"
    assert env_variable_for("crm", "APP_") == "APP_CRM"


async def test_env_resolver_reads_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PSYCH_SECRET_CRM_TOKEN", SECRET)
    resolved = await EnvSecretResolver().resolve(ACME, "crm-token")
    assert resolved is not None
    assert resolved.identity == "crm-token"
    assert resolved.secret.get_secret_value() == SECRET


async def test_env_resolver_reads_the_environment_at_call_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolver = EnvSecretResolver()
    monkeypatch.delenv("PSYCH_SECRET_LATE", raising=False)
    assert await resolver.resolve(ACME, "late") is None
    monkeypatch.setenv("PSYCH_SECRET_LATE", "now-it-exists")
    resolved = await resolver.resolve(ACME, "late")
    assert resolved is not None and resolved.secret.get_secret_value() == "now-it-exists"


async def test_env_resolver_treats_unset_and_empty_as_missing() -> None:
    resolver = EnvSecretResolver(environ={"PSYCH_SECRET_EMPTY": ""})
    assert await resolver.resolve(ACME, "empty") is None
    assert await resolver.resolve(ACME, "unset") is None


async def test_env_resolver_honours_a_custom_prefix() -> None:
    resolver = EnvSecretResolver("MYAPP_", environ={"MYAPP_CRM": "a", "PSYCH_SECRET_CRM": "b"})
    resolved = await resolver.resolve(ACME, "crm")
    assert resolved is not None and resolved.secret.get_secret_value() == "a"
    assert "MYAPP_" in repr(resolver)


async def test_static_resolver_answers_by_name_and_hides_values() -> None:
    resolver = StaticSecretResolver({"crm": SECRET, "blank": ""})
    resolved = await resolver.resolve(ACME, "crm")
    assert resolved is not None
    assert resolved.identity == "crm"
    assert resolved.secret.get_secret_value() == SECRET
    assert await resolver.resolve(ACME, "missing") is None
    assert await resolver.resolve(ACME, "blank") is None
    assert SECRET not in repr(resolver)
    assert "crm" in repr(resolver)


async def test_both_resolvers_satisfy_the_port() -> None:
    resolvers: list[SecretResolver] = [
        EnvSecretResolver(environ={"PSYCH_SECRET_X": "1"}),
        StaticSecretResolver({"x": "1"}),
    ]
    for resolver in resolvers:
        resolved = await resolver.resolve(ACME, "x")
        assert resolved is not None and resolved.secret.get_secret_value() == "1"
