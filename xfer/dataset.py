"""Generated datasets (for the demo, tests and benchmarks) and tree comparison."""

from __future__ import annotations

import filecmp
import os
import random


def generate(root: str, total: int, seed: int = 1) -> int:
    """A tree of about ``total`` bytes: a few large files, many small ones, an empty file, an
    empty directory, nested directories and a unicode name. Returns the number of files."""
    rng = random.Random(seed)
    os.makedirs(os.path.join(root, "empty-dir"), exist_ok=True)
    chunk = os.urandom(1 << 20)
    files = 0

    def write(path: str, size: int) -> None:
        nonlocal files
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            left = size
            while left > 0:
                k = min(left, len(chunk))
                off = rng.randrange(0, len(chunk) - k + 1)
                f.write(chunk[off : off + k])
                left -= k
        files += 1

    write(os.path.join(root, "empty.dat"), 0)
    large = int(total * 0.8)
    for i in range(4):
        write(os.path.join(root, "large", f"part-{i:02d}.bin"), large // 4)
    small_total, i = int(total * 0.2), 0
    while small_total > 0:
        size = min(small_total, rng.choice([100, 4096, 65536, 300_000]))
        sub = os.path.join(root, "small", f"d{i % 10}", f"é-{i // 10}")
        write(os.path.join(sub, f"file-{i:05d}.dat"), size)
        small_total -= size
        i += 1
    return files


def trees_equal(a: str, b: str) -> bool:
    """True when the two trees hold the same names and byte-identical files."""
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(trees_equal(os.path.join(a, d), os.path.join(b, d)) for d in cmp.common_dirs)
