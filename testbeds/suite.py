"""Generated scenario suites: many emulated networks drawn from declared ranges by a seed.

A suite lives in ``configs/suites/NAME/``:

* ``suite.toml`` (the manifest): the seed, how many scenarios each set gets, the ranges they
  are drawn from (:class:`SuiteRanges`) and the shipped scenarios that form the ``named`` set.
  It is the generator's input: ``python3 -m testbeds.suite configs/suites/NAME/suite.toml``
  (re)writes the generated files, byte for byte the same for the same manifest.
* ``validation/*.toml``: for choosing configs, seeds, checkpoints and thresholds. Files whose
  name starts with ``hand-`` are hand-written (the generator leaves them alone).
* ``test/*.toml``: run once per candidate that is about to ship, never used to choose.

Every scenario is drawn independently from the same distribution; within a set the RTT and
the rate are stratified (a Latin hypercube on their log scales) so that both sets reach the
ends of the ranges. ``xfer evaluate --suite NAME --set validation|test|named`` runs a set.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xfer.tomlconf import check_unknown, read_toml

from .scenario import ScenarioError, load_scenario

SUITE_DIR = Path(__file__).resolve().parent.parent / "configs" / "suites"
SETS = ("validation", "test", "named")
GENERATOR_VERSION = 1


@dataclass(frozen=True)
class SuiteRanges:
    """The declared ranges a suite's scenarios are drawn from (all draws independent)."""

    rtt_ms: tuple[float, float] = (0.05, 250.0)
    """Base RTT range (ms), log-uniform (stratified within a set)."""
    native_rtt_below_ms: float = 0.5
    """RTTs drawn below this are emulated without a delay line (``rtt_ms = 0``): the veth
    path's own RTT, tens of µs. The delay line adds +0.1-0.3 ms of its own (docs/testbed.md),
    so it cannot emulate 50-500 µs faithfully."""
    rate_bps: tuple[float, float] = (50e6, 3e9)
    """Bottleneck rate range (bit/s), log-uniform (stratified). 3 Gbit/s is this 2-vCPU VM's
    calibrated ceiling for one path (docs/testbed.md)."""
    rate_max_with_competitor_bps: float = 2e9
    """Clamp when a competing transfer shares the link: its iperf3 needs CPU too."""
    max_bdp_bytes: float = 32e6
    """Largest rate x RTT (bytes): the rate is lowered to fit (1 Gbit/s at 250 ms). The delay
    line holds every packet in flight, and the socket buffers scale with the BDP."""
    loss_zero_share: float = 0.4
    """Share of scenarios with no random loss."""
    loss: tuple[float, float] = (1e-4, 1e-2)
    """Random per-packet loss of the others (fraction), log-uniform: 0.01 % to 1 %."""
    queue_bdp: tuple[float, float] = (0.1, 2.0)
    """Bottleneck queue in BDPs, log-uniform (at least 64 full-size packets, as the schema
    enforces)."""
    cap_share: float = 0.35
    """Share of scenarios with a per-stream cap (``xfer send --stream-rate``)."""
    cap_knee: tuple[float, float] = (3.0, 50.0)
    """Capped: rate / cap, the stream count that fills the link, log-uniform; a quarter of
    the capped scenarios use exactly 50 Mbit/s (the paper's cap) when the knee stays in range."""
    cc_weights: tuple[tuple[str, float], ...] = (("cubic", 0.7), ("reno", 0.15), ("bbr", 0.15))
    """Congestion control of the transfer (and the hosts' default)."""
    competitor_weights: tuple[tuple[str, float], ...] = (
        ("none", 0.35),
        ("long", 0.35),
        ("onoff", 0.3),
    )
    """No competitor, a long-lived competing transfer, or an on/off one."""
    competitor_cc_weights: tuple[tuple[str, float], ...] = (
        ("cubic", 0.4),
        ("reno", 0.2),
        ("bbr", 0.4),
    )
    """Congestion control of the competing transfer."""
    competitor_streams: tuple[int, int] = (1, 8)
    """Streams of the competing transfer (uniform integer)."""
    competitor_start_s: tuple[float, float] = (0.0, 12.0)
    """When the competitor starts (s after the transfer starts), uniform."""
    onoff_s: tuple[float, float] = (4.0, 12.0)
    """On and off period lengths of an on/off competitor (s), uniform each."""
    change_share: float = 0.25
    """Share of scenarios whose capacity changes once during the run."""
    change_at_s: tuple[float, float] = (8.0, 20.0)
    """When the capacity changes (s), uniform."""
    change_factor: tuple[float, float] = (0.3, 3.0)
    """New rate / old rate, log-uniform (then clamped to the rate range)."""
    duration_s: float = 30.0
    """Run length the schedules are drawn for (``xfer evaluate --duration``)."""


