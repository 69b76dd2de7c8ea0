from psych_store_postgres.schema import LATEST_VERSION
from psych_store_postgres.schema import MIGRATIONS
from psych_store_postgres.schema import quote_ident


def test_versions_start_at_one_and_have_no_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert MIGRATIONS[-1].version == LATEST_VERSION


def test_every_statement_is_qualified_by_the_schema() -> None:
    rendered = MIGRATIONS[0].render("deploy_a")
    assert "{s}" not in rendered
    assert '"deploy_a".psych_runs' in rendered
    assert '"deploy_a".psych_records' in rendered


def test_identifiers_are_quoted() -> None:
    assert quote_ident('we"ird') == '"we""ird"'
