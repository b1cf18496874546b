"""A full disk: a 20 MB tmpfs as the receiver's root, 24 MB to send. Both sides say the disk
is full, nothing unverified appears under its final name, and after the filesystem is
enlarged the same command completes, sending only what is missing."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator

import pytest

from xfer.dataset import trees_equal

from ..hostile import RecvProcess, result, start_send, wait_for


@pytest.fixture
def small_disk(tmp_path) -> Iterator[str]:
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    p = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {p.stderr.strip()}")
    try:
        yield str(mnt)
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_disk_full_then_enlarged(tmp_path, small_disk) -> None:
    src = tmp_path / "src" / "tree"
    src.mkdir(parents=True)
    for name in ("a.bin", "b.bin", "c.bin"):
        (src / name).write_bytes(os.urandom(8 << 20))
    root = os.path.join(small_disk, "root")
    recv = RecvProcess(root, str(tmp_path / "recv.log"))
    try:
        cmd = [str(src), recv.address, "--streams", "2", "--block-size", "1MiB"]
        code, summary, err = result(start_send(cmd))
        assert code == 7, (code, summary, err)  # REMOTE_IO
        assert "disk full" in summary["error"] and not summary["verified"], summary
        assert wait_for(lambda: "disk full" in recv.stderr(), 5), recv.stderr()
        landed = (
            sorted(os.listdir(os.path.join(root, "tree")))
            if os.path.isdir(os.path.join(root, "tree"))
            else []
        )
        assert len(landed) < 3, landed  # the unfinished file is not there ...
        for name in landed:  # ... and what is there is complete and verified
            with open(os.path.join(root, "tree", name), "rb") as f:
                assert (src / name).read_bytes() == f.read()
        subprocess.run(["mount", "-o", "remount,size=200m", small_disk], check=True)
        code, summary, err = result(start_send(cmd))
        assert code == 0 and summary["verified"], (summary, err)
        assert summary["bytes_skipped"] > 0 and summary["bytes_sent"] < 24 << 20, summary
    finally:
        recv.stop()
    assert trees_equal(str(src), os.path.join(root, "tree"))
