"""The threads a store runs its SQL on, so the event loop never waits for the file.

sqlite3 calls block: a commit may wait for the file's write lock (up to the busy
timeout) or for an fsync. Every call therefore hops to a thread. There is one writer
thread, which owns the store's only writing connection, so this process never
competes with itself for the write lock; and a small pool of reader threads, each with
its own connection, so reads proceed in parallel with a write (WAL lets readers see
the last commit without waiting for the writer).

A connection is opened lazily, the first time its thread needs it, and checked once
against the schema version this release knows.
"""

import asyncio
import contextlib
import queue
import sqlite3
import threading
import weakref
from collections.abc import Callable
from functools import partial

from psych_runtime import StoreUnavailable
from psych_store_sqlite import schema
from psych_store_sqlite._connection import open_connection
from psych_store_sqlite.errors import unavailable
from psych_store_sqlite.settings import SqliteSettings

type _Job = Callable[[], None]
"""A queued call, already bound to the future that receives its outcome."""


class _Lane:
    """Threads that take calls from one queue and hand results back to the event loop.

    A plain queue and ``call_soon_threadsafe`` rather than a ``ThreadPoolExecutor``:
    measured here, the hop costs about half as much, and every append pays it once.
    The threads start on the first call and are daemons, so a store that was never
    closed does not keep the interpreter alive at exit (SQLite discards a transaction
    that a killed thread left uncommitted).
    """

    def __init__(self, name: str, size: int) -> None:
        self._name = name
        self._size = size
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._start_lock = threading.Lock()

    def submit[T](self, call: Callable[[], T]) -> "asyncio.Future[T]":
        """Queue ``call`` and return a future the event loop can await."""
        if not self._threads:
            self._start()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def job() -> None:
            try:
                result = call()
            except BaseException as exc:  # handed to the awaiting coroutine
                _hand_back(loop, _fail, future, exc)
            else:
                _hand_back(loop, _resolve, future, result)

        self._queue.put(job)
        return future

    def stop(self) -> None:
        """Finish every queued call, then end the threads (blocks; call off the loop)."""
        for thread in self.release():
            thread.join()

    def release(self) -> list[threading.Thread]:
        """Tell the threads to end after the calls already queued, without waiting."""
        with self._start_lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._queue.put(None)
        return threads

    def _start(self) -> None:
        with self._start_lock:
            if self._threads:
                return
            for index in range(self._size):
                thread = threading.Thread(
                    target=self._serve, name=f"{self._name}-{index}", daemon=True
                )
                thread.start()
                self._threads.append(thread)

    def _serve(self) -> None:
        while (job := self._queue.get()) is not None:
            job()
            # Drop the finished call now: a parked thread must not keep the store alive.
            del job


def _hand_back[F, V](
    loop: asyncio.AbstractEventLoop, setter: Callable[[F, V], None], future: F, value: V
) -> None:
    # RuntimeError: the loop closed while the call ran, so nobody is waiting for it.
    with contextlib.suppress(RuntimeError):
        loop.call_soon_threadsafe(setter, future, value)


def _resolve[T](future: "asyncio.Future[T]", result: T) -> None:
    if not future.done():  # the awaiting task may have been cancelled meanwhile
        future.set_result(result)


def _fail[T](future: "asyncio.Future[T]", exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


def _release_lanes(writer: _Lane, readers: _Lane | None) -> None:
    writer.release()
    if readers is not None:
        readers.release()


class _ThreadState(threading.local):
    """What each lane thread remembers about its own connection."""

    conn: sqlite3.Connection | None = None
    verified: bool = False


class Lanes:
    """One writer thread and ``settings.readers`` reader threads over one database file.

    ``on_open``, when given, is called on each connection just after it is opened and
    configured, on the thread that will use it.
    """

    def __init__(
        self,
        settings: SqliteSettings,
        on_open: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self._settings = settings
        self._on_open = on_open
        self._where = str(settings.path)
        self._writer = _Lane("psych-sqlite-writer", 1)
        self._readers = _Lane("psych-sqlite-reader", settings.readers) if settings.readers else None
        self._state = _ThreadState()
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()
        self._closed = False
        # A store dropped without close() must not leave its threads parked forever.
        weakref.finalize(self, _release_lanes, self._writer, self._readers)

    async def write[T](self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``operation`` on the writer thread inside ``BEGIN IMMEDIATE .. COMMIT``.

        ``BEGIN IMMEDIATE`` takes the file's write lock before the first read, so the
        checks an operation makes still hold when it writes, across processes too. An
        exception from ``operation`` rolls the transaction back.
        """
        return await self._submit(self._writer, partial(self._transaction, operation))

    async def read[T](self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``operation`` on a reader thread (the writer when there are none).

        Keep a read to one statement, or it may see two different snapshots.
        """
        lane = self._readers if self._readers is not None else self._writer
        return await self._submit(lane, partial(self._plain, operation, True))

    async def maintain[T](self, operation: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``operation`` on the writer thread with no transaction and no schema check.

        For migrations and inspection, which must work on a file that is not (yet) at
        this release's schema version and manage their own transactions.
        """
        return await self._submit(self._writer, partial(self._plain, operation, False))

    async def close(self) -> None:
        """Let queued work finish, stop the threads and close every connection."""
        if self._closed:
            return
        self._closed = True
        await asyncio.to_thread(self._shutdown)

    # --- on the lane threads -----------------------------------------------------------

    def _connection(self, verify: bool) -> sqlite3.Connection:
        state = self._state
        conn = state.conn
        if conn is None:
            conn = open_connection(self._settings)
            if self._on_open is not None:
                self._on_open(conn)
            with self._opened_lock:
                self._opened.append(conn)
            state.conn = conn
            state.verified = False
        if verify and not state.verified:
            schema.verify(conn, self._where)
            state.verified = True
        return conn

    def _plain[T](self, operation: Callable[[sqlite3.Connection], T], verify: bool) -> T:
        try:
            return operation(self._connection(verify))
        except sqlite3.Error as exc:
            raise unavailable(self._settings, exc) from exc

    def _transaction[T](self, operation: Callable[[sqlite3.Connection], T]) -> T:
        try:
            conn = self._connection(True)
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = operation(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise
        except sqlite3.Error as exc:
            raise unavailable(self._settings, exc) from exc
        return result

    def _shutdown(self) -> None:
        self._writer.stop()
        if self._readers is not None:
            self._readers.stop()
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()

    # --- on the event loop -------------------------------------------------------------

    async def _submit[T](self, lane: _Lane, call: Callable[[], T]) -> T:
        if self._closed:
            raise StoreUnavailable(f"the SQLite store for {self._where} is closed")
        return await lane.submit(call)


__all__ = ["Lanes"]
