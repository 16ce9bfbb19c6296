"""The write path shared by OTLP/HTTP and OTLP/gRPC: a bounded queue in front of one store writer.

Request threads decode and convert in parallel, then hand their batches to `Ingest.write`, which
returns only once they are in the WAL and fsync'd. One writer thread drains the queue and
appends everything waiting at once (group commit: one write and one fsync for many requests, with
no copy into one batch). When the queue is full, the store is slow, or a write fails, `write`
raises `Busy`, which the protocols answer with 503 / UNAVAILABLE and a retry delay, never with an
error the sender would treat as permanent.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from typing import Callable, Protocol, Sequence

import pyarrow as pa

from ._convert import Converted

log = logging.getLogger("agentotel_collector")


class Busy(Exception):
    """The collector cannot take this request now; the sender should retry later.

    `reason` is the stable token logged and counted for the refusal (see `_watch`).
    """

    def __init__(self, message: str, reason: str = "overloaded") -> None:
        super().__init__(message)
        self.reason = reason


def _store_failed(error: BaseException) -> Busy:
    """The refusal for batches the store failed to write (a thread's wait and an event loop's alike)."""
    return Busy(f"the store could not write: {error}", "store_failed")


def _settle(outcomes: list[tuple[asyncio.Future, BaseException | None]]) -> None:
    """On the event loop: each waiting request learns that its batches are durable, or why not."""
    for future, error in outcomes:
        if future.done():  # given up on already (a write timeout)
            continue
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(_store_failed(error))


class SpanStore(Protocol):
    """What the ingest path needs from `agentotel.store.StoreWriter`."""

    def append(self, batch: pa.RecordBatch | list[pa.RecordBatch], *, inputs: Sequence[list[str | None]] | None = None,
               outputs: Sequence[list[str | None]] | None = None) -> None: ...

    def close(self) -> None: ...


class _Ticket:
    __slots__ = ("converted", "rows", "size", "done", "error", "loop", "future")

    def __init__(self, converted: Converted, loop: asyncio.AbstractEventLoop | None = None,
                 future: asyncio.Future | None = None) -> None:
        self.converted: Converted | None = converted
        self.rows = converted.accepted
        self.size = converted.size  # the batches' buffers and the input texts: the memory the queue bounds
        self.done = threading.Event()
        self.error: BaseException | None = None
        self.loop, self.future = loop, future  # an event loop's request waits on `future` instead of `done`


class Ingest:
    """Durable writes with back-pressure: `write(batches)` returns once they are fsync'd, or raises Busy."""

    def __init__(
        self,
        store: SpanStore,
        *,
        max_queue_bytes: int,
        write_timeout_s: float,
        max_group_rows: int = 16384,
        max_group_bytes: int = 64 * 1024 * 1024,
        on_write: Callable[[float], None] | None = None,
    ) -> None:
        self._store = store
        self._max_queue_bytes = max_queue_bytes
        self._write_timeout_s = write_timeout_s
        self._max_group_rows = max_group_rows
        self._max_group_bytes = max_group_bytes
        self._on_write = on_write
        self._queue: deque[_Ticket] = deque()
        self._queued_bytes = 0
        self._cond = threading.Condition()
        self._closing = False
        self._healthy = True
        self._thread = threading.Thread(target=self._run, name="agentotel-collector-writer", daemon=True)
        self._thread.start()

    @property
    def queued_bytes(self) -> int:
        """Bytes of converted spans queued or being written now (what `max_queue_bytes` bounds)."""
        return self._queued_bytes

    @property
    def healthy(self) -> bool:
        """False after the last store write failed (until one succeeds again)."""
        return self._healthy

    @property
    def write_timeout_s(self) -> float:
        """The longest a write waits for the store before its sender is told to retry (`slow()`)."""
        return self._write_timeout_s

    def write(self, converted: Converted) -> None:
        """Return once `converted`'s rows are durable in the store; raise Busy when they could not be made durable in time."""
        ticket = self._submit(_Ticket(converted))
        if not ticket.done.wait(self._write_timeout_s):
            raise self.slow()
        self._check(ticket)

    def submit(self, converted: Converted, loop: asyncio.AbstractEventLoop, future: asyncio.Future) -> None:
        """Queue `converted`'s rows from any thread; `future`, of `loop`, gets None once they are durable, or Busy.

        Raises Busy at once when the queue is full or the collector is stopping. The writer wakes each
        loop once per group commit, not once per request. Bounding the wait (`write_timeout_s`) is the
        caller's: it sets `slow()` on the future, and the writer then leaves it alone.
        """
        self._submit(_Ticket(converted, loop, future))

    def slow(self) -> Busy:
        """The refusal for a write the store has not confirmed within `write_timeout_s`."""
        # The batch may still land; the sender's retry then makes a duplicate, which readers collapse.
        return Busy(f"the store did not confirm the write within {self._write_timeout_s:g} s", "store_slow")

    @staticmethod
    def _check(ticket: _Ticket) -> None:
        if ticket.error is not None:
            raise _store_failed(ticket.error)

    def _submit(self, ticket: _Ticket) -> _Ticket:
        """Queue a ticket for the writer thread; Busy when the queue is full or the collector is stopping."""
        size = ticket.size
        with self._cond:
            if self._closing:
                raise Busy("the collector is shutting down", "shutting_down")
            # One oversized batch is still accepted into an empty queue, or it could never be written.
            if self._queue and self._queued_bytes + size > self._max_queue_bytes:
                raise Busy("write queue is full", "queue_full")
            self._queue.append(ticket)
            self._queued_bytes += size
            self._cond.notify()
        return ticket

    def _take(self) -> list[_Ticket] | None:
        with self._cond:
            while not self._queue:
                if self._closing:
                    return None
                self._cond.wait()
            tickets = [self._queue.popleft()]
            rows, size = tickets[0].rows, tickets[0].size
            # Group commit: one write and one fsync for everything waiting, within bounds.
            while (
                self._queue
                and rows + self._queue[0].rows <= self._max_group_rows
                and size + self._queue[0].size <= self._max_group_bytes
            ):
                ticket = self._queue.popleft()
                rows += ticket.rows
                size += ticket.size
                tickets.append(ticket)
            return tickets

    def _run(self) -> None:
        while True:
            tickets = self._take()
            if tickets is None:
                return
            error: BaseException | None = None
            try:
                # The whole group in one append: one write and one fsync, and no copy into one batch. The
                # input texts go as the strings they were decoded to (`Converted`): never into Arrow and back.
                started = time.monotonic()
                group = [t.converted for t in tickets if t.converted is not None]
                self._store.append([batch for c in group for batch in c.batches],
                                   inputs=[values for c in group for values in c.inputs],
                                   outputs=[values for c in group for values in c.outputs])
                if self._on_write is not None:
                    self._on_write(time.monotonic() - started)
                self._healthy = True
            except Exception as exc:  # noqa: BLE001 - every failure becomes a retryable answer to the sender
                error = exc
                self._healthy = False
                log.error("agentotel-collector: store write failed: %r", exc)
            with self._cond:
                for ticket in tickets:
                    self._queued_bytes -= ticket.size
            waiting: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future, BaseException | None]]] = {}
            for ticket in tickets:
                ticket.error = error
                ticket.converted = None  # free memory now, not when the request ends
                ticket.done.set()
                if ticket.loop is not None:
                    waiting.setdefault(ticket.loop, []).append((ticket.future, error))
            # One wake-up per event loop for the whole group: each wake-up makes this thread and the loop's
            # hand the GIL over, which costs up to the switch interval while other threads decode.
            for loop, outcomes in waiting.items():
                try:
                    loop.call_soon_threadsafe(_settle, outcomes)
                except RuntimeError:  # the loop has closed: nobody waits any more
                    pass

    def close(self) -> None:
        """Stop taking writes, finish every queued one, and wait for the writer thread."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()
