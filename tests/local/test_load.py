"""Load: 16 senders at once into one receiver, each with its own tree; all complete and
verify, and the receiver ends every session. The senders are threads of this process (each
its own Sender, event loop and connections): 16 interpreters would spend more CPU starting
than moving the data on a 2-core CI machine."""

from __future__ import annotations

import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import xfer
from xfer.dataset import trees_equal

from ..hostile import wait_for

SENDERS = 16


def _tree(root: str, seed: int) -> str:
    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "sub", "deeper"))
    with open(os.path.join(root, "big.bin"), "wb") as f:
        f.write(rng.randbytes((1 << 20) + seed))
    for i in range(20):
        rel = os.path.join("sub" if i % 2 else "sub/deeper", f"f{i:02d}")
        with open(os.path.join(root, rel), "wb") as f:
            f.write(rng.randbytes(rng.randrange(0, 150_000)))
    return root


def test_sixteen_senders_at_once(tmp_path) -> None:
    trees = [_tree(str(tmp_path / "src" / f"tree{i:02d}"), i) for i in range(SENDERS)]
    with xfer.Receiver(root=str(tmp_path / "dst"), fsync=False, max_sessions=SENDERS) as rx:
        start = threading.Barrier(SENDERS)

        def one(src: str) -> dict:
            start.wait()
            return xfer.send([src], rx.address, streams=2, block_size=256 << 10)

        with ThreadPoolExecutor(SENDERS) as pool:
            results = list(pool.map(one, trees, timeout=180))
        assert wait_for(lambda: not rx._rx.sessions, 10)
    for src, summary in zip(trees, results, strict=True):
        assert summary["exit_code"] == 0 and summary["verified"], (src, summary)
        assert summary["files"] == 21 and summary["bytes_skipped"] == 0
        assert summary["bytes_sent"] >= summary["bytes"]  # more when hedged copies were sent
        assert trees_equal(src, str(tmp_path / "dst" / os.path.basename(src)))
