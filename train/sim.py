"""A fast, vectorized model of N parallel TCP streams sharing a bottleneck, at MI granularity.

Every array has one entry per environment (shape ``(E,)``); one :meth:`Simulator.step` moves
all E environments by one monitoring interval. The model (see ``docs/learning.md``):

* **Bottleneck**: capacity C (goodput efficiency 0.95 for headers), a drop-tail queue of
  ``buffer_frac`` x BDP, non-responsive on/off background load taking a fraction of C, and
  optionally a competing TCP transfer with its own streams (on/off as well).
* **Per-stream limits**: the pacing cap (the paper's 50 Mbit/s throttling), the socket
  buffer (``wmax / RTT``) and, for loss-based congestion control, the Mathis limit under
  random loss (``k * 1.22 * MSS / (RTT * sqrt(p))``, k = 1 for reno and 1.16 for cubic
  (its Reno-friendly mode rules at these windows; fitted to xfer's streams on the testbed:
  10.3 Mbit/s per stream at 50 ms and 0.1 % loss, 1 to 64 streams); BBR ignores random loss).
* **Sharing**: water-filling of the bottleneck among all streams (TCP per-flow fairness).
  A saturated link with few loss-based streams and a shallow buffer is under-used
  (``1 - a (1 - buffer_frac sqrt(N))^2``, the sawtooth), which is why a few streams help
  even without caps.
* **Congestion loss** when saturated: ``p = A (N / W)^1.5`` with W = C x RTT / MSS the
  path's window in packets (A = 2.47 for cubic). The Mathis relation solved for each
  stream's share would give ``(k 1.22 N / W)^2``; the testbed's drop-tail queue (all
  retransmissions counted, as the engine does) loses more and grows more slowly with N:
  fitted on the wan-1g-50ms, paper-fig1 and fast-3g-10ms sweeps, N = 8 to 64, within
  0.5-1.2x where the N^2 form was 0.05-0.3x (``docs/learning.md``). BBR: a loss rate
  growing with log N in shallow buffers. **RTT** = base + queue delay, the queue
  filling with load and stream count.
* **Dynamics and noise**: new streams ramp up over a few RTTs (slow start), the capacity
  may change once mid-episode, throughput has multiplicative noise, losses are Poisson
  counts of segments, RTT samples are noisy.

It also knows the truth: :meth:`Simulator.steady` gives the steady-state throughput and
loss for any stream count, so :meth:`Simulator.optimum` finds the best fixed N and its
utility U* (used to normalise the reward and to evaluate policies).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import numpy.typing as npt

from policy.signals import SignalVector
from policy.utility import UtilityConfig, utility_values

F64 = npt.NDArray[np.float64]
MSS_BITS = 1448 * 8
EFFICIENCY = 0.95
CC_NAMES = ("reno", "cubic", "bbr")
_MATHIS_K = np.array([1.0, 1.16, np.inf])
"""Nominal Mathis constant (x 1.22) of reno, cubic, bbr under random loss (training
randomises it by ``SimConfig.mathis_scale``)."""
_CONG_A = np.array([2.47 / 1.75**1.5, 2.47])
"""Constant A of the congestion loss ``A (N / W)^1.5`` for reno and cubic. Cubic's is fitted
on the testbed (20 saturated sweep points, 3 scenarios); reno's is scaled by cubic's larger
window for a given loss (1.75 in the Mathis form), not measured."""
_CONG_EXP = 1.5
"""Exponent of N / W in the congestion loss (testbed: free fit 1.2 to 1.5 by scenario)."""
_SAWTOOTH_A = np.array([0.25, 0.15, 0.05])
_BACKOFF = np.array([0.5, 0.3])
"""Multiplicative window decrease of reno and cubic at a loss event."""


@dataclass(frozen=True, slots=True)
class SimConfig:
    """Domain randomisation ranges of the simulator (one draw per episode and environment)."""

    capacity_bps: tuple[float, float] = (50e6, 10e9)
    """Bottleneck capacity range, drawn log-uniformly."""
    rtt_ms: tuple[float, float] = (2.0, 200.0)
    """Base RTT range, drawn log-uniformly."""
    loss: tuple[float, float] = (1e-5, 1e-2)
    """Random loss range (log-uniform) for the environments that have random loss."""
    p_no_loss: float = 0.35
    """Fraction of environments without random loss."""
    p_stream_cap: float = 0.4
    """Fraction of environments with a per-stream pacing cap."""
    cap_divisor: tuple[float, float] = (1.5, 45.0)
    """Capped environments: cap = capacity / U(divisor), so the knee lies at 2..45 streams."""
    p_cap_50mbit: float = 0.25
    """Of the capped environments, the fraction capped at exactly 50 Mbit/s (the paper)."""
    wmax_bytes: tuple[float, float] = (4e6, 64e6)
    """Socket buffer maximum range (log-uniform): the per-stream window limit."""
    buffer_frac: tuple[float, float] = (0.1, 1.0)
    """Bottleneck queue size as a fraction of the BDP."""
    cc_probs: tuple[float, float, float] = (0.15, 0.55, 0.30)
    """Probabilities of reno, cubic, bbr."""
    p_background: float = 0.5
    """Fraction of environments with on/off non-responsive background load."""
    background_load: tuple[float, float] = (0.05, 0.8)
    """Background load when on, fraction of capacity."""
    p_competing: float = 0.35
    """Fraction of environments with a competing TCP transfer (on/off)."""
    competing_streams: tuple[int, int] = (1, 24)
    """Streams of the competing transfer."""
    p_competing_paced: float = 0.5
    """Fraction of competing transfers whose streams are paced: at our cap when we have one
    (two transfers with the same ``--stream-rate``, the paper's Fig. 3), else at capacity /
    U(``cap_divisor``). Their streams then sit at the cap as ours do, so a link can be exactly
    full with no loss and no queue, and when they leave nothing changes for us: only probing
    with more streams tells (testbed fig3)."""
    p_competing_at_start: float = 0.5
    """Probability that the competing transfer is already running when an episode starts (a
    transfer joining a busy link must probe: from its first MIs it cannot tell a link it
    fills alone from one a competitor fills)."""
    p_capacity_change: float = 0.3
    """Fraction of environments whose capacity changes once mid-episode."""
    capacity_change: tuple[float, float] = (0.25, 4.0)
    """Factor of the capacity change (log-uniform; result clipped to the capacity range)."""
    noise: tuple[float, float] = (0.005, 0.06)
    """Relative throughput measurement noise (standard deviation) range."""
    loss_scale: tuple[float, float] = (0.5, 2.0)
    """Multiplier on congestion loss (log-uniform): uncertainty of the loss model."""
    mathis_scale: tuple[float, float] = (0.7 / 1.16, 1.75 / 1.16)
    """Multiplier on the nominal Mathis limit under random loss (uniform): cubic's k spans 0.7
    to 1.75 (xfer's streams measured 1.16 on the testbed, single iperf3 runs up to 1.75 and
    more; train/calibrate.py, docs/learning.md)."""
    ss_burst: tuple[float, float] = (0.03, 0.15)
    """Overshoot of paced (capped) streams added to a saturated link (uniform): a loss burst
    of ``ss_burst x added / streams on the link`` in that MI, a third of it in the next.
    Testbed, paper-fig1 (50 Mbit/s per stream): 17 -> 22 gave 0.9-2.6 % (0.04-0.11),
    20 -> 21 0.5-0.6 % (0.10-0.12)."""
    ss_burst_elastic: tuple[float, float] = (0.005, 0.04)
    """The same for streams not held by a cap (their slow start yields as the queue fills).
    Testbed, wan-1g-50ms: 2 -> 3, 2 -> 7, 8 -> 13, 16 -> 21 gave 0.007-0.022, once 0.067."""
    start_burst: tuple[float, float] = (0.0, 0.08)
    """Loss in a transfer's first MI when its own streams fill the link (all of them in slow
    start at once; uniform). Testbed: 0.6-7.6 % (wan-1g-50ms with 2, 8 and 16 streams,
    paper-fig1 with 20); none where the streams do not fill the link."""
    ss_overshoot: tuple[float, float] = (1.5, 6.0)
    """Under random loss (reno, cubic): a new stream's slow start runs far past its Mathis
    rate before the first loss, carrying ``ss_overshoot`` times it in its first MI (uniform;
    the excess decays by ``overshoot_decay`` per MI). Testbed: 2 streams carried 4x (lossy
    1 Gbit/s, 50 ms, 0.1 %) and 5x (500 Mbit/s, 20 ms, 0.05 %) their steady rate in the
    first MI; streams added one MI later about 5x."""
    overshoot_decay: tuple[float, float] = (0.3, 0.7)
    """Per-MI decay of the slow-start excess (uniform)."""
    sawtooth: bool = True
    """Congestion loss in sawtooth events with a queue dip after each
    (:meth:`Simulator._sawtooth`). False: a constant loss rate per MI and a steady queue, the
    simulator the shipped policy was trained on (``configs/train/default.toml``; its draws
    are then exactly those of that simulator)."""
    queue_dip: tuple[float, float] = (0.5, 1.0)
    """Depth of the sawtooth's queue dip after a congestion event, as a fraction of the
    modelled one (uniform; see :meth:`Simulator._sawtooth`)."""
    p_lan: float = 0.0
    """Fraction of environments on a LAN: base RTT drawn from ``lan_rtt_ms`` instead of
    ``rtt_ms``, RTT samples with absolute jitter from ``lan_jitter_ms`` (the testbed's veth
    path measures 20-60 us with tens of us of scheduling jitter: issue #16, situation 4).
    0 (the default) draws nothing, so older configs keep their exact networks."""
    lan_rtt_ms: tuple[float, float] = (0.02, 1.0)
    """LAN base RTT range, ms (log-uniform)."""
    lan_jitter_ms: tuple[float, float] = (0.01, 0.2)
    """LAN RTT sample jitter range, ms (uniform; the scale of a half-normal per sample)."""
    p_comp_bbr: float = 0.0
    """Of the competing transfers, the fraction that are BBR in a shallow queue: while on they
    take what our loss-based streams leave and hold a loss rate of ``comp_bbr_loss`` on the
    link that our streams did not cause and cannot lower by leaving (issue #16, situation
    3: 8 BBR streams, 1 Gbit/s, 0.1 BDP queue, ~5 % loss). Our streams are then held at
    their Mathis rate at that loss. 0 draws nothing."""
    comp_bbr_loss: tuple[float, float] = (0.005, 0.08)
    """Loss rate a BBR competitor holds on the link, log-uniform."""
    comp_bbr_burst: tuple[float, float] = (0.0, 0.0)
    """Loss burst in the MI after we add streams while a BBR competitor holds the shallow
    queue (uniform; a third carries over to the next MI, as every burst). Measured on
    ``hand-bbr-shared-1g`` (2026-11-25): 0.10-0.18 in the first MI whether 1, 5 or 10 streams
    were added, against 0-3.5 % at one stream; the simulator's share-based slow-start burst
    gives 0.02 there. (0, 0), the default, draws nothing."""
    comp_bbr_burst_step: tuple[float, float] = (0.0, 0.0)
    """Loss burst per added stream beside a BBR competitor, on top of ``comp_bbr_burst``
    (uniform): the burst grows with the size of the add. Measured on ``hand-bbr-shared-1g``
    (round 20's M20, fixed schedules and GD, 2 runs): over the MI before, +1 stream +2.6 %,
    +2..5 +5.8 %, +10 +15 %, gone the next MI; ``comp_bbr_burst`` 0.012 + 0.014 per stream
    fits all three. (0, 0), the default, draws nothing."""
    comp_bbr_burst_bdp: tuple[float, float] = (0.0, 0.0)
    """BDP in packets at and above which the bursts beside a BBR competitor (start and add)
    are full size (log-uniform); below it they shrink in proportion: a slow start overshoots
    by about its window, a small share of an MI's packets on a short path. Measured (M20): a
    30-ms path (2500 packets) bursts fully, gen-v3 v04 (1.8 ms, 120 packets) about +2 % for
    one MI, v08 (0.5 ms, 48 packets) not at all. (0, 0), the default, draws nothing (full
    size everywhere)."""
    comp_bbr_start_burst: tuple[float, float] = (0.0, 0.0)
    """Loss in a transfer's first MI while a BBR competitor holds the shallow queue (uniform;
    the slow start of every stream at once). Measured on ``hand-bbr-shared-1g``: 0.15-0.18
    with 2 streams, where the simulator's start burst is 0 (our streams alone do not fill
    the link). Both the shipped policy and a candidate replayed on that trace say -5 after
    it and +5 when its loss reads 0.02. (0, 0), the default, draws nothing."""
    comp_bbr_start_thr: tuple[float, float] = (1.0, 1.0)
    """Throughput of a transfer's first MI beside a BBR competitor, as a multiple of the
    modelled one (uniform). Measured on ``hand-bbr-shared-1g`` (five runs, 2 streams):
    0.45-2.2 times the 2-stream steady rate, as the slow start's losses fall; so one stream
    afterwards reads 0.2-1.0 of the maximum seen, where the model gives about 0.2 (a
    policy trained there climbs on the first, sits on the second). (1, 1): nothing drawn."""
    comp_bbr_recovery: bool = True
    """Bursts beside a BBR competitor cost throughput for several MIs (``slow_recovery``).
    False: not while the competitor is on (on the testbed one stream carries 14-19 Mbit/s
    in the MI after the 15 % start burst, its steady rate)."""
    comp_bbr_share_loss: tuple[float, float] = (0.0, 0.0)
    """Loss our paced BBR streams add beside a BBR competitor that is on, per unit of our share
    of the link (uniform): ``comp_bbr_loss`` plus this times our throughput over the
    capacity. Measured (round 30, ``calib-bbrcomp30`` and round 29's gen-v6-v01; five worlds,
    27 points up to a share of 0.55): 0.053 per unit of share (rms 0.20 points of loss), e.g.
    gen-v6-v01 1.7 % at one stream to 4.3 % at 16 (a share of 0.53). Above a share of about
    0.6 the loss rises faster (7.6-12.4 % at 0.62-0.88), which this term does not model.
    Beside unpaced streams the loss stays at the rival's (round 29: 10-13 % from 1 to 16
    streams), so the term applies to paced BBR streams only. (0, 0), the default, draws
    nothing."""
    comp_bbr_join_rtts: tuple[float, float] = (0.0, 0.0)
    """How slowly our added BBR streams reach their share beside a BBR competitor that is on
    (uniform, in round trips): the ramp of a rate increase takes at least this many RTTs as
    its time constant instead of slow start's ``0.5 RTT log2(window)``. On the testbed
    (round 30's D2, gen-v6-v01: 107 ms, a 6-stream BBR rival) streams added beside the rival
    reach their rate 2-3 MIs after they join (BBR's bandwidth probing converges over its
    8-RTT gain cycles), where the simulator showed about 70 % of the gain in the join MI and
    all of it in the next: a policy that judges an add by its first MIs there sees too little
    of it and walks it back. Applied to
    BBR competitors only, and to our own streams whatever their cc (the testbed's worlds of
    this kind run ours on BBR). (0, 0), the default, draws nothing."""
    comp_bbr_flip_p: tuple[float, float] | None = None
    """Per-MI on/off switch probability of BBR competitors (uniform), when they should be
    longer-lived than ``comp_flip_p`` (the testbed's BBR rival runs throughout). None (the
    default) keeps ``comp_flip_p`` and draws nothing."""
    queue_floor_pkts: tuple[float, float] = (0.0, 0.0)
    """Smallest bottleneck queue in packets (uniform): a router's, or the testbed's 64-packet
    floor, holds at least this many whatever the BDP. Where ``buffer_frac`` x BDP is smaller
    (short RTTs: a LAN's BDP is a few packets) the queue is the floor: more queueing delay,
    and congestion loss spread over a window of BDP + queue rather than the BDP alone
    (``NetParams.queue_extra``). Measured beside loss-based competitors at 0.02-4 ms
    (``configs/experiments/calib-comp/``, docs/learning.md). (0, 0), the default, draws
    nothing."""
    cong_loss_sat: tuple[float, float] = (0.0, 0.0)
    """Level at which congestion loss saturates (uniform): ``p / (1 + p / sat)`` instead of
    the ``A (N / W)^1.5`` fit growing to the 30 % clip when each flow holds only a few
    packets (many flows in a LAN's window). (0, 0), the default, draws nothing."""
    slow_recovery: bool = False
    """Loss bursts (our slow start, the start burst, a competitor joining) cost throughput
    for several MIs: with ``k`` losses per stream in the burst each flow's window is cut to
    ``(1 - b)^k`` (cubic b = 0.3, reno 0.5, k up to 3) and the link is under-used by
    ``1 - (1 - b)^k (1 + queue)`` of it until the windows grow back, in cubic's ``cbrt(b w /
    0.4)`` s or reno's ``b w RTT`` (w the window in packets): long at long RTTs (issue #16,
    situation 2). Streams added afterwards start fresh. A competing transfer that switches on
    adds a slow-start burst of ``comp_join_burst``, and on/off competitors switch with a per-MI
    probability from ``comp_flip_p``. False (the default) draws nothing."""
    comp_join_burst: tuple[float, float] = (0.01, 0.08)
    """Loss burst on a saturated link when a loss-based competing transfer switches on
    (uniform)."""
    comp_flip_p: tuple[float, float] = (0.025, 0.15)
    """Per-MI probability that a competing transfer switches on or off (uniform; without
    ``slow_recovery``: 0.025, a mean period of 40 MIs; the testbed's on/off competitors switch
    every 4-12 s)."""
    p_comp_peer: float = 0.0
    """Of the loss-based competing transfers, the fraction that are *peers*: another transfer
    like ours (its streams paced at our cap, or unpaced where we are) that picks its own
    stream count, moving towards its best response to ours in the paper's steps (+-5 when
    at least 5 away, else +-1), once per MI with a probability from ``comp_peer_move_p``.
    One that is running at the start holds ``competing_streams``; one that joins opens
    ``comp_peer_join`` streams and climbs (testbed fig3: three copies of one policy, each the
    others' competitor; issue #16 round 11, policies trained with fixed competitors
    drifted apart there). 0 draws nothing."""
    comp_peer_move_p: tuple[float, float] = (0.3, 0.9)
    """Per-MI probability that a peer takes a step (uniform): how quickly it responds."""
    comp_peer_join: int = 2
    """Streams a peer opens when it switches on (the engine's initial stream count)."""
    bbr_own_loss: str = "legacy"
    """How much loss our own streams on BBR cause once they fill the link (nobody else's):
    ``"legacy"`` is round 3's ``0.003 (1.5 - queue) log2(1 + N)``, fitted on deep queues
    (0.6-1.9 %); ``"r18"`` is the testbed's (``configs/experiments/calib-bbr/``, gen-v3's
    sweeps; docs/results/issue16-round18): BBR's in-flight cap of about two BDPs overflows any
    queue below 1-2 BDPs once two or more streams share it, 6-8 % at 2 streams, 10-13 % at
    4-16, 13-25 % at 8-32 on shallow LAN and 163-ms paths, nothing at a 2-BDP queue
    (:data:`BBR_OWN_MODELS`). Drawn nothing: only the formula differs."""
    max_streams: int = 64
    """Largest stream count (the optimum search and the action clip)."""
    mi_s: float = 1.0
    """Monitoring interval, seconds."""

    def __post_init__(self) -> None:
        if self.bbr_own_loss not in BBR_OWN_MODELS:
            raise ValueError(
                f"bbr_own_loss must be one of {', '.join(BBR_OWN_MODELS)}, "
                f"got {self.bbr_own_loss!r}"
            )


@dataclass
class NetParams:
    """One drawn network per environment (arrays of shape ``(E,)``)."""

    capacity: F64
    rtt: F64
    loss: F64
    cap: F64
    wmax: F64
    buffer: F64
    cc: npt.NDArray[np.int64]
    bg_level: F64
    bg_on_p: F64
    bg_off_p: F64
    comp_streams: F64
    comp_cap: F64
    cap_change_t: F64
    cap_change_f: F64
    noise: F64
    loss_scale: F64
    mathis_scale: F64
    ss_burst: F64
    ss_burst_elastic: F64
    start_burst: F64
    ss_overshoot: F64
    overshoot_decay: F64
    queue_dip: F64
    rtt_jitter: F64
    """Absolute RTT sample jitter scale, seconds (LAN environments; else 0)."""
    comp_loss: F64
    """Loss rate a BBR competitor holds on the link while on (else 0)."""
    comp_bbr_burst: F64
    """Loss burst when we add streams while a BBR competitor is on (else 0)."""
    comp_bbr_start_burst: F64
    """Loss burst of the first MI while a BBR competitor is on (else 0)."""
    comp_bbr_burst_step: F64
    """Loss burst per added stream while a BBR competitor is on (else 0)."""
    comp_bbr_burst_bdp: F64
    """BDP in packets below which the bursts beside a BBR competitor shrink (0: never)."""
    comp_bbr_start_thr: F64
    """Throughput factor of the first MI while a BBR competitor is on (else 1)."""
    comp_bbr_recovery: F64
    """0 where bursts beside a BBR competitor that is on cost no throughput afterwards, else 1."""
    comp_bbr_share: F64
    """Loss our paced BBR streams add beside a BBR competitor, per unit of our share of the
    link (``SimConfig.comp_bbr_share_loss``; else 0)."""
    comp_bbr_join: F64
    """Smallest ramp time constant of our rate beside a BBR competitor that is on, in RTTs
    (``SimConfig.comp_bbr_join_rtts``; else 0)."""
    comp_join_burst: F64
    """Loss burst when the competitor switches on (``SimConfig.slow_recovery``; else 0)."""
    comp_flip_p: F64
    """Per-MI probability that the competitor switches on or off."""
    slow_recovery: F64
    """1 where loss bursts cost throughput until the windows grow back, else 0."""
    queue_extra: F64
    """Queue added by ``SimConfig.queue_floor_pkts`` beyond the drawn ``buffer_frac``, in
    BDPs (already included in ``buffer``; else 0)."""
    cong_sat: F64
    """Saturation level of congestion loss (``SimConfig.cong_loss_sat``; inf: none)."""
    comp_peer: F64
    """Per-MI step probability of a peer competitor (``SimConfig.p_comp_peer``; else 0)."""
    bbr_own: F64
    """Index into :data:`BBR_OWN_MODELS` of the own-BBR loss model (``SimConfig.bbr_own_loss``)."""

    def take(self, i: int) -> dict[str, float]:
        """Environment ``i``'s parameters as a dict (for logs and evaluation tables)."""
        return {f.name: float(getattr(self, f.name)[i]) for f in fields(self)}


@dataclass
class Measurement:
    """What one MI measured, per environment (the :class:`SignalVector` fields as arrays)."""

    throughput_bps: F64
    loss_rate: F64
    rtt_ms: F64
    min_rtt_ms: F64
    rtt_gradient: F64
    rtt_ratio: F64
    streams: F64
    retrans_segs: F64
    data_segs_out: F64
    cc: npt.NDArray[np.int64]
    """Our streams' congestion control, an index into :data:`CC_NAMES` (the network's)."""

    def signal(self, i: int, t: float, mi_s: float) -> SignalVector:
        """Environment ``i``'s measurement as the engine's :class:`SignalVector`."""
        thr = float(self.throughput_bps[i])
        return SignalVector(
            t=t,
            mi_s=mi_s,
            streams=int(self.streams[i]),
            throughput_bps=thr,
            goodput_bps=thr,
            loss_rate=float(self.loss_rate[i]),
            rtt_ms=float(self.rtt_ms[i]),
            min_rtt_ms=float(self.min_rtt_ms[i]),
            rtt_gradient=float(self.rtt_gradient[i]),
            rtt_ratio=float(self.rtt_ratio[i]),
            bytes_acked=int(thr * mi_s / 8),
            retrans_segs=int(self.retrans_segs[i]),
            data_segs_out=int(self.data_segs_out[i]),
            cc=CC_NAMES[int(self.cc[i])],
        )


def _logu(rng: np.random.Generator, lo: float, hi: float, n: int) -> F64:
    return np.exp(rng.uniform(np.log(lo), np.log(hi), n))


def sample_params(cfg: SimConfig, rng: np.random.Generator, n: int) -> NetParams:
    """Draw ``n`` random networks from the ranges in ``cfg``."""
    cap = _logu(rng, *cfg.capacity_bps, n)
    capped = rng.random(n) < cfg.p_stream_cap
    per_stream = cap / rng.uniform(*cfg.cap_divisor, n)
    per_stream = np.where(rng.random(n) < cfg.p_cap_50mbit, 50e6, per_stream)
    has_bg = rng.random(n) < cfg.p_background
    has_comp = rng.random(n) < cfg.p_competing
    changes = rng.random(n) < cfg.p_capacity_change
    p = NetParams(
        capacity=cap,
        rtt=_logu(rng, *cfg.rtt_ms, n) / 1e3,
        loss=np.where(rng.random(n) < cfg.p_no_loss, 0.0, _logu(rng, *cfg.loss, n)),
        cap=np.where(capped, np.maximum(per_stream, 2e6), np.inf),
        wmax=_logu(rng, *cfg.wmax_bytes, n),
        buffer=rng.uniform(*cfg.buffer_frac, n),
        cc=rng.choice(3, size=n, p=np.asarray(cfg.cc_probs)),
        bg_level=np.where(has_bg, rng.uniform(*cfg.background_load, n), 0.0),
        bg_on_p=rng.uniform(0.02, 0.15, n),
        bg_off_p=rng.uniform(0.02, 0.15, n),
        comp_streams=np.where(has_comp, rng.integers(*cfg.competing_streams, n, endpoint=True), 0),
        comp_cap=np.where(
            has_comp & (rng.random(n) < cfg.p_competing_paced),
            np.where(capped, np.maximum(per_stream, 2e6), cap / rng.uniform(*cfg.cap_divisor, n)),
            np.inf,
        ),
        cap_change_t=np.where(changes, rng.uniform(8, 80, n), np.inf),
        cap_change_f=_logu(rng, *cfg.capacity_change, n),
        noise=rng.uniform(*cfg.noise, n),
        loss_scale=_logu(rng, *cfg.loss_scale, n),
        mathis_scale=rng.uniform(*cfg.mathis_scale, n),
        ss_burst=rng.uniform(*cfg.ss_burst, n),
        ss_burst_elastic=rng.uniform(*cfg.ss_burst_elastic, n),
        start_burst=rng.uniform(*cfg.start_burst, n),
        ss_overshoot=rng.uniform(*cfg.ss_overshoot, n),
        overshoot_decay=rng.uniform(*cfg.overshoot_decay, n),
        queue_dip=rng.uniform(*cfg.queue_dip, n) if cfg.sawtooth else np.ones(n),
        rtt_jitter=np.zeros(n),
        comp_loss=np.zeros(n),
        comp_bbr_burst=np.zeros(n),
        comp_bbr_start_burst=np.zeros(n),
        comp_bbr_burst_step=np.zeros(n),
        comp_bbr_burst_bdp=np.zeros(n),
        comp_bbr_start_thr=np.ones(n),
        comp_bbr_recovery=np.ones(n),
        comp_bbr_share=np.zeros(n),
        comp_bbr_join=np.zeros(n),
        comp_join_burst=np.zeros(n),
        comp_flip_p=np.full(n, 0.025),
        slow_recovery=np.zeros(n),
        queue_extra=np.zeros(n),
        cong_sat=np.full(n, np.inf),
        comp_peer=np.zeros(n),
        bbr_own=np.full(n, float(BBR_OWN_MODELS.index(cfg.bbr_own_loss))),
    )
    _sample_robust(cfg, rng, p, has_comp)
    _sample_queue_floor(cfg, rng, p)
    return p


def _sample_queue_floor(cfg: SimConfig, rng: np.random.Generator, p: NetParams) -> None:
    """The queue floor and loss saturation (round 8), drawn last and only when enabled, so
    configs without them draw the same networks as before."""
    n = len(p.capacity)
    if cfg.queue_floor_pkts[1] > 0:
        floor = rng.uniform(*cfg.queue_floor_pkts, n)
        need = floor * MSS_BITS / (p.capacity * p.rtt)  # the floor in BDPs
        p.queue_extra = np.maximum(need - p.buffer, 0.0)
        p.buffer = p.buffer + p.queue_extra
    if cfg.cong_loss_sat[1] > 0:
        p.cong_sat = rng.uniform(*cfg.cong_loss_sat, n)


def _sample_robust(
    cfg: SimConfig, rng: np.random.Generator, p: NetParams, has_comp: npt.NDArray[np.bool_]
) -> None:
    """The world features of issue #16 (LAN RTTs, BBR competitors' loss, slow recovery), drawn
    after everything else and only when enabled, so configs without them draw the same
    networks as before."""
    n = len(p.capacity)
    if cfg.p_lan > 0:
        lan = rng.random(n) < cfg.p_lan
        p.rtt = np.where(lan, _logu(rng, *cfg.lan_rtt_ms, n) / 1e3, p.rtt)
        p.rtt_jitter = np.where(lan, rng.uniform(*cfg.lan_jitter_ms, n) / 1e3, 0.0)
    if cfg.p_comp_bbr > 0:
        bbr = has_comp & (rng.random(n) < cfg.p_comp_bbr)
        p.comp_loss = np.where(bbr, _logu(rng, *cfg.comp_bbr_loss, n), 0.0)
        p.comp_cap = np.where(bbr, np.inf, p.comp_cap)
    if cfg.slow_recovery:
        p.slow_recovery = np.ones(n)
        p.comp_join_burst = np.where(p.comp_loss > 0, 0.0, rng.uniform(*cfg.comp_join_burst, n))
        p.comp_flip_p = rng.uniform(*cfg.comp_flip_p, n)
    if cfg.p_comp_bbr > 0:  # after slow_recovery's draws, which keep their order
        bbr = p.comp_loss > 0
        if cfg.comp_bbr_burst[1] > 0:
            p.comp_bbr_burst = np.where(bbr, rng.uniform(*cfg.comp_bbr_burst, n), 0.0)
        if cfg.comp_bbr_start_burst[1] > 0:
            p.comp_bbr_start_burst = np.where(bbr, rng.uniform(*cfg.comp_bbr_start_burst, n), 0.0)
        if cfg.comp_bbr_start_thr != (1.0, 1.0):
            p.comp_bbr_start_thr = np.where(bbr, rng.uniform(*cfg.comp_bbr_start_thr, n), 1.0)
        if not cfg.comp_bbr_recovery:
            p.comp_bbr_recovery = np.where(bbr, 0.0, 1.0)
        if cfg.comp_bbr_flip_p is not None:
            p.comp_flip_p = np.where(bbr, rng.uniform(*cfg.comp_bbr_flip_p, n), p.comp_flip_p)
    if cfg.p_comp_peer > 0:  # last: every earlier draw keeps its order
        peer = has_comp & (p.comp_loss <= 0) & (rng.random(n) < cfg.p_comp_peer)
        p.comp_peer = np.where(peer, rng.uniform(*cfg.comp_peer_move_p, n), 0.0)
        p.comp_cap = np.where(peer, p.cap, p.comp_cap)  # paced as ours are, or not at all
    if cfg.p_comp_bbr > 0:  # round 21's graded bursts and later, after everything above
        _sample_bbr_late(cfg, rng, p)


def _sample_bbr_late(cfg: SimConfig, rng: np.random.Generator, p: NetParams) -> None:
    """BBR competitors' terms added from round 21 on, each drawn only when enabled and after
    the ones before it (so older configs draw the same networks)."""
    n = len(p.capacity)
    bbr = p.comp_loss > 0
    if cfg.comp_bbr_burst_step[1] > 0:
        step = rng.uniform(*cfg.comp_bbr_burst_step, n)
        p.comp_bbr_burst_step = np.where(bbr, step, 0.0)
    if cfg.comp_bbr_burst_bdp[1] > 0:
        p.comp_bbr_burst_bdp = np.where(bbr, _logu(rng, *cfg.comp_bbr_burst_bdp, n), 0.0)
    if cfg.comp_bbr_share_loss[1] > 0:  # round 30, after everything above
        share = rng.uniform(*cfg.comp_bbr_share_loss, n)
        p.comp_bbr_share = np.where(bbr, share, 0.0)
    if cfg.comp_bbr_join_rtts[1] > 0:  # round 32, after everything above
        join = rng.uniform(*cfg.comp_bbr_join_rtts, n)
        p.comp_bbr_join = np.where(bbr, join, 0.0)


def fixed_params(n_envs: int = 1, **values: float) -> NetParams:
    """A deterministic network (no randomness) for tests and named evaluation settings.

    Defaults: 1 Gbit/s, 40 ms, no loss, no cap, 16 MB socket buffer, buffer 0.5 BDP, cubic,
    no background, no competition, no capacity change, 1 % noise.
    """
    base: dict[str, float] = dict(
        capacity=1e9, rtt=0.04, loss=0.0, cap=np.inf, wmax=16e6, buffer=0.5, cc=1,
        bg_level=0.0, bg_on_p=0.0, bg_off_p=1.0, comp_streams=0, comp_cap=np.inf, cap_change_t=np.inf,
        cap_change_f=1.0, noise=0.01, loss_scale=1.0, mathis_scale=1.0, ss_burst=0.0,
        ss_burst_elastic=0.0, start_burst=0.0, ss_overshoot=1.0, overshoot_decay=0.5,
        queue_dip=1.0, rtt_jitter=0.0, comp_loss=0.0, comp_bbr_burst=0.0,
        comp_bbr_start_burst=0.0, comp_bbr_burst_step=0.0, comp_bbr_burst_bdp=0.0,
        comp_bbr_start_thr=1.0, comp_bbr_recovery=1.0, comp_bbr_share=0.0,
        comp_bbr_join=0.0, comp_join_burst=0.0, comp_flip_p=0.025, slow_recovery=0.0, queue_extra=0.0,
        cong_sat=np.inf, comp_peer=0.0, bbr_own=0.0,
    )  # fmt: skip
    unknown = set(values) - set(base)
    if unknown:
        raise ValueError(f"fixed_params: unknown network parameters {sorted(unknown)}")
    base.update(values)
    arrays = {
        k: np.full(n_envs, v, dtype=np.int64 if k == "cc" else np.float64) for k, v in base.items()
    }
    return NetParams(**arrays)  # type: ignore[arg-type]


def _bbr_loss_legacy(queue: F64, n: F64) -> F64:
    """Round 3's own-BBR loss, fitted on deep queues."""
    return 0.003 * np.maximum(0.0, 1.5 - queue) * np.log2(1.0 + n)


def _bbr_loss_r18(queue: F64, n: F64) -> F64:
    """Own-BBR loss fitted to the testbed (round 18): ``0.045 log2(1 + N)`` less 0.04 below
    two streams (one BBR stream alone overflows nothing but a very shallow queue: 0-2.6 %),
    full up to 0.75 BDP of queue and gone at 2 BDPs (BBR's in-flight cap).

    Measured (mean loss of MIs 4-20 at a fixed N, alone, no random loss) against this fit:
    500 Mbit/s 30 ms, queue 0.25 / 0.5 / 1 / 2 BDP: N = 2: 8.4 / 8.0 / 6.3 / 0 % (fit 7.1 /
    7.1 / 5.7 / 0), N = 4: 11.0 / 11.4 / 9.7 / 0 (10.4 / 10.4 / 8.3 / 0), N = 16: 13.1 / 12.5
    / 10.3 / 0 (18.4 / 18.4 / 14.7 / 0); 300 Mbit/s 120 ms 0.5 BDP: 5.9 / 9.4 / 10.0 / 12.3 at
    2 / 4 / 8 / 16; gen-v3-v10 (0.27 BDP, 3.9 ms): 6.7 / 13.4 / 17.5 / 23.0 at 4 / 8 / 16 /
    32; gen-v3-v06 (0.29 BDP, 163 ms): 14.6 / 11.1 / 18.9 / 25.5 at 2 / 4 / 8 / 16."""
    by_n = 0.045 * np.log2(1.0 + n) - 0.04 * np.clip(2.0 - n, 0.0, 1.0)
    return np.maximum(by_n, 0.0) * np.clip((2.0 - queue) / 1.25, 0.0, 1.0)


BBR_OWN_MODELS: tuple[str, ...] = ("legacy", "r18")
"""Names of the own-BBR loss models (``SimConfig.bbr_own_loss``), by ``NetParams.bbr_own``."""


def uncapped_rate(p: NetParams, comp_on: F64 | None = None) -> F64:
    """A stream's rate limit without the pacing cap: socket buffer and, under random loss
    (plus a BBR competitor's loss while it is on), the Mathis limit (a competing loss-based
    transfer's streams are limited this way)."""
    loss = p.loss if comp_on is None else p.loss + p.comp_loss * comp_on
    mathis = np.where(
        loss > 0,
        p.mathis_scale * _MATHIS_K[p.cc] * 1.22 * MSS_BITS / (p.rtt * np.sqrt(np.maximum(loss, 1e-12))),
        np.inf,
    )  # fmt: skip
    return np.minimum(p.wmax * 8 / p.rtt, mathis)


def steady(
    p: NetParams, capacity: F64, bg_on: F64, comp_on: F64, n: F64
) -> tuple[F64, F64, F64, F64]:
    """Steady state for stream counts ``n`` (shape ``(E,)`` or ``(E, K)``).

    Returns (our throughput bit/s, loss rate, RTT s, our per-stream demand limit bit/s).
    """
    col = (lambda a: a[:, None]) if n.ndim == 2 else (lambda a: a)
    rtt, cc, beta = col(p.rtt), col(p.cc), col(p.buffer)
    c_avail = col(capacity * EFFICIENCY * (1.0 - p.bg_level * bg_on))
    ext = col(p.comp_loss * comp_on)  # loss a BBR competitor holds on the link
    r_comp = col(uncapped_rate(p, comp_on))
    r = np.minimum(col(p.cap), r_comp)
    # A competing stream's limit; a BBR competitor ignores loss and takes what is left.
    r_m = np.where(ext > 0, c_avail, np.minimum(col(p.comp_cap), col(uncapped_rate(p))))
    m = col(p.comp_streams * comp_on)
    n_tot = n + m
    sat_util = (
        1.0 - _SAWTOOTH_A[cc] * np.maximum(0.0, 1.0 - beta * np.sqrt(np.maximum(n_tot, 1))) ** 2
    )
    c_sat = c_avail * sat_util
    demand = n * r + m * r_m
    saturated = demand > c_sat
    share = c_sat / np.maximum(n_tot, 1)
    ours_sat = np.where(
        share <= np.minimum(r, r_m),
        n * share,
        np.where(r <= r_m, n * r, np.maximum(c_sat - m * r_m, 0.0)),
    )
    ours = np.where(saturated, np.minimum(ours_sat, n * r), n * r)
    # Our paced BBR streams beside a BBR competitor add loss with their share of the link.
    paced_bbr = (cc == 2) & np.isfinite(col(p.cap)) & (ext > 0)
    ext = ext + np.where(paced_bbr, col(p.comp_bbr_share) * ours / np.maximum(c_avail, 1.0), 0.0)
    # Congestion loss and queueing.
    # The window the flows share: the BDP, plus the queue a floor adds beyond the fitted range.
    window = c_sat * rtt * (1.0 + col(p.queue_extra))
    p_loss_based = _CONG_A[np.minimum(cc, 1)] * (MSS_BITS * n_tot / window) ** _CONG_EXP
    # Under random loss the windows are already held down; the queue only adds the loss that
    # brings the Mathis demand down to the capacity (p grows with the square of the excess).
    p_excess = col(p.loss) * np.maximum((demand / c_sat) ** 2 - 1.0, 0.0)
    p_loss_based = np.where(col(p.loss) > 0, np.minimum(p_loss_based, p_excess), p_loss_based)
    # Where a queue floor holds many BDPs (a LAN), random loss keeps each loss-based window
    # at its Mathis size, and the windows sit in the queue: they fill it in proportion and
    # only overflow it (congestion loss) once they add up to more than the BDP plus the
    # queue (testbed, calib-lone: 0.25 % at 1 stream beside 0.26 % random, 2-7 % at 4-16).
    # ``pipe`` is the windows over BDP + queue; the loss ramps in over its first doubling.
    by_window = (col(p.loss) > 0) & (col(p.queue_extra) > 0) & (cc != 2)
    over = demand / np.maximum(c_sat, 1e-9)  # the windows in BDPs
    pipe = over / (1.0 + beta)
    p_loss_based = np.where(by_window, p_loss_based * np.clip(pipe - 1.0, 0.0, 1.0), p_loss_based)
    p_bbr = np.where(col(p.bbr_own) > 0, _bbr_loss_r18(beta, n_tot), _bbr_loss_legacy(beta, n_tot))
    p_cong = np.where(saturated, np.where(cc == 2, p_bbr, p_loss_based) * col(p.loss_scale), 0.0)
    # With a BBR competitor the queue is the competitor's: the loss is its, whatever we do.
    p_cong = np.where(ext > 0, 0.0, p_cong)
    # Saturation; with no saturation drawn (inf) this is p_cong itself, bit for bit. It is the
    # loss-based windows' (a few packets each in a LAN's window); the r18 BBR fit is measured
    # loss already, up to 23 % at 32 streams, so it is not saturated again.
    fitted_bbr = (cc == 2) & (col(p.bbr_own) > 0)
    p_cong = np.where(fitted_bbr, p_cong, p_cong / (1.0 + p_cong / col(p.cong_sat)))
    loss = np.clip(col(p.loss) + ext + p_cong, 0.0, 0.3)
    rho = np.minimum(demand / c_avail, 1.0)
    fill_sat = np.where(
        cc == 2, np.minimum(1.0, 0.2 + 0.05 * n_tot), 1.0 - 0.5 / np.sqrt(np.maximum(n_tot, 1))
    )
    fill = np.where(saturated, fill_sat, 0.3 * rho**8)
    # The windows' share of the queue (full once they overflow it), where the floor applies.
    fill_win = np.clip((over - 1.0) / np.maximum(beta, 1e-9), 0.0, 1.0)
    fill = np.where(saturated & by_window, fill_win, fill)
    return ours, loss, rtt * (1.0 + beta * fill), r


class Simulator:
    """E environments stepped together, one MI per :meth:`step`."""

    def __init__(self, n_envs: int, cfg: SimConfig | None = None, seed: int | None = None) -> None:
        self.cfg = cfg or SimConfig()
        self.n_envs = n_envs
        self.rng = np.random.default_rng(seed)
        self.ucfg = UtilityConfig()
        self.params = sample_params(self.cfg, self.rng, n_envs)
        z = np.zeros(n_envs)
        self.t, self.n, self.rate, self.rtt_prev = z.copy(), z.copy(), z.copy(), z.copy()
        self.min_rtt, self.bg_on, self.comp_on = z.copy(), z.copy(), z.copy()
        self.burst, self.boost, self.qdip = z.copy(), z.copy(), z.copy()
        self.deficit, self.joined = z.copy(), z.copy()
        self.capacity = self.params.capacity.copy()

    def reset(self, mask: npt.NDArray[np.bool_], params: NetParams | None = None) -> None:
        """Start a new episode in the environments of ``mask`` (new random network unless
        ``params`` gives one for each selected environment)."""
        k = int(mask.sum())
        if k == 0:
            return
        new = params or sample_params(self.cfg, self.rng, k)
        for f in fields(NetParams):
            getattr(self.params, f.name)[mask] = getattr(new, f.name)
        self.t[mask] = 0.0
        self.n[mask] = 0.0
        self.rate[mask] = 0.0
        self.burst[mask] = 0.0
        self.boost[mask] = 0.0
        self.qdip[mask] = 0.0
        self.deficit[mask] = 0.0
        self.joined[mask] = 0.0
        self.rtt_prev[mask] = self.params.rtt[mask]
        self.min_rtt[mask] = np.inf
        self.capacity[mask] = self.params.capacity[mask]
        self.bg_on[mask] = (self.rng.random(k) < 0.5) * (self.params.bg_level[mask] > 0)
        self.comp_on[mask] = (self.rng.random(k) < self.cfg.p_competing_at_start) * (
            self.params.comp_streams[mask] > 0
        )

    def _advance_world(self) -> None:
        """Background on/off, competing transfer on/off, the capacity change."""
        p, u = self.params, self.rng.random((2, self.n_envs))
        self.bg_on = np.where(self.bg_on > 0, u[0] >= p.bg_off_p, u[0] < p.bg_on_p) * (
            p.bg_level > 0
        )
        flip = u[1] < p.comp_flip_p
        was_on = self.comp_on
        self.comp_on = np.where(flip, 1.0 - self.comp_on, self.comp_on) * (p.comp_streams > 0)
        self.joined = ((self.comp_on > 0) & (was_on <= 0)).astype(np.float64)
        if np.any(p.comp_peer > 0):
            self._move_peers(was_on)
        change = (self.t >= p.cap_change_t) & (self.t - 1.0 < p.cap_change_t)
        lo, hi = self.cfg.capacity_bps
        self.capacity = np.where(
            change, np.clip(p.capacity * p.cap_change_f, lo, hi), self.capacity
        )

    def state_names(self) -> list[str]:
        """What one MI may change in an environment: every per-environment array this
        simulator holds (derived from its attributes, so one added later is covered; the
        network's parameters are restored apart, since a peer competitor moves
        ``params.comp_streams``)."""
        return [
            k
            for k, v in vars(self).items()
            if isinstance(v, np.ndarray) and v.shape[:1] == (self.n_envs,)
        ]

    def step(
        self,
        streams: npt.NDArray[np.integer] | F64,
        mask: npt.NDArray[np.bool_] | None = None,
    ) -> Measurement:
        """Run one MI with ``streams`` streams in each environment; return what it measured.

        ``mask``: only the environments it selects advance; the others keep their state as
        it was (their entries of the returned measurement mean nothing). The random draws are
        the same either way, so a mask changes no selected environment's episode."""
        if mask is None or mask.all():
            return self._step(streams)
        keep = ~mask
        saved = {name: getattr(self, name)[keep].copy() for name in self.state_names()}
        params = {f.name: getattr(self.params, f.name)[keep].copy() for f in fields(NetParams)}
        m = self._step(streams)
        for name, values in saved.items():
            getattr(self, name)[keep] = values
        for name, values in params.items():
            getattr(self.params, name)[keep] = values
        return m

    def _step(self, streams: npt.NDArray[np.integer] | F64) -> Measurement:
        mi = self.cfg.mi_s
        self._advance_world()
        n = np.clip(np.asarray(streams, dtype=np.float64), 1, self.cfg.max_streams)
        target, loss, rtt, r = steady(
            self.params, self.capacity, self.bg_on, self.comp_on, n + self._overshoot(n)
        )
        # New streams ramp up (slow start) over a few RTTs; closed streams stop at once.
        pkts = np.maximum(np.minimum(r, target / n) * self.params.rtt / MSS_BITS / 10.0, 2.0)
        tau = 0.5 * self.params.rtt * np.log2(pkts)
        if np.any(self.params.comp_bbr_join > 0):  # beside a BBR rival: BBR's slow convergence
            slow = np.where(self.comp_on > 0, self.params.comp_bbr_join, 0.0) * self.params.rtt
            tau = np.maximum(tau, slow)
        grow = target > self.rate
        decay = np.exp(-mi / tau)
        mean_rate = np.where(grow, target - (target - self.rate) * tau / mi * (1.0 - decay), target)
        self.rate = np.where(grow, target - (target - self.rate) * decay, target)
        mean_rate = mean_rate * (1.0 - self._recovery_before(n))
        bbr_start = (self.n <= 0) & self._bbr_on()
        mean_rate = mean_rate * np.where(bbr_start, self.params.comp_bbr_start_thr, 1.0)
        thr = mean_rate * np.maximum(
            1.0 + self.params.noise * self.rng.standard_normal(self.n_envs), 0.05
        )
        if self.cfg.sawtooth:
            loss, rtt = self._sawtooth(n, loss, rtt)
        burst = self._burst(n, r, uncapped_rate(self.params, self.comp_on))
        self._recovery_after(n, burst)
        loss = np.clip(loss + burst, 0.0, 0.3)
        segs = np.maximum(thr * mi / MSS_BITS, 1.0)
        lost = self.rng.poisson(np.minimum(segs * loss, 1e9))
        rtt_meas = rtt * (1.0 + 0.02 * np.abs(self.rng.standard_normal(self.n_envs)))
        if np.any(self.params.rtt_jitter > 0):  # LAN: scheduling jitter of tens of us
            rtt_meas = rtt_meas + self.params.rtt_jitter * np.abs(
                self.rng.standard_normal(self.n_envs)
            )
        floor = self.params.rtt * (1.0 + 0.01 * self.rng.random(self.n_envs))
        self.min_rtt = np.minimum(self.min_rtt, np.minimum(floor, rtt_meas))
        grad = (rtt_meas - self.rtt_prev) / (2.0 * mi) + 0.001 * self.rng.standard_normal(
            self.n_envs
        )
        self.rtt_prev = rtt_meas
        self.t += mi
        self.n = n
        return Measurement(
            throughput_bps=thr,
            loss_rate=lost / segs,
            rtt_ms=rtt_meas * 1e3,
            min_rtt_ms=self.min_rtt * 1e3,
            rtt_gradient=grad,
            rtt_ratio=rtt_meas / self.min_rtt,
            streams=n,
            retrans_segs=lost.astype(np.float64),
            data_segs_out=segs,
            cc=self.params.cc.copy(),
        )

    def _move_peers(self, was_on: F64) -> None:
        """Peer competitors (``SimConfig.p_comp_peer``): one that has just switched on opens
        ``comp_peer_join`` streams; one that runs steps towards its best response to our
        streams of the last MI (the same steady-state utility, seen from its side)."""
        p = self.params
        peer = p.comp_peer > 0
        join = peer & (self.comp_on > 0) & (was_on <= 0)
        p.comp_streams = np.where(join, float(self.cfg.comp_peer_join), p.comp_streams)
        move = peer & (self.comp_on > 0) & ~join & (self.n > 0)
        move &= self.rng.random(self.n_envs) < p.comp_peer
        if not move.any():
            return
        sub = NetParams(**{f.name: getattr(p, f.name)[move] for f in fields(NetParams)})
        sub.comp_streams = self.n[move]  # from its side, we are the competitor
        ones = np.ones(int(move.sum()))
        u, ns = self._utility_grid(sub, self.capacity[move], self.bg_on[move], ones)
        best = ns[np.argmax(u, axis=1)]
        gap = best - p.comp_streams[move]
        step = np.sign(gap) * np.where(np.abs(gap) >= 5, 5.0, np.minimum(np.abs(gap), 1.0))
        p.comp_streams[move] = np.clip(p.comp_streams[move] + step, 1, self.cfg.max_streams)

    def _overshoot(self, n: F64) -> F64:
        """Extra stream-equivalents of streams still in their slow-start overshoot (random
        loss, loss-based cc only): new streams add ``ss_overshoot - 1`` each, closed streams
        take their share, the rest decays by ``overshoot_decay`` per MI."""
        p = self.params
        added = np.maximum(n - self.n, 0.0)
        kept = np.where(self.n > 0, np.minimum(n / np.maximum(self.n, 1.0), 1.0), 1.0)
        fresh = self.boost * kept * p.overshoot_decay + added * (p.ss_overshoot - 1.0)
        self.boost = np.where((p.loss > 0) & (p.cc != 2), fresh, 0.0)
        return self.boost

    def _available(self) -> F64:
        """Capacity left to the TCP flows this MI (goodput efficiency, background load)."""
        return self.capacity * EFFICIENCY * (1.0 - self.params.bg_level * self.bg_on)

    def _sawtooth(self, n: F64, loss: F64, rtt: F64) -> tuple[F64, F64]:
        """Per-MI signals of a saturated loss-based link: congestion loss comes in events,
        and the queue empties after one and refills.

        A flow backs off about once per sawtooth cycle (reno: ``b w`` RTTs at +1 packet per
        RTT; cubic: the faster of its Reno-friendly growth and ``cbrt(b w / 0.4)`` s, w the
        flow's peak window in packets). Our streams' events in an MI are Poisson with mean
        ``n x MI / cycle``, and the MI's congestion loss is its mean scaled by events / mean
        (so the mean loss, and U*, stay those of :func:`steady`). Each event empties the
        queue by ``b (1 + buffer) / buffer`` of it per flow backing off, up to two flows at
        once (drop-tail synchronises a pair); it refills linearly in a cycle. The RTT of an
        MI follows the queue; its mean is kept at :func:`steady`'s where the queue can hold
        it. Throughput is left smooth; BBR and unsaturated links keep :func:`steady`'s values.
        How this compares with the testbed, and why the throughput dip is not modelled:
        docs/learning.md (Calibration, the sawtooth)."""
        p, mi = self.params, self.cfg.mi_s
        m = p.comp_streams * self.comp_on
        n_tot = n + m
        base = p.loss + p.comp_loss * self.comp_on
        cong = np.maximum(loss - base, 0.0)
        active = (cong > 0) & (p.cc != 2)
        w = np.maximum(self._available() * p.rtt * (1.0 + p.buffer) / (MSS_BITS * n_tot), 2.0)
        reno = p.cc == 0
        b = _BACKOFF[np.minimum(p.cc, 1)]
        t_linear = b * w / np.where(reno, 1.0, 3.0 * b / (2.0 - b)) * p.rtt
        cycle = np.where(reno, t_linear, np.minimum(t_linear, np.cbrt(b * w / 0.4)))
        cycle = np.maximum(cycle, 2.0 * p.rtt)
        lam = np.where(active, n * mi / cycle, 0.0)
        k = self.rng.poisson(lam)
        k_all = k + self.rng.poisson(np.where(active, m * mi / cycle, 0.0))
        bursty = active & (lam < 20.0)
        loss = np.where(bursty, base + cong * k / np.maximum(lam, 1e-12), loss)
        dip = np.minimum(
            1.0, p.queue_dip * b * (1.0 + p.buffer) / p.buffer * np.minimum(n_tot, 2.0) / n_tot
        )
        # Each event is a triangle: a dip of depth ``dip`` that refills linearly in a cycle
        # (so it lasts ``dip x cycle``; events come at ``n_tot / cycle``).
        kept = np.maximum(self.qdip - mi / cycle, 0.0)
        in_mi = k_all * dip * np.minimum(1.0, dip * cycle / mi) / 2.0
        avg = np.minimum(0.5 * (self.qdip + kept) + in_mi, 1.0)
        last = np.where(k_all > 0, np.maximum(dip - 0.5 * mi / cycle, 0.0), 0.0)
        mean_dip = np.minimum(0.9, n_tot * dip**2 / 2.0)
        fill = (rtt / p.rtt - 1.0) / p.buffer
        top = np.minimum(1.0, fill / (1.0 - mean_dip))
        self.qdip = np.where(active, np.minimum(np.maximum(kept, last), 1.0), 0.0)
        rtt = np.where(active, p.rtt * (1.0 + p.buffer * top * (1.0 - avg)), rtt)
        return loss, rtt

    def _burst(self, n: F64, r: F64, r_comp: F64) -> F64:
        """Slow-start overshoot loss of streams just added to a saturated link, a third of
        the last MI's burst carried over; in the first MI, the start burst if our streams
        alone fill the link. The overflow is shared by every flow in the drop-tail queue, so
        it is diluted by all the streams on the link (a competing transfer's too) and counts
        their demand for saturation. Paced streams held by their cap overshoot more than
        elastic ones (measured: ``SimConfig.ss_burst`` vs ``ss_burst_elastic``)."""
        p = self.params
        c_avail = self._available()
        first = self.n <= 0
        added = np.where(first, 0.0, np.maximum(n - self.n, 0.0))
        m = p.comp_streams * self.comp_on
        saturated = n * r + m * np.minimum(p.comp_cap, r_comp) > c_avail
        coef = np.where(p.cap < r_comp, p.ss_burst, p.ss_burst_elastic)
        fresh = np.where(first, p.start_burst * (n * r > c_avail), coef * added / (n + m))
        # A competing loss-based transfer switching on slow-starts into the queue as well.
        fresh = fresh + np.where((self.joined > 0) & ~first, p.comp_join_burst, 0.0)
        # A BBR competitor's shallow queue drops much of an added stream's slow start.
        bbr_on = self._bbr_on()
        bbr = np.where(bbr_on & (added > 0), p.comp_bbr_burst + p.comp_bbr_burst_step * added, 0.0)
        bbr = bbr + np.where(bbr_on & first, p.comp_bbr_start_burst, 0.0)
        # Short paths: a slow start overshoots by about one window, a small share of the MI.
        # (A scale of 0 divides by 1e-9: every path is "long", the burst full size.)
        bdp = p.capacity * p.rtt / MSS_BITS
        bbr = bbr * np.minimum(1.0, bdp / np.maximum(p.comp_bbr_burst_bdp, 1e-9))
        self.burst = np.where(saturated, fresh, 0.0) + bbr + self.burst / 3.0
        return self.burst

    def _bbr_on(self) -> npt.NDArray[np.bool_]:
        """Where a BBR competitor is on: loss on the link that our streams did not cause."""
        return self.params.comp_loss * self.comp_on > 0

    def _window_pkts(self, n: F64) -> F64:
        """Our streams' mean window at their share of the link, packets."""
        p = self.params
        n_tot = n + p.comp_streams * self.comp_on
        share = np.minimum(self._available() / np.maximum(n_tot, 1.0), p.cap)
        return np.maximum(share * p.rtt / MSS_BITS, 2.0)

    def _recovery_before(self, n: F64) -> F64:
        """Fraction of this MI's throughput lost to windows still growing back after a loss
        burst (``SimConfig.slow_recovery``). Streams added since the burst are unaffected:
        the deficit is diluted by ``old / new`` streams."""
        grown = np.where((self.n > 0) & (n > self.n), self.n / np.maximum(n, 1.0), 1.0)
        self.deficit = self.deficit * grown
        return self.deficit

    def _recovery_after(self, n: F64, burst: F64) -> None:
        """A burst of loss ``burst`` (per segment) in this MI cuts each flow's window ``k``
        times (k = burst x window, at most 3); the link is then under-used by ``1 - (1 -
        b)^k (1 + queue)`` until the windows grow back over cubic's ``cbrt(b w / 0.4)`` s
        (reno: ``b w RTT``). BBR ignores the burst."""
        p, mi = self.params, self.cfg.mi_s
        w = self._window_pkts(n)
        b = _BACKOFF[np.minimum(p.cc, 1)]
        k = np.minimum(burst * w, 3.0)
        cut = np.clip(1.0 - (1.0 - b) ** k * (1.0 + p.buffer), 0.0, 0.9)
        w_cut = b * w * np.minimum(k, 1.0)
        t_rec = np.where(p.cc == 0, w_cut * p.rtt, np.cbrt(np.maximum(w_cut, 1e-9) / 0.4))
        decay = np.exp(-mi / np.maximum(t_rec, 1e-3))
        # Paced streams below their window (a per-stream cap) lose nothing to a window cut.
        on = (p.slow_recovery > 0) & (p.cc != 2) & ~(p.cap < uncapped_rate(p, self.comp_on))
        on = on & ~((p.comp_bbr_recovery <= 0) & self._bbr_on())
        self.deficit = np.where(on, np.maximum(self.deficit * decay, cut), 0.0)

    def utility_curve(self) -> tuple[F64, F64]:
        """Steady-state utility for N = 1..max_streams in the current world: ``(E, K)`` and N."""
        return self._utility_grid(self.params, self.capacity, self.bg_on, self.comp_on)

    def _utility_grid(
        self, p: NetParams, capacity: F64, bg_on: F64, comp_on: F64
    ) -> tuple[F64, F64]:
        """Steady-state utility of N = 1..max_streams on networks ``p``: ``(E, K)`` and N."""
        ns = np.arange(1, self.cfg.max_streams + 1, dtype=np.float64)
        grid = np.broadcast_to(ns, (len(p.capacity), ns.size))
        thr, loss, _, _ = steady(p, capacity, bg_on, comp_on, grid)
        return utility_values(thr, grid, loss, self.ucfg), ns

    def optimum(self) -> tuple[F64, F64]:
        """Best fixed stream count and its steady-state utility U*, per environment."""
        u, ns = self.utility_curve()
        i = np.argmax(u, axis=1)
        return ns[i], u[np.arange(self.n_envs), i]


def utility_of(m: Measurement, cfg: UtilityConfig | None = None) -> F64:
    """Utility of each environment's measurement (``policy.utility``'s formula, vectorised)."""
    return utility_values(m.throughput_bps, m.streams, m.loss_rate, cfg)
