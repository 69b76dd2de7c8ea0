"""LocalNotifier: generation-based wake-ups that cannot lose a signal."""

import asyncio

from psych_runtime.store.notify import WORK, LocalNotifier, Notifier


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
