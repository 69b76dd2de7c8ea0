"""The public argument checks every Store makes before touching its backend."""

import pytest

import psych_runtime
from psych_contract import _data as data


def test_a_well_formed_batch_passes() -> None:
    run = data.header()
    psych_runtime.adapters.check_append_batch(run.run_id, 2, data.batch(run, 2, 3))


@pytest.mark.parametrize("expected_seq", [0, -1])
def test_expected_seq_below_one_is_refused(expected_seq: int) -> None:
    run = data.header()
    with pytest.raises(ValueError, match=r"^expected_seq starts at 1$"):
        psych_runtime.adapters.check_append_batch(run.run_id, expected_seq, data.batch(run, 1, 1))


def test_an_empty_batch_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^an append needs at least one record$"):
        psych_runtime.adapters.check_append_batch(data.header().run_id, 1, [])


def test_a_record_of_another_run_is_refused_by_position() -> None:
    run, other = data.header(), data.header()
    records = [*data.batch(run, 1, 1), *data.batch(other, 2, 1)]
    with pytest.raises(ValueError) as caught:
        psych_runtime.adapters.check_append_batch(run.run_id, 1, records)
    assert str(caught.value) == f"record 1 of the batch belongs to run {other.run_id!r}"


def test_a_gap_in_the_seqs_is_refused_with_the_seq_expected() -> None:
    run = data.header()
    records = [*data.batch(run, 1, 1), *data.batch(run, 3, 1)]
    with pytest.raises(ValueError) as caught:
        psych_runtime.adapters.check_append_batch(run.run_id, 1, records)
    assert str(caught.value) == "record 1 of the batch carries seq 3, expected 2"


def test_a_batch_not_starting_at_expected_seq_is_refused() -> None:
    run = data.header()
    with pytest.raises(ValueError) as caught:
        psych_runtime.adapters.check_append_batch(run.run_id, 4, data.batch(run, 5, 1))
    assert str(caught.value) == "record 0 of the batch carries seq 5, expected 4"


def test_a_matching_admission_passes() -> None:
    psych_runtime.adapters.check_admission(*data.admission())


def test_an_admission_record_of_another_run_is_refused() -> None:
    run, _ = data.admission()
    _, foreign = data.admission()
    with pytest.raises(ValueError, match=r"^the run_admitted record belongs to another Run$"):
        psych_runtime.adapters.check_admission(run, foreign)


def test_an_admission_record_not_at_seq_one_is_refused() -> None:
    run, admitted = data.admission()
    with pytest.raises(ValueError, match=r"^run_admitted must be written at seq 1$"):
        psych_runtime.adapters.check_admission(run, admitted.model_copy(update={"seq": 2}))


@pytest.mark.parametrize(("after", "limit"), [(0, None), (5, 0), (0, 10)])
def test_read_windows_at_or_above_zero_pass(after: int, limit: int | None) -> None:
    psych_runtime.adapters.check_read_window(after, limit)


def test_a_negative_after_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^after must not be negative$"):
        psych_runtime.adapters.check_read_window(-1, None)


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^limit must not be negative$"):
        psych_runtime.adapters.check_read_window(0, -1)


@pytest.mark.parametrize(
    ("text", "unencodable"),
    [("run-1", False), ("a\x00b", False), ("", False), ("a\ud800b", True), ("\udfff", True)],
    ids=["plain", "nul", "empty", "lone-high-surrogate", "lone-low-surrogate"],
)
def test_only_text_holding_a_lone_surrogate_is_unencodable(text: str, unencodable: bool) -> None:
    assert psych_runtime.adapters.unencodable(text) is unencodable