@dataclass(frozen=True)
class SuiteSpec:
    """A suite's manifest (``suite.toml``)."""

    name: str
    """Suite name (directory under configs/suites/, prefix of scenario names)."""
    seed: int
    """Seed of the generator: same manifest, same files."""
    validation: int
    """Generated scenarios in the validation set."""
    test: int
    """Generated scenarios in the test set."""
    named: tuple[str, ...]
    """Shipped scenarios (configs/testbeds/) forming the third set."""
    ranges: SuiteRanges = SuiteRanges()
    """Where the scenarios are drawn from."""
    version: int = GENERATOR_VERSION
    """Generator version the files were written with (a new version may draw differently)."""


# -- drawing ---------------------------------------------------------------------------------


def _log_uniform(rng: random.Random, lo: float, hi: float, u: float | None = None) -> float:
    u = rng.random() if u is None else u
    return math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))


def _choice(rng: random.Random, weights: tuple[tuple[str, float], ...]) -> str:
    x = rng.random() * sum(w for _, w in weights)
    for name, w in weights:
        x -= w
        if x < 0:
            return name
    return weights[-1][0]


def _strata(rng: random.Random, n: int) -> list[float]:
    """n points in [0, 1), one per stratum of width 1/n, in random order (a 1-D Latin
    hypercube)."""
    pts = [(k + rng.random()) / n for k in range(n)]
    rng.shuffle(pts)
    return pts


def _mbit(bps: float) -> str:
    return f"{max(1, round(bps / 1e6))}mbit"


@dataclass(frozen=True)
class Drawn:
    """One drawn network, before it is written as a scenario file."""

    name: str
    rtt_ms: float
    rate_bps: float
    loss: float
    queue_bdp: float
    cc: str
    stream_cap_bps: float | None
    competitor: str
    competitor_cc: str
    competitor_streams: int
    competitor_start_s: float
    on_s: float
    off_s: float
    change_at_s: float | None
    change_rate_bps: float | None


def _draw_one(rng: random.Random, r: SuiteRanges, name: str, u_rtt: float, u_rate: float) -> Drawn:
    rtt = round(_log_uniform(rng, *r.rtt_ms, u=u_rtt), 2)
    rate = _log_uniform(rng, *r.rate_bps, u=u_rate)
    competitor = _choice(rng, r.competitor_weights)
    if competitor != "none":
        rate = min(rate, r.rate_max_with_competitor_bps)
    rate = round(min(rate, r.max_bdp_bytes * 8 / (rtt / 1000)) / 1e6) * 1e6
    loss = 0.0 if rng.random() < r.loss_zero_share else float(f"{_log_uniform(rng, *r.loss):.2g}")
    queue = round(_log_uniform(rng, *r.queue_bdp), 2)
    cc = _choice(rng, r.cc_weights)
    cap = None
    if rng.random() < r.cap_share:
        knee = _log_uniform(rng, *r.cap_knee)
        if rng.random() < 0.25 and r.cap_knee[0] <= rate / 50e6 <= r.cap_knee[1]:
            cap = 50e6
        else:
            cap = max(1e6, round(rate / knee / 1e6) * 1e6)
    comp_cc = _choice(rng, r.competitor_cc_weights)
    comp_streams = rng.randint(*r.competitor_streams)
    comp_start = round(rng.uniform(*r.competitor_start_s), 1)
    on_s, off_s = round(rng.uniform(*r.onoff_s), 1), round(rng.uniform(*r.onoff_s), 1)
    change_at = change_rate = None
    if rng.random() < r.change_share:
        change_at = round(rng.uniform(*r.change_at_s), 1)
        new = rate * _log_uniform(rng, *r.change_factor)
        top = r.rate_max_with_competitor_bps if competitor != "none" else r.rate_bps[1]
        top = min(top, r.max_bdp_bytes * 8 / (rtt / 1000))
        change_rate = round(min(max(new, r.rate_bps[0]), top) / 1e6) * 1e6
    return Drawn(name, rtt, rate, loss, queue, cc, cap, competitor, comp_cc, comp_streams,
                 comp_start, on_s, off_s, change_at, change_rate)  # fmt: skip


