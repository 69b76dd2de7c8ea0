"""Which driver errors are outages: they become StoreUnavailable, everything else StoreError."""

import pymysql.err
import pytest

from psych_runtime import StoreError
from psych_runtime import StoreUnavailable
from psych_store_mysql import errors
from psych_store_mysql.settings import MySQLSettings

SETTINGS = MySQLSettings.from_url("mysql://app:hunter2@db.example:3306/app")


@pytest.mark.parametrize(
    "error",
    [
        pymysql.err.OperationalError(2013, "Lost connection to MySQL server during query"),
        pymysql.err.OperationalError(2006, "MySQL server has gone away"),
        pymysql.err.OperationalError(1927, "Connection was killed"),
        pymysql.err.OperationalError(1317, "Query execution was interrupted"),
        pymysql.err.OperationalError(4031, "The client was disconnected by the server"),
        # The reply stream fell out of step: the driver's own error carries no number.
        pymysql.err.InternalError("Packet sequence number wrong - got 1 expected 2"),
        pymysql.err.InterfaceError(0, "Not connected"),
        ConnectionResetError("reset by peer"),
    ],
)
def test_a_lost_or_interrupted_connection_is_store_unavailable(error: Exception) -> None:
    assert errors.connection_lost(error)
    translated = errors.translate(error, SETTINGS, "appending")
    assert isinstance(translated, StoreUnavailable)
    assert "hunter2" not in str(translated)


@pytest.mark.parametrize(
    "error",
    [
        pymysql.err.ProgrammingError(1064, "You have an error in your SQL syntax"),
        pymysql.err.IntegrityError(1062, "Duplicate entry"),
    ],
)
def test_a_refused_statement_is_a_plain_store_error(error: Exception) -> None:
    assert not errors.connection_lost(error)
    translated = errors.translate(error, SETTINGS, "appending")
    assert isinstance(translated, StoreError)
    assert not isinstance(translated, StoreUnavailable)


@pytest.mark.parametrize(
    "error",
    [
        pymysql.err.OperationalError(1213, "Deadlock found when trying to get lock"),
        pymysql.err.InternalError(1205, "Lock wait timeout exceeded"),
    ],
)
def test_contention_that_outlasts_the_retries_is_transient(error: Exception) -> None:
    # The transaction was rolled back whole: a Worker must hand the Run back, not fail it.
    assert not errors.connection_lost(error)
    translated = errors.translate(error, SETTINGS, "appending")
    assert isinstance(translated, StoreUnavailable)
    assert "busy" in str(translated)
