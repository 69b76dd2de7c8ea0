"""The one wording every adapter with a schema uses to refuse a version it does not match."""

import pytest

from psych_runtime.adapters.store import SchemaNotMigrated
from psych_runtime.adapters.store import SchemaTooNew
from psych_runtime.adapters.store import check_schema_version
from psych_runtime.adapters.store import schema_too_new


def test_the_version_a_release_needs_passes() -> None:
    check_schema_version("db 'x'", 3, needs=3, package="psych-store-acme")


def test_a_database_never_migrated_is_told_how_to_migrate() -> None:
    with pytest.raises(SchemaNotMigrated) as refused:
        check_schema_version("db 'x'", 0, needs=3, package="psych-store-acme")
    assert str(refused.value) == (
        "db 'x' has no Psych schema yet; this release of psych-store-acme needs version 3: "
        "call `await store.migrate()` or open it with open_store(url, migrate=True)"
    )


def test_an_older_schema_names_its_version() -> None:
    with pytest.raises(SchemaNotMigrated, match=r"^db 'x' is at schema version 2; .* version 3:"):
        check_schema_version("db 'x'", 2, needs=3, package="psych-store-acme")


def test_a_newer_schema_says_which_package_to_upgrade() -> None:
    with pytest.raises(SchemaTooNew) as refused:
        check_schema_version("db 'x'", 4, needs=3, package="psych-store-acme")
    assert str(refused.value) == str(
        schema_too_new("db 'x'", 4, knows=3, package="psych-store-acme")
    )
    assert str(refused.value) == (
        "db 'x' is at schema version 4, but this release of psych-store-acme knows versions "
        "up to 3; upgrade psych-store-acme (an older release must not write to a newer schema)"
    )
