"""``xfer send TREE user@127.0.0.1:dir`` through a real OpenSSH server on loopback.

The sshd runs on 127.0.0.1 with a free port, a throwaway host key, a client key in its
authorized keys and a private config (as tests/netns/test_campaign_ssh.py does for its
namespaces). The sender's ssh gets its own config file (``--ssh "ssh -F FILE"``: ssh reads
``~/.ssh/config`` from the password database's home, not from $HOME) naming the port, the key
and the known host key; the far side runs this checkout's xfer (``--remote-xfer``). Needs
root (sshd must switch users) and openssh-server.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from xfer.dataset import trees_equal
from xfer.rx.store import PARTIAL_DIR
from xfer.ssh import Direct, RemoteReceiver, SshConfig, SshTarget, parse_destination, remote_dir

from .conftest import make_tree

pytestmark = pytest.mark.timeout(180)

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
REPO = Path(__file__).resolve().parents[2]
REMOTE_XFER = f"env PYTHONPATH={REPO} {sys.executable} -m xfer.cli"


# ------------------------------------------------------------------- the parser (no sshd)


@pytest.mark.parametrize(
    "dest, want",
    [
        ("127.0.0.1:5000", Direct("127.0.0.1:5000")),
        ("host.example:80", Direct("host.example:80")),
        ("[::1]:5000", Direct("[::1]:5000")),
        ("host:dir", SshTarget("host", "dir")),
        ("host:", SshTarget("host", "")),
        ("host:/abs/dir", SshTarget("host", "/abs/dir")),
        ("host:5000/sub", SshTarget("host", "5000/sub")),
        ("host:./5000", SshTarget("host", "./5000")),
        ("alice@host:dir", SshTarget("host", "dir", "alice")),
        ("alice@127.0.0.1:~/in", SshTarget("127.0.0.1", "~/in", "alice")),
        ("bob@[2001:db8::1]:d", SshTarget("2001:db8::1", "d", "bob")),
        ("ssh://alice@host:2222/srv/in", SshTarget("host", "/srv/in", "alice", 2222)),
        ("ssh://host", SshTarget("host", "")),
        ("ssh://[::1]:22/x", SshTarget("::1", "/x", None, 22)),
    ],
)
def test_destinations(dest: str, want: Direct | SshTarget) -> None:
    assert parse_destination(dest) == want


@pytest.mark.parametrize(
    "dest, message",
    [
        ("alice@host:5000", "ambiguous"),
        ("justahost", "expected HOST:PORT"),
        ("-oProxyCommand=x:dir", "not a host name"),
        ("host name:dir", "not a host name"),
        ("ssh://h:99999/x", "outside 1..65535"),
        ("ssh://h:port/x", "expected ssh://"),
        ("[::1", r"expected \[ADDRESS\]"),
        ("-l@host:dir", "bad user name"),
    ],
)
def test_bad_destinations(dest: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_destination(dest)


def test_remote_dir() -> None:
    assert [remote_dir(p) for p in ("", "~", "~/", "~/in", "in", "/abs")] == [
        ".",
        ".",
        ".",
        "in",
        "in",
        "/abs",
    ]


def test_the_ssh_command_line() -> None:
    r = RemoteReceiver(
        SshTarget("h.example", "-odd dir; rm -rf ~", "alice", 2222),
        SshConfig("python3 -m xfer.cli", "ssh -F 'my cfg'"),
    )
    argv = r.command()
    assert argv[:8] == ["ssh", "-F", "my cfg", "-p", "2222", "-l", "alice", "-T"]
    assert argv[8:10] == ["--", "h.example"]
    assert shlex.split(argv[10]) == [  # what the far shell runs: every word quoted
        "exec",
        "python3",
        "-m",
        "xfer.cli",
        "recv",
        "--stdio",
        "--listen=0.0.0.0:0",
        "--root=-odd dir; rm -rf ~",
    ]


# ------------------------------------------------------------------------------ the sshd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def sshd(tmp_path_factory) -> Iterator[Path]:
    """An sshd on 127.0.0.1; yields the ssh client config file that reaches it."""
    if not os.path.exists(SSHD):
        pytest.skip("openssh-server is not installed (scripts/setup.sh installs it)")
    if os.geteuid() != 0:
        pytest.skip("sshd must run as root to log users in")
    d = tmp_path_factory.mktemp("sshd")
    for key in ("id_ed25519", "host_key"):
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / key)], check=True
        )
    shutil.copy(d / "id_ed25519.pub", d / "authorized_keys")
    port = _free_port()
    (d / "sshd.conf").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\n"
        f"AuthorizedKeysFile {d / 'authorized_keys'}\nPermitRootLogin prohibit-password\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        f"StrictModes no\nPidFile {d / 'sshd.pid'}\n"
    )
    hostkey = " ".join((d / "host_key.pub").read_text().split()[:2])
    (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {hostkey}\n")
    (d / "ssh_config").write_text(
        f"Host 127.0.0.1\n  Port {port}\n  IdentityFile {d / 'id_ed25519'}\n"
        f"  IdentitiesOnly yes\n  UserKnownHostsFile {d / 'known_hosts'}\n"
        "  StrictHostKeyChecking yes\n  BatchMode yes\n"
    )
    made_run_sshd = not os.path.isdir("/run/sshd")
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation directory
    subprocess.run([SSHD, "-t", "-f", str(d / "sshd.conf")], check=True)
    proc = subprocess.Popen([SSHD, "-D", "-E", str(d / "sshd.log"), "-f", str(d / "sshd.conf")])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield d / "ssh_config"
    finally:
        proc.terminate()
        proc.wait(10)
        if made_run_sshd:
            shutil.rmtree("/run/sshd", ignore_errors=True)


def _send(config: Path, *args: str, remote_xfer: str = REMOTE_XFER) -> list[str]:
    return [
        sys.executable,
        "-m",
        "xfer.cli",
        "send",
        "--ssh",
        f"ssh -F {shlex.quote(str(config))}",
        "--remote-xfer",
        remote_xfer,
        *args,
    ]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def remote_receivers(marker: str) -> list[str]:
    """``xfer recv --stdio`` processes (and ssh clients) whose command line names ``marker``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in cmd and "--stdio" in cmd:
            found.append(f"{pid}: {cmd}")
    return found


