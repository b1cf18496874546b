"""``bo``: Falcon's Bayesian optimization of the stream count.

A port of ``base_optimizer`` from Falcon's ``search.py`` (arif-zaman/Falcon-File-Transfer-
Optimizer): a scikit-optimize ``Optimizer`` with a Gaussian process and ``acq_func="gp_hedge"``,
``starts`` random probes first, and a window of the last ``window`` observations. Each probe
lasts ``probe`` MIs and is scored exactly as in ``gd`` (:func:`policy.gd.falcon_score`, lower is
better). In Falcon's default continuous mode (``iters`` < 1) the search space's upper bound
moves after each probe:

- it shrinks to the probed count (at least 2) when the score is positive (utility negative,
  i.e. heavy loss) and the count is below the bound;
- it grows by 5 (up to ``max_streams``) when the score is negative and the count sits at the bound;

and after such a change the optimizer restarts from scratch (new random starts), as Falcon does.
With ``iters`` = N > 0 it probes N times and then holds the best count it saw (Falcon's finite
mode). Deviation, for speed: the acquisition function is maximised over all integer counts by
sampling (``acq_optimizer="sampling"``) instead of L-BFGS on a continuous relaxation; on a
one-dimensional integer space this finds the same maximiser, in a few milliseconds.

Spec: ``bo[:probe=3,settle=1,k=1.02,b=10,window=20,starts=3,iters=-1,seed=N,revisit=1,
restarts=2]``; ``revisit=1`` re-probes a count the model prefers, as the scikit-optimize of
Falcon's time did (0.10 jumps to a random count instead: ``revisit=0``).
scikit-optimize is imported when this module is (only when ``bo`` is chosen).
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from skopt import Optimizer
from skopt.space import Integer
from skopt.utils import cook_estimator

try:  # a dependency of scikit-learn, so normally present
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

from policy.base import ControllerConfig
from policy.gd import PROBE_ARGS, Probe, ProbeConfig, parse_args
from policy.signals import SignalVector

_ARGS: dict[str, type] = {
    **PROBE_ARGS,
    "window": int,
    "starts": int,
    "iters": int,
    "seed": int,
    "revisit": int,
    "restarts": int,
}


class BayesianOptimizer:
    """Falcon's ``base_optimizer``, driven one MI at a time."""

    name = "bo"

    def __init__(self, args: str, config: ControllerConfig) -> None:
        kv = parse_args(args, _ARGS, "bo")
        self.config = config
        self.probe = Probe(ProbeConfig.from_args(kv, "bo", config.mi_s))
        self.window = int(kv.get("window", 20))
        """Observations kept for the model (Falcon's ``limit_obs``)."""
        self.starts = int(kv.get("starts", 3))
        """Random probes before the model is used (Falcon's ``initial_run``)."""
        self.iters = int(kv.get("iters", -1))
        """Probes before holding the best count; < 1 searches forever (Falcon's default)."""
        seed = kv.get("seed")
        self.seed: int | None = None if seed is None else int(seed)
        self.restarts = int(kv.get("restarts", 2))
        """Extra random restarts of the GP's kernel fit (scikit-optimize's default is 2)."""
        self.revisit = bool(int(kv.get("revisit", 1)))
        """Let the model re-probe a count it has seen (skopt ``avoid_duplicates=False``)."""
        if self.window < 2 or self.starts < 1:
            raise ValueError(f"bo: window must be >= 2 and starts >= 1, got {args!r}")
        self.upper = config.max_streams
        """Current upper bound of the search space (Falcon's ``max_thread``)."""
        self.count = 0
        """Probes completed."""
        self.resets = 0
        self.held: int | None = None
        self.history: list[tuple[int, float]] = []
        """Every (count, score) probed, oldest first (for tests and logs)."""
        self.opt = self._new_optimizer()
        self.cc = self._ask()

    def initial(self) -> int:
        return self.cc

    def decide(self, signals: SignalVector) -> int:
        if self.held is not None:
            return self.held
        score = self.probe.add(signals, self.cc)
        if score is None:
            return self.cc
        self.count += 1
        self.history.append((self.cc, score))
        if self.opt is not None:
            if len(self.opt.yi) > self.window:
                self.opt.yi = self.opt.yi[-self.window :]
                self.opt.Xi = self.opt.Xi[-self.window :]
            # one BLAS thread: a 20-point GP gains nothing from more, and on a busy machine
            # extra threads made the fit 10-20 times slower (measured, see docs)
            one = threadpool_limits(1) if threadpool_limits else contextlib.nullcontext()
            with warnings.catch_warnings(), one:
                warnings.simplefilter("ignore")
                self.opt.tell([self.cc], score)
        if self.iters > 0 and self.count >= self.iters:
            self.held = self.best()
            return self.held
        if self.iters < 1:
            self._move_bound(score)
        self.cc = self._ask()
        return self.cc

    def best(self) -> int:
        """The count with the lowest score among the observations in the window."""
        if self.opt is None or not self.opt.yi:
            return self.cc
        yi = self.opt.yi
        i = min(range(len(yi)), key=lambda j: yi[j])
        return int(self.opt.Xi[i][0])

    def _move_bound(self, score: float) -> None:
        """Falcon's shrink/grow rules for the upper bound; restart the optimizer on a change."""
        cc, upper = self.cc, self.upper
        if score > 0 and cc < upper:
            upper = max(cc, 2)
        if score < 0 and cc == upper and cc < self.config.max_streams:
            upper = min(cc + 5, self.config.max_streams)
        upper = max(upper, self.config.min_streams)
        if upper != self.upper:
            self.upper = upper
            self.resets += 1
            self.opt = self._new_optimizer()

    def _new_optimizer(self) -> Any:
        """A fresh optimizer over ``[min_streams, upper]``; None if that range is one count."""
        lo, hi = self.config.min_streams, self.upper
        if hi <= lo:
            return None
        seed = None if self.seed is None else self.seed + self.resets
        space = [Integer(lo, hi)]
        gp = cook_estimator(
            "GP", space=space, random_state=seed, n_restarts_optimizer=self.restarts
        )
        return Optimizer(
            dimensions=space,
            base_estimator=gp,
            acq_func="gp_hedge",
            acq_optimizer="sampling",
            acq_optimizer_kwargs={"n_points": 8 * (hi - lo + 1)},
            n_initial_points=self.starts,
            model_queue_size=self.window,
            random_state=seed,
            avoid_duplicates=not self.revisit,
        )

    def _ask(self) -> int:
        if self.opt is None:
            return self.config.clip(self.upper)
        with warnings.catch_warnings():  # "evaluated before, using a random point" is expected
            warnings.simplefilter("ignore")
            x = self.opt.ask()
        return self.config.clip(int(x[0]))
