from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

import xfer


@pytest.fixture
def receiver(tmp_path) -> Iterator[xfer.Receiver]:
    rx = xfer.Receiver(root=str(tmp_path / "dst"), fsync=False)
    rx.start()
    yield rx
    rx.stop()


def make_tree(root: str, seed: int = 0) -> str:
    """Mixed tree: empty file, small files, multi-block files, nested and empty dirs, unicode."""
    import random

    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "empty-dir"))
    os.makedirs(os.path.join(root, "a", "b", "ünï-cødé"))
    sizes = {"empty": 0, "one": 1, "page": 4096, "multi": (9 << 20) + 7, "a/x": 123_457}
    for i in range(150):
        sizes[f"a/b/s{i:03d}"] = rng.randrange(0, 20_000)
    sizes["a/b/ünï-cødé/file ✓.txt"] = 777
    for rel, size in sizes.items():
        with open(os.path.join(root, rel), "wb") as f:
            f.write(rng.randbytes(size))
    os.chmod(os.path.join(root, "a", "x"), 0o600)
    os.utime(os.path.join(root, "one"), ns=(1_600_000_000_123_456_789, 1_600_000_000_123_456_789))
    return root
