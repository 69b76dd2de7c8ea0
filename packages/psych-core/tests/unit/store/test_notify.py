"""LocalNotifier: generation-based wake-ups that cannot lose a signal."""

import asyncio

import pytest

from psych_runtime.store.notify import WORK
from psych_runtime.store.notify import LocalNotifier
from psych_runtime.store.notify import Notifier
from psych_runtime.store.notify import signal_run


def test_it_satisfies_the_notifier_protocol() -> None:
    assert isinstance(LocalNotifier(), Notifier)


def test_generations_count_signals_per_key() -> None:
    notifier = LocalNotifier()
    assert notifier.generation(WORK) == 0
    notifier.signal(WORK)
    notifier.signal(WORK)
    notifier.signal("run-1")
    assert notifier.generation(WORK) == 2
    assert notifier.generation("run-1") == 1
    assert notifier.generation("run-2") == 0


@pytest.mark.parametrize(("runnable", "work"), [(True, 1), (False, 0)], ids=["runnable", "not"])
def test_a_written_run_is_signalled_and_work_only_when_runnable(runnable: bool, work: int) -> None:
    notifier = LocalNotifier()
    signal_run(notifier, "run-1", runnable=runnable)
    assert notifier.generation("run-1") == 1
    assert notifier.generation(WORK) == work


async def test_a_signal_between_reading_and_waiting_is_not_lost() -> None:
    notifier = LocalNotifier()
    seen = notifier.generation("run-1")
    notifier.signal("run-1")
    # Even with no time to wait, the generation already moved past what was read.
    assert await notifier.wait("run-1", seen, 0)
    assert await notifier.wait("run-1", seen, 5)


async def test_a_wait_times_out_with_false() -> None:
    notifier = LocalNotifier()
    assert not await notifier.wait("run-1", notifier.generation("run-1"), 0.01)
    assert not await notifier.wait("run-1", notifier.generation("run-1"), 0)


async def test_a_waiter_wakes_when_another_task_signals() -> None:
    notifier = LocalNotifier()
    seen = notifier.generation(WORK)
    waiter = asyncio.create_task(notifier.wait(WORK, seen, 5))
    await asyncio.sleep(0)
    assert not waiter.done()
    notifier.signal(WORK)
    assert await asyncio.wait_for(waiter, 5)


async def test_every_waiter_on_the_key_wakes_and_others_do_not() -> None:
    notifier = LocalNotifier()
    waiters = [asyncio.create_task(notifier.wait("a", 0, 5)) for _ in range(3)]
    bystander = asyncio.create_task(notifier.wait("b", 0, 0.05))
    await asyncio.sleep(0)
    notifier.signal("a")
    assert await asyncio.gather(*waiters) == [True, True, True]
    assert not await bystander


async def test_finished_waits_leave_nothing_behind() -> None:
    notifier = LocalNotifier()
    await notifier.wait("a", 0, 0.01)
    woken = asyncio.create_task(notifier.wait("b", 0, 5))
    cancelled = asyncio.create_task(notifier.wait("c", 0, 5))
    await asyncio.sleep(0)
    notifier.signal("b")
    await woken
    cancelled.cancel()
    await asyncio.gather(cancelled, return_exceptions=True)
    assert notifier._waiters == {}


async def test_an_old_generation_is_satisfied_at_once() -> None:
    notifier = LocalNotifier()
    notifier.signal("a")
    notifier.signal("a")
    # A waiter that read generation 1 missed one signal and must not block.
    assert await notifier.wait("a", 1, 0)
    assert not await notifier.wait("a", 2, 0)


async def test_a_long_lived_notifier_forgets_old_keys() -> None:
    notifier = LocalNotifier(keys_kept=100)
    for n in range(10_000):
        notifier.signal(f"run-{n}")
    assert len(notifier._generations) <= 100
    assert notifier.generation("run-9999") >= 1


def test_a_forgotten_key_never_reads_as_a_value_it_had() -> None:
    """Readings of one key stay comparable: equal only if no signal came in between."""
    notifier = LocalNotifier(keys_kept=4)
    seen = {"a": [notifier.generation("a")]}
    for round_ in range(50):
        notifier.signal("a")
        seen["a"].append(notifier.generation("a"))
        for n in range(round_ % 7):  # push "a" out of the remembered keys now and then
            notifier.signal(f"other-{round_}-{n}")
        seen["a"].append(notifier.generation("a"))
    readings = seen["a"]
    # Never backwards, and every signal moved it (a reading right after a signal is
    # above every reading taken before it).
    assert readings == sorted(readings)
    assert all(readings[2 * i + 1] > readings[2 * i] for i in range(50))


def test_own_signal_is_exactly_one_step_while_remembered() -> None:
    notifier = LocalNotifier(keys_kept=8)
    notifier.signal("a")
    before = notifier.generation("a")
    notifier.signal("a")
    assert notifier.generation("a") == before + 1


async def test_a_waited_on_key_is_never_forgotten() -> None:
    notifier = LocalNotifier(keys_kept=4)
    notifier.signal("watched")
    seen = notifier.generation("watched")
    waiter = asyncio.create_task(notifier.wait("watched", seen, 5))
    await asyncio.sleep(0)
    for n in range(100):
        notifier.signal(f"other-{n}")
    assert "watched" in notifier._generations
    assert not waiter.done()
    notifier.signal("watched")
    assert await waiter


def test_keys_kept_must_be_positive() -> None:
    import pytest

    with pytest.raises(ValueError, match="keys_kept"):
        LocalNotifier(keys_kept=0)
