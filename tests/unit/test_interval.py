"""The interval record is one frozen object until it is written; its ``--json-stream`` form is
the contract's (the same keys in the same order as before it was typed)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from policy.signals import PathSignal, SignalVector
from xfer.observe.interval import Interval


def sig() -> SignalVector:
    path = PathSignal("10.1.0.1->10.2.0.2", 2, 5e8, 0.001, 20.0)
    return SignalVector(1.0, 1.0, 4, 1e9, 9e8, 0.0, 20.0, 19.0, 0.1, 1.05, paths=(path,))


def test_the_json_stream_record_keeps_its_keys_and_order() -> None:
    rec = Interval(sig(), 1.5, 0.2, 3, bytes_done=10, cc="bbr", drain=True, bytes_total=99)
    before = {  # as the sender wrote it when the record was a dict, plus the API's total
        "event": "interval",
        **{k: v for k, v in sig().to_dict().items() if k != "cc"},
        "utility": 1.5,
        "reward": 0.2,
        "action": 3,
        "bytes_done": 10,
        "cc": "bbr",
        "drain": True,
        "bytes_total": 99,
    }
    assert json.dumps(rec.to_dict()) == json.dumps(before)


def test_memory_mode_records_have_no_total() -> None:
    d = Interval(sig(), 1.0, 0.0, None).to_dict()
    assert "bytes_total" not in d and d["action"] is None and d["drain"] is False


def test_an_interval_is_frozen() -> None:
    rec = Interval(sig(), 1.0, 0.0, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.action = 1  # type: ignore[misc]
    assert dataclasses.replace(rec, action=2).action == 2 and rec.action == 0
