"""Everything that turns a signal vector into a decision.

This package never imports the engine (``xfer``): the engine calls it through
:class:`policy.base.Controller`, and the simulator in ``train/`` uses it the same way.
"""

from policy.base import Controller, ControllerConfig, available, make_controller, register
from policy.signals import PathSignal, SignalVector

__all__ = [
    "Controller",
    "ControllerConfig",
    "PathSignal",
    "SignalVector",
    "available",
    "make_controller",
    "register",
]
