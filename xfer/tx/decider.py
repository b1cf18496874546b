"""The controller, off the event loop.

``controller.decide`` may take long: a BO fit, a PPO forward pass on a busy machine, a
``stdin`` controller waiting for its driver's line. Run inline in the MI loop it would stop
the loop from reading ACKs, hedging and ending the transfer meanwhile. The :class:`Decider`
runs it in one worker thread (decisions stay in order, one at a time); the loop collects the
result when it is there, and an MI that ends while the controller is still busy gets no
decision of its own (the late one applies when it arrives).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from policy.signals import SignalVector


class Decider:
    """One controller, asked in its own thread; at most one question outstanding."""

    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="xfer-decide")
        self._future: asyncio.Future[int] | None = None
        self._context: Any = None

    @property
    def busy(self) -> bool:
        """A decision was asked for and not yet collected."""
        return self._future is not None

    def start(self, signals: SignalVector, context: Any) -> None:
        """Ask for a decision on ``signals``; ``context`` comes back with it."""
        assert self._future is None, "one decision at a time"
        loop = asyncio.get_running_loop()
        self._future = loop.run_in_executor(self._pool, self.controller.decide, signals)
        self._context = context

    def waitable(self) -> set[asyncio.Future[int]]:
        """The outstanding decision, for ``asyncio.wait`` (empty when none)."""
        return {self._future} if self._future is not None else set()

    def take(self) -> tuple[int, Any] | None:
        """``(target, context)`` once the decision is there (the controller's exception is
        raised here), else None."""
        fut = self._future
        if fut is None or not fut.done():
            return None
        self._future = None
        return int(fut.result()), self._context

    def close(self) -> None:
        """Stop taking questions; a decision still running is abandoned, not waited for."""
        if self._future is not None:
            self._future.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
