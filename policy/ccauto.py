"""``--cc auto``: choose the kernel congestion control for new streams as conditions change.

After the Q-learning paper (Fakhimi et al.): a cheap tabular learner. The state is coarse
(random loss present or not x RTT inflated or not); each arm is one of the kernel's
algorithms; the value of an arm in a state is the running mean of the utility per MI measured
while that algorithm carried the streams. Every ``hold`` MIs the chooser picks the best arm for
the current state (or explores with probability ``epsilon``; every arm is tried once per state
first). The engine opens new streams with the chosen algorithm and recycles old ones slowly.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from policy.signals import SignalVector


@dataclass(frozen=True, slots=True)
class CcAutoConfig:
    """Settings of the congestion-control chooser."""

    algorithms: tuple[str, ...] = ("cubic", "bbr", "reno")
    """Arms: kernel congestion control names (``/proc/sys/net/ipv4/tcp_available_congestion_control``)."""
    hold: int = 5
    """MIs to keep a choice before judging it (streams need time to switch over)."""
    epsilon: float = 0.1
    """Exploration probability after every arm has been tried in a state."""
    loss_threshold: float = 1e-4
    """Loss rate above which the state counts as lossy."""
    rtt_ratio_threshold: float = 1.5
    """RTT ratio above which the state counts as queueing."""
    seed: int = 0
    """Seed of the exploration RNG (reproducible runs)."""


@dataclass
class CcChooser:
    """Tabular epsilon-greedy chooser; feed it every MI with :meth:`update`."""

    config: CcAutoConfig = field(default_factory=CcAutoConfig)
    current: str = ""
    _values: dict[tuple[tuple[bool, bool], str], tuple[float, int]] = field(default_factory=dict)
    _since: int = 0
    _acc: float = 0.0
    _state: tuple[bool, bool] = (False, False)

    def __post_init__(self) -> None:
        if not self.config.algorithms:
            raise ValueError("cc auto needs at least one algorithm")
        self.current = self.current or self.config.algorithms[0]
        self._rng = random.Random(self.config.seed)

    def state(self, s: SignalVector) -> tuple[bool, bool]:
        c = self.config
        lossy = (s.loss_rate or 0.0) > c.loss_threshold
        queueing = (s.rtt_ratio or 1.0) > c.rtt_ratio_threshold
        return lossy, queueing

    def update(self, s: SignalVector, utility: float) -> str:
        """Record this MI's utility for the current arm; maybe switch. Returns the arm to use
        for new streams."""
        self._acc += utility
        self._since += 1
        self._state = self.state(s)
        if self._since < self.config.hold:
            return self.current
        key = (self._state, self.current)
        mean, n = self._values.get(key, (0.0, 0))
        sample = self._acc / self._since
        self._values[key] = (mean + (sample - mean) / (n + 1), n + 1)
        self._acc, self._since = 0.0, 0
        self.current = self._pick(self._state)
        return self.current

    def _pick(self, state: tuple[bool, bool]) -> str:
        algos = self.config.algorithms
        untried = [a for a in algos if (state, a) not in self._values]
        if untried:
            return untried[0]
        if self._rng.random() < self.config.epsilon:
            return self._rng.choice(algos)
        return max(algos, key=lambda a: self._values[(state, a)][0])

    def table(self) -> dict[str, float]:
        """Learned values, ``"lossy,queueing:algo" -> mean utility`` (for logs)."""
        return {f"{int(s[0])},{int(s[1])}:{a}": v for (s, a), (v, _) in self._values.items()}