def draw(spec: SuiteSpec) -> dict[str, list[Drawn]]:
    """The generated scenarios of each set, deterministic in ``spec``."""
    rng = random.Random(f"xfer-suite/{spec.version}/{spec.name}/{spec.seed}")
    out: dict[str, list[Drawn]] = {}
    for set_name, n, tag in (("validation", spec.validation, "v"), ("test", spec.test, "t")):
        u_rtt, u_rate = _strata(rng, n), _strata(rng, n)
        out[set_name] = [
            _draw_one(rng, spec.ranges, f"{spec.name}-{tag}{i + 1:02d}", u_rtt[i], u_rate[i])
            for i in range(n)
        ]
    return out


# -- writing ---------------------------------------------------------------------------------


def _describe(d: Drawn, r: SuiteRanges) -> str:
    rtt = f"{d.rtt_ms:g} ms" + (
        " (native, no delay line)" if d.rtt_ms < r.native_rtt_below_ms else ""
    )
    parts = [f"{d.rate_bps / 1e6:g} Mbit/s", f"RTT {rtt}", f"queue {d.queue_bdp:g} BDP", d.cc]
    if d.loss:
        parts.append(f"random loss {d.loss * 100:g} %")
    if d.stream_cap_bps:
        parts.append(f"{d.stream_cap_bps / 1e6:g} Mbit/s per stream")
    if d.competitor != "none":
        kind = "long-lived" if d.competitor == "long" else f"on/off {d.on_s:g}/{d.off_s:g} s"
        parts.append(
            f"{kind} {d.competitor_cc} competitor x{d.competitor_streams} from {d.competitor_start_s:g} s"
        )
    if d.change_at_s is not None and d.change_rate_bps is not None:
        parts.append(f"capacity -> {d.change_rate_bps / 1e6:g} Mbit/s at {d.change_at_s:g} s")
    return "Generated: " + ", ".join(parts) + "."


def scenario_toml(d: Drawn, r: SuiteRanges) -> str:
    """The scenario file of one drawn network (valid for :func:`testbeds.load_scenario`)."""
    rtt = 0 if d.rtt_ms < r.native_rtt_below_ms else d.rtt_ms
    lines = [f'name = "{d.name}"', f'description = "{_describe(d, r)}"', "",
             "[sysctl]", f'congestion_control = "{d.cc}"', "",
             "[[path]]", f'rate = "{_mbit(d.rate_bps)}"', f"rtt_ms = {rtt:g}",
             f'queue = "{d.queue_bdp:g}bdp"']  # fmt: skip
    if d.loss:
        lines.append(f"loss = {d.loss:g}")
    if d.competitor != "none":
        lines += ["", "[[background]]", 'name = "rival"', f'cc = "{d.competitor_cc}"',
                  f"streams = {d.competitor_streams}", f"start_s = {d.competitor_start_s:g}"]  # fmt: skip
        if d.competitor == "onoff":
            lines += [f"on_s = {d.on_s:g}", f"off_s = {d.off_s:g}"]
    if d.change_at_s is not None and d.change_rate_bps is not None:
        lines += ["", "[[schedule]]", f"at_s = {d.change_at_s:g}", 'action = "set_rate"',
                  "path = 1", f'rate = "{_mbit(d.change_rate_bps)}"']  # fmt: skip
    lines += ["", "[meta]", f"drawn_rtt_ms = {d.rtt_ms:g}"]
    if d.stream_cap_bps:
        lines.append(f'stream_rate = "{_mbit(d.stream_cap_bps)}"')
    return "\n".join(lines) + "\n"


def generate(spec: SuiteSpec) -> dict[str, dict[str, str]]:
    """``{set: {file name: TOML text}}`` of the generated scenarios."""
    return {
        s: {f"{d.name}.toml": scenario_toml(d, spec.ranges) for d in ds}
        for s, ds in draw(spec).items()
    }


def write(spec: SuiteSpec, root: Path) -> list[Path]:
    """Write the generated files under ``root/<set>/``; stale generated files of this suite
    are removed, hand-written ones (``hand-*.toml``) kept. Returns the files written."""
    written = []
    for set_name, files in generate(spec).items():
        d = root / set_name
        d.mkdir(parents=True, exist_ok=True)
        for old in d.glob(f"{spec.name}-*.toml"):
            if old.name not in files:
                old.unlink()
        for fname, text in files.items():
            (d / fname).write_text(text)
            written.append(d / fname)
    return written


# -- manifest --------------------------------------------------------------------------------


