"""lab.trace: a block's per-MI traces as text (what a round commits beside its verdicts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lab.trace import main, trace_lines
from policy.utility import utility


def _log(path: Path, rows: list[dict[str, Any]]) -> Path:
    """A sender's ``--json-stream`` log of these MIs: 1-s MIs, their utility as it records it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    events: list[dict[str, Any]] = [{"event": "start"}]
    for r in rows:
        u = utility(r["throughput_bps"], r["streams"], r["loss_rate"])
        events.append({"event": "interval", "mi_s": 1.0, "utility": u, **r})
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_a_run_reads_as_its_counts_utilities_throughputs_and_losses(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"streams": 2, "throughput_bps": 100e6, "loss_rate": 0.01, "min_rtt_ms": 0.5},
        {"streams": 7, "throughput_bps": 300e6, "loss_rate": None, "min_rtt_ms": 0.4},
        {"streams": 7, "throughput_bps": 1e6, "loss_rate": 0.5, "drain": True},
    ]
    lines = trace_lines(_log(tmp_path / "a.jsonl", rows), "a")
    u1, u2 = utility(100e6, 2, 0.01), utility(300e6, 7, None)
    assert lines[0] == f"a: 2 MIs, mean U {(u1 + u2) / 2:.1f}, mean N 4.5, min RTT 0.400 ms"
    assert lines[1].split() == ["N", "2", "7"]  # the drain MI is not shown
    assert lines[2].split() == ["U", f"{u1:.0f}", f"{u2:.0f}"]
    assert lines[3].split() == ["T", "100", "300"]
    assert lines[4].split() == ["loss%", "1.0", "0.0"]


def test_the_command_prints_matching_runs_in_path_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    row = {"streams": 1, "throughput_bps": 10e6, "loss_rate": 0.0}
    _log(tmp_path / "s2" / "logs" / "ppo" / "r1-t1.jsonl", [row])
    _log(tmp_path / "s1" / "logs" / "ppo" / "r1-t1.jsonl", [row, row])
    assert main([str(tmp_path)]) == 0
    heads = [x for x in capsys.readouterr().out.splitlines() if not x.startswith(" ")]
    assert [h.split(":")[0] for h in heads] == [
        "s1/logs/ppo/r1-t1.jsonl",
        "s2/logs/ppo/r1-t1.jsonl",
    ]
    assert "min RTT unknown ms" in heads[0]
    assert main([str(tmp_path), "--match", "s2/"]) == 0
    assert capsys.readouterr().out.count("MIs, mean U") == 1


def test_a_directory_without_logs_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(tmp_path)]) == 1
    assert "no run logs" in capsys.readouterr().err
    assert main([str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err
