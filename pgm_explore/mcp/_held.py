"""An async context manager held open in a background task, for notebooks and widgets.

A notebook runs each cell, and a widget each callback, in a task of its own, while the SDK's
clients are async context managers whose task groups must be left by the task that entered them:
an ``async with`` cannot span cells. :class:`Held` enters the context manager in a task of its own
and leaves it there when told to (or when the connection inside it fails), so that any later task
can use what it yielded. It needs a running asyncio loop (Jupyter's kernel has one).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, suppress
from typing import Any, Generic, TypeVar

__all__ = ["Held"]

T = TypeVar("T")


class Held(Generic[T]):
    """One context manager at a time, entered and left in a background task.

    >>> import asyncio, contextlib
    >>> @contextlib.asynccontextmanager
    ... async def resource():
    ...     yield "open"
    >>> async def main():
    ...     held = Held()
    ...     value = await held.open(resource())
    ...     before = held.is_open
    ...     await held.close()
    ...     return value, before, held.is_open
    >>> asyncio.run(main())
    ('open', True, False)
    """

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self.value: T | None = None
        self.error: BaseException | None = None
        """What ended the last context manager other than :meth:`close` (a connection that failed)."""

    @property
    def is_open(self) -> bool:
        return self._task is not None and not self._task.done()

    async def open(self, manager: AbstractAsyncContextManager[T], on_end: Callable[[], Any] | None = None) -> T:
        """Close what is held, then enter ``manager`` in a new task; what it yields (its error if
        entering failed, raised here). ``on_end`` is called when it is left, for whatever reason."""
        await self.close()
        ready, stop = asyncio.Event(), asyncio.Event()
        entered: list[T] = []

        async def hold() -> None:
            try:
                async with manager as value:
                    entered.append(value)
                    ready.set()
                    await stop.wait()
            finally:
                if on_end is not None:
                    on_end()

        task = asyncio.ensure_future(hold())
        waiter = asyncio.ensure_future(ready.wait())
        try:
            await asyncio.wait([task, waiter], return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if not entered:
            task.result()  # entering failed: its error, here, in the caller's task
            raise RuntimeError("the connection ended as it opened")  # pragma: no cover - hold() always yields or raises
        self._task, self._stop, self.value, self.error = task, stop, entered[0], None
        task.add_done_callback(self._ended)
        return entered[0]

    def _ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.error = task.exception()

    async def close(self) -> None:
        """Leave the context manager (in its own task) and wait until it is left; never raises for
        what leaving it raised (that is kept in :attr:`error`)."""
        task, stop = self._task, self._stop
        self._task = self._stop = None
        self.value = None
        if task is None or stop is None:
            return
        stop.set()
        with suppress(Exception):
            await task