def _ranges_from(data: dict[str, Any], where: str) -> SuiteRanges:
    fields = {f.name: f for f in dataclasses.fields(SuiteRanges)}
    check_unknown(data, fields, where, ScenarioError)
    kw: dict[str, Any] = {}
    for key, value in data.items():
        default = getattr(SuiteRanges(), key)
        if isinstance(default, tuple) and default and isinstance(default[0], tuple):
            kw[key] = tuple((str(k), float(w)) for k, w in value.items())
        elif isinstance(default, tuple):
            kw[key] = tuple(type(default[0])(x) for x in value)
        else:
            kw[key] = float(value)
    return SuiteRanges(**kw)


def load_suite(name_or_path: str | Path) -> tuple[SuiteSpec, Path]:
    """The manifest of suite NAME (``configs/suites/NAME/suite.toml``) or of a manifest file
    or suite directory; returns it with the suite's directory."""
    p = Path(name_or_path)
    if p.is_dir():
        p = p / "suite.toml"
    elif p.suffix != ".toml":
        p = SUITE_DIR / str(name_or_path) / "suite.toml"

    def not_found() -> str:
        known = ", ".join(sorted(d.name for d in SUITE_DIR.glob("*") if d.is_dir())) or "none"
        return f"no suite {str(name_or_path)!r} ({p} not found; known: {known})"

    data = read_toml(p, ScenarioError, not_found)
    try:
        gen = data["generator"]
        spec = SuiteSpec(name=str(data["name"]), seed=int(gen["seed"]),
                         validation=int(gen["validation"]), test=int(gen["test"]),
                         named=tuple(data.get("named", ())),
                         ranges=_ranges_from(data.get("ranges", {}), f"{p}: [ranges]"),
                         version=int(gen.get("version", GENERATOR_VERSION)))  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise ScenarioError(f"{p}: bad manifest ({exc!r})") from None
    if spec.version != GENERATOR_VERSION:
        raise ScenarioError(
            f"{p}: generator version {spec.version}, this code writes {GENERATOR_VERSION}"
        )
    return spec, p.parent


def manifest_toml(spec: SuiteSpec) -> str:
    """The manifest text of ``spec`` (every range explicit)."""
    lines = [f'name = "{spec.name}"', f"named = [{', '.join(repr(n).replace(chr(39), chr(34)) for n in spec.named)}]", "",
             "[generator]", f"version = {spec.version}", f"seed = {spec.seed}",
             f"validation = {spec.validation}", f"test = {spec.test}", "", "[ranges]"]  # fmt: skip
    tables = []
    for f in dataclasses.fields(SuiteRanges):
        value = getattr(spec.ranges, f.name)
        if isinstance(value, tuple) and value and isinstance(value[0], tuple):
            tables += ["", f"[ranges.{f.name}]", *(f"{k} = {w:g}" for k, w in value)]
        elif isinstance(value, tuple):
            lines.append(f"{f.name} = [{', '.join(f'{x:g}' for x in value)}]")
        else:
            lines.append(f"{f.name} = {value:g}")
    return "\n".join(lines + tables) + "\n"


def suite_scenarios(name: str, set_name: str) -> list[str]:
    """Scenario specs of one set of suite ``name``: file paths for validation and test, the
    shipped names for ``named``. Every file is loaded, so a bad one fails here, not mid-run."""
    if set_name not in SETS:
        raise ScenarioError(f"unknown set {set_name!r}; choose one of {', '.join(SETS)}")
    spec, root = load_suite(name)
    if set_name == "named":
        names = list(spec.named)
    else:
        names = [str(p) for p in sorted((root / set_name).glob("*.toml"))]
    for n in names:
        load_scenario(n)
    if not names and set_name != "named" and getattr(spec, set_name) == 0:
        raise ScenarioError(
            f"suite {spec.name} has no {set_name} set ({set_name} = 0 in its manifest)"
        )
    if not names:
        raise ScenarioError(f"suite {spec.name}: the {set_name} set is empty (run the generator)")
    return names


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="(Re)write a suite's generated scenario files.")
    ap.add_argument("manifest", help="configs/suites/NAME/suite.toml")
    ap.add_argument("--check", action="store_true", help="Only compare; exit 1 on a difference.")
    args = ap.parse_args(argv)
    spec, root = load_suite(args.manifest)
    if args.check:
        diff = [f"{s}/{f}" for s, files in generate(spec).items() for f, text in files.items()
                if not (root / s / f).is_file() or (root / s / f).read_text() != text]  # fmt: skip
        print("\n".join(diff) or "up to date")
        raise SystemExit(1 if diff else 0)
    for p in write(spec, root):
        load_scenario(p)
    print(f"{spec.name}: {spec.validation} validation + {spec.test} test scenarios in {root}")


if __name__ == "__main__":
    main()
