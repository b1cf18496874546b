"""Turn a scenario into namespaces, links, routes and impairments.

Layout (path p = 1, 2, ...; every impairment lives in the router)::

    sender  10.p.1.1 ─┐                          ┌─ 10.p.2.1   receiver
    sender2 10.p.1.2 ─┤ up<p> ══ router ══ dn<p> ├─ 10.p.2.2   receiver2
    bgsendK 10.p.1.1xx┘  (.254)            (.254)└─ 10.p.2.1xx bgrecvK

- ``up<p>``/``dn<p>`` are the router's sides of path p: a veth end when one host is on that
  side, a bridge with one veth port per host otherwise. Hosts call their interface ``p<p>``.
- Sender -> receiver (data direction): NFQUEUE delay line (queue 2p) in FORWARD, then ``tbf``
  (rate, queue limit) on ``dn<p>``; per-packet loss by an nft netdev-ingress rule on each
  receiver-side host's ``p<p>`` (segments are single packets there: GSO is off on ``dn<p>``'s
  veth when the path has loss). Receiver -> sender: delay line queue 2p+1 if delay_rev_ms > 0.
- The router sends everything that enters on ``up<p>`` out of ``dn<p>`` and back (policy
  routing by input interface), so the path of a flow is fixed by the sender-side address:
  sender-side hosts route by source address, receiver-side hosts by destination.
- A path goes down by adding both its router interfaces to the nft set ``down`` (blackhole).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .netns import in_ns, ip_batch, ns_name, sh
from .scenario import PathSpec, Scenario

SEND, RECV = 1, 2  # third octet of the sender-side / receiver-side subnets
ROUTER_OCTET = 254


@dataclass(frozen=True)
class HostPlan:
    """Where one end host sits in the topology."""

    name: str
    """Host name (sender, receiver2, bgsend1, ...)."""
    side: int
    """SEND (sender side of the router) or RECV."""
    index: int
    """Last octet of its addresses."""
    paths: tuple[int, ...]
    """Paths (1-based) it is attached to; the first is its primary address."""

    def addr(self, path: int) -> str:
        """IPv4 address on ``path``."""
        return f"10.{path}.{self.side}.{self.index}"

    @property
    def addrs(self) -> list[str]:
        """Addresses on all its paths, primary first."""
        return [self.addr(p) for p in self.paths]


def plan_hosts(scn: Scenario) -> list[HostPlan]:
    """Every end host of ``scn`` with its side, address index and paths."""
    allp = tuple(range(1, len(scn.paths) + 1))
    hosts = []
    for k in range(1, scn.pairs + 1):
        suffix = "" if k == 1 else str(k)
        hosts += [
            HostPlan(f"sender{suffix}", SEND, k, allp),
            HostPlan(f"receiver{suffix}", RECV, k, allp),
        ]
    for k, flow in enumerate(scn.background, start=1):
        hosts += [
            HostPlan(f"bgsend{k}", SEND, 100 + k, (flow.path,)),
            HostPlan(f"bgrecv{k}", RECV, 100 + k, (flow.path,)),
        ]
    return hosts


def side_dev(side: int, path: int) -> str:
    """Router device facing ``side`` on ``path``."""
    return f"{'up' if side == SEND else 'dn'}{path}"


def tbf_burst(rate_bps: float) -> int:
    """tbf bucket: 2 ms at line rate, within [32 KiB, 256 KiB]."""
    return int(min(256 * 1024, max(32 * 1024, rate_bps * 0.002 / 8)))


def tbf_args(
    dev: str, path: PathSpec, rate_bps: float | None = None, min_burst: int = 0
) -> list[str]:
    """``tc qdisc replace`` arguments for the bottleneck of ``path`` (optionally a new rate,
    and a bucket of at least ``min_burst`` bytes)."""
    rate = int(rate_bps if rate_bps is not None else path.rate_bps)
    burst = max(tbf_burst(rate), min_burst)
    limit = max(path.queue_bytes, burst)
    return ["qdisc", "replace", "dev", dev, "root", "tbf", "rate", f"{rate}bit",
            "burst", str(burst), "limit", str(limit)]  # fmt: skip


ALLOWED_CC = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")


def allow_congestion_control(cc: str) -> None:
    """Let namespaces other than the host's use ``cc`` as their default.

    The kernel refuses a namespace default that is not in the (global) allowed list with
    EPERM; this appends ``cc`` to that list, leaving the rest as it was.
    """
    allowed = ALLOWED_CC.read_text().split()
    if cc not in allowed:
        ALLOWED_CC.write_text(" ".join([*allowed, cc]) + "\n")


class Builder:
    """Creates the namespaces and everything inside them for one testbed name."""

    def __init__(self, name: str, scn: Scenario) -> None:
        self.name, self.scn = name, scn
        self.hosts = plan_hosts(scn)
        self.router = ns_name(name, "router")
        self._buckets: dict[int, int] = {}
        """The largest tbf bucket each path has had (bytes; see :meth:`set_rate`)."""

    def ns(self, host: str) -> str:
        return ns_name(self.name, host)

    @property
    def namespaces(self) -> list[str]:
        return [self.router] + [self.ns(h.name) for h in self.hosts]

    def create(self) -> None:
        """Namespaces, links, addresses, routes, host settings (no delay line yet)."""
        allow_congestion_control(self.scn.sysctls.congestion_control)
        for ns in self.namespaces:
            sh(["ip", "netns", "add", ns])
        base = ["net.ipv4.conf.all.rp_filter=0", "net.ipv4.conf.default.rp_filter=0"]
        sh(in_ns(self.router, ["sysctl", "-q", "-w", *base, "net.ipv4.ip_forward=1"]))
        for h in self.hosts:
            kv = [f"{k}={v}" for k, v in self.scn.sysctls.as_pairs()]
            if self.scn.mptcp:
                kv.append("net.mptcp.enabled=1")
            sh(in_ns(self.ns(h.name), ["sysctl", "-q", "-w", *base, *kv]))
        self._links()
        self._routes()
        if self.scn.mptcp:
            self._mptcp()

    def _links(self) -> None:
        lines = ["link set lo up"]
        for p in range(1, len(self.scn.paths) + 1):
            for side in (SEND, RECV):
                members = [h for h in self.hosts if h.side == side and p in h.paths]
                dev = side_dev(side, p)
                if len(members) == 1:
                    lines.append(
                        f"link add {dev} type veth peer name p{p} netns {self.ns(members[0].name)}"
                    )
                else:
                    lines.append(f"link add {dev} type bridge")
                    for h in members:
                        port = f"{dev}h{h.index}"
                        lines.append(
                            f"link add {port} type veth peer name p{p} netns {self.ns(h.name)}"
                        )
                        lines.append(f"link set {port} master {dev} up")
                lines.append(f"addr add 10.{p}.{side}.{ROUTER_OCTET}/24 dev {dev}")
                lines.append(f"link set {dev} up")
        ip_batch(self.router, lines)

    def _routes(self) -> None:
        npaths = len(self.scn.paths)
        rules = []
        for p in range(1, npaths + 1):
            # Whatever enters on one side of path p leaves on the other side of path p.
            rules += [
                f"rule add iif up{p} lookup {100 + p} priority {100 + p}",
                f"route add default dev dn{p} table {100 + p}",
                f"rule add iif dn{p} lookup {200 + p} priority {200 + p}",
                f"route add default dev up{p} table {200 + p}",
            ]
        ip_batch(self.router, rules)
        for h in self.hosts:
            other = RECV if h.side == SEND else SEND
            lines = ["link set lo up"]
            for p in h.paths:
                gw = f"10.{p}.{h.side}.{ROUTER_OCTET}"
                lines += [f"addr add {h.addr(p)}/24 dev p{p}", f"link set p{p} up"]
                lines.append(f"route add 10.{p}.{other}.0/24 via {gw} dev p{p}")
                if h.side == SEND:  # a flow's path is fixed by its sender-side source address
                    lines.append(f"rule add from {h.addr(p)} lookup {100 + p} priority {100 + p}")
                    lines.append(f"route add default via {gw} dev p{p} table {100 + p}")
            lines.append(f"route add default via 10.{h.paths[0]}.{h.side}.{ROUTER_OCTET}")
            ip_batch(self.ns(h.name), lines)

    def _mptcp(self) -> None:
        n = min(8, 2 * len(self.scn.paths))
        for h in self.hosts:
            lines = [f"mptcp limits set subflows {n} add_addr_accepted {n}"]
            if h.side == SEND:
                lines += [f"mptcp endpoint add {h.addr(p)} dev p{p} subflow" for p in h.paths[1:]]
            ip_batch(self.ns(h.name), lines)

    def impair(self) -> None:
        """Bottleneck qdiscs, loss rules and the path-down gate (delay rules come later)."""
        gate = (
            "table inet xtb {\n  set down { type ifname; }\n"
            "  chain gate { type filter hook forward priority -10; policy accept;"
            " iifname @down counter drop; }\n}\n"
        )
        sh(in_ns(self.router, ["nft", "-f", "-"]), input=gate)
        for p, path in enumerate(self.scn.paths, start=1):
            sh(["tc", "-n", self.router, *tbf_args(f"dn{p}", path)])
            if path.loss > 0:
                self._loss(p, path.loss)

    def _loss(self, p: int, loss: float) -> None:
        receivers = [h for h in self.hosts if h.side == RECV and p in h.paths]
        ports = [f"dn{p}"] if len(receivers) == 1 else [f"dn{p}h{h.index}" for h in receivers]
        for port in ports:  # segment on the way out so that loss hits single packets
            sh(in_ns(self.router, ["ethtool", "-K", port, "tso", "off", "gso", "off"]))
        self._loss_rules(p, loss)

    def _loss_rules(self, p: int, loss: float) -> None:
        threshold = round(loss * 1_000_000)
        for h in self.hosts:
            if h.side != RECV or p not in h.paths:
                continue
            rules = (
                f"table netdev xtbloss {{\n  chain in_p{p} {{ type filter hook ingress device "
                f'"p{p}" priority 0; policy accept;\n'
                f"    meta protocol ip numgen random mod 1000000 < {threshold} counter drop; }}\n}}\n"
            )
            sh(in_ns(self.ns(h.name), ["nft", "-f", "-"]), input=rules)

    def set_loss_enabled(self, enabled: bool) -> None:
        """Lift (False) or restore (True) the random loss of every path."""
        for p, path in enumerate(self.scn.paths, start=1):
            if path.loss <= 0:
                continue
            if enabled:
                self._loss_rules(p, path.loss)
                continue
            for h in self.hosts:
                if h.side == RECV and p in h.paths:
                    sh(
                        in_ns(self.ns(h.name), ["nft", "delete", "table", "netdev", "xtbloss"]),
                        check=False,
                    )

    def delay_queues(self) -> dict[int, float]:
        """``{NFQUEUE number: one-way delay ms}`` for every delayed direction."""
        queues: dict[int, float] = {}
        for p, path in enumerate(self.scn.paths, start=1):
            if path.delay_fwd_ms > 0:
                queues[2 * p] = path.delay_fwd_ms
            if path.delay_rev_ms > 0:
                queues[2 * p + 1] = path.delay_rev_ms
        return queues

    def steer_to_delay_line(self) -> None:
        """Send each delayed direction through its NFQUEUE (after the delay line is ready)."""
        for q in sorted(self.delay_queues()):
            dev = f"up{q // 2}" if q % 2 == 0 else f"dn{q // 2}"
            sh(in_ns(self.router, ["iptables", "-w", "-A", "FORWARD", "-i", dev,
                                   "-j", "NFQUEUE", "--queue-num", str(q)]))  # fmt: skip

    # -- runtime changes (schedule) -------------------------------------------------------

    def set_rate(self, p: int, rate_bps: float) -> None:
        """Change the bottleneck rate of path ``p`` (queue limit unchanged).

        The bucket never shrinks below the largest this path has had. tbf splits a GSO packet
        larger than its bucket when it is queued, not when the bucket changes: after a cut
        from 400 to 100 Mbit/s (bucket 100 KB -> 32 KB) the sender's TSO packets already
        queued (min_tso_segs 32: >= 46 KB) could never gather the tokens to leave, and the
        path carried nothing for the rest of the run (round 46). A rise keeps its own, larger
        bucket."""
        path = self.scn.paths[p - 1]
        bucket = max(self._buckets.get(p, tbf_burst(path.rate_bps)), tbf_burst(rate_bps))
        self._buckets[p] = bucket
        sh(["tc", "-n", self.router, *tbf_args(f"dn{p}", path, rate_bps, bucket)])

    def set_path_state(self, p: int, up: bool) -> None:
        """Blackhole path ``p`` in both directions (down) or let it pass again (up)."""
        verb = "delete" if up else "add"
        cmd = ["nft", verb, "element", "inet", "xtb", "down", f'{{ "up{p}", "dn{p}" }}']
        sh(in_ns(self.router, cmd))
