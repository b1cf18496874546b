"""xfer: bulk data mover over N parallel TCP/MPTCP streams.

Library API (blocking and async), for workflow engines::

    import xfer
    summary = xfer.send(["/data/run42"], "recv.example.org:5000", policy="ppo")
    assert summary["verified"]

    rx = xfer.Receiver(root="/srv/in", listen="127.0.0.1:5000")
    rx.start(); ...; rx.stop()

Heavy modules are imported lazily so that ``import xfer`` and ``xfer --help`` stay fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from xfer.api import Interval, Receiver, send, send_async, transfer

__all__ = ["Interval", "Receiver", "send", "send_async", "transfer", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("Interval", "Receiver", "send", "send_async", "transfer"):
        from xfer import api

        return getattr(api, name)
    raise AttributeError(f"module 'xfer' has no attribute {name!r}")