def _gone(marker: str, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := remote_receivers(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_send_tree_over_ssh(sshd: Path, tmp_path) -> None:
    src = make_tree(str(tmp_path / "src" / "tree"), seed=3)
    dest = tmp_path / "far" / "in"
    out = subprocess.run(
        _send(
            sshd, src, f"root@127.0.0.1:{dest}", "--streams", "3", "--encryption", "on", "--json"
        ),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    summary = json.loads(out.stdout.splitlines()[-1])
    assert out.returncode == 0 and summary["verified"], (summary, out.stderr)
    assert summary["encryption"] == summary["receiver"]["encryption"] == "aes-256-gcm"
    assert trees_equal(src, str(dest / "tree"))
    assert _gone(str(dest), 10) == []


def test_auto_encryption_is_off_to_loopback_and_the_summary_says_so(sshd: Path, tmp_path) -> None:
    src = tmp_path / "f.bin"
    src.write_bytes(os.urandom(3 << 20))
    dest = tmp_path / "far2"
    out = subprocess.run(
        _send(sshd, str(src), f"ssh://root@127.0.0.1/{dest}", "--json"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=120,
    )
    summary = json.loads(out.stdout.splitlines()[-1])
    assert out.returncode == 0 and summary["encryption"] == "off", (summary, out.stderr)
    assert (dest / "f.bin").read_bytes() == src.read_bytes()
    assert _gone(str(dest), 10) == []


def test_missing_remote_xfer_is_one_line_and_exit_2(sshd: Path, tmp_path) -> None:
    src = tmp_path / "f.bin"
    src.write_bytes(b"x")
    out = subprocess.run(
        _send(sshd, str(src), f"root@127.0.0.1:{tmp_path / 'far3'}", remote_xfer="/nope/xfer"),
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert out.returncode == 2, out
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "not found" in lines[0] and "--remote-xfer" in lines[0], lines
    assert not (tmp_path / "far3" / "f.bin").exists()


def test_killed_sender_leaves_no_receiver(sshd: Path, tmp_path) -> None:
    src = tmp_path / "big.bin"
    src.write_bytes(os.urandom(64 << 20))
    dest = tmp_path / "far4"
    proc = subprocess.Popen(
        _send(sshd, str(src), f"root@127.0.0.1:{dest}", "--streams", "2", "--stream-rate", "20M"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    try:
        deadline = time.monotonic() + 60
        while not remote_receivers(str(dest)) or not any((dest / PARTIAL_DIR).glob("*")):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the remote receiver never started writing"
            time.sleep(0.1)
        assert proc.poll() is None  # mid-transfer (64 MiB at 40 Mbit/s takes ~13 s)
        for cmd in remote_receivers(str(dest)):  # the key went over the channel, not argv
            assert not re.search(r"[0-9a-f]{32}", cmd.split(":", 1)[1]), cmd
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        left = _gone(str(dest), 10)
        assert left == [], left
        assert not (dest / "big.bin").exists()  # never delivered half-written
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_receiver_exits_when_the_sender_dies_before_connecting(sshd: Path, tmp_path) -> None:
    """The far side's only link to a sender that never connected is the SSH channel: when the
    sender is SIGKILLed, its ssh sees EOF on stdin, the far side sees EOF on its stdin and exits
    (and so does the orphaned ssh)."""
    dest = tmp_path / "far5"
    code = (
        "import sys, time\n"
        "from xfer.ssh import RemoteReceiver, SshConfig, parse_destination\n"
        f"r = RemoteReceiver(parse_destination({f'root@127.0.0.1:{dest}'!r}), "
        f"SshConfig({REMOTE_XFER!r}, {f'ssh -F {sshd}'!r}))\n"
        "print(r.start()[0], flush=True)\n"
        "time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=_env()
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        socket.create_connection(("127.0.0.1", port), timeout=5).close()  # it listens
        assert remote_receivers(str(dest))
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        assert _gone(str(dest), 10) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
