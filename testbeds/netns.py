"""Thin helpers around iproute2 and friends: run in a namespace, list and remove namespaces.

Every namespace the testbed creates is named ``xtb-<testbed name>-<host>``; :func:`down`
removes only the ones of one testbed name (or all ``xtb-`` ones when asked), after killing
every process still inside them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

NS_PREFIX = "xtb-"
STATE_DIR = Path(os.environ.get("XFER_TESTBED_STATE", "/run/xfer-testbed"))


class NetnsError(RuntimeError):
    """A command that sets up the testbed failed (the message has the command and its stderr)."""


def ns_name(testbed: str, host: str) -> str:
    """Namespace name of ``host`` in testbed ``testbed``."""
    return f"{NS_PREFIX}{testbed}-{host}"


def in_ns(ns: str, cmd: Sequence[str]) -> list[str]:
    """``cmd`` prefixed so that it runs inside namespace ``ns``."""
    return ["ip", "netns", "exec", ns, *cmd]


def sh(cmd: Sequence[str], *, input: str | None = None, check: bool = True) -> str:
    """Run a setup command; raise :class:`NetnsError` with its stderr when it fails."""
    proc = subprocess.run(list(cmd), input=input, capture_output=True, text=True)
    if check and proc.returncode != 0:
        shown = " ".join(cmd)
        if input:
            shown += f" <<EOF\n{input.strip()}\nEOF"
        raise NetnsError(
            f"testbed setup command failed ({proc.returncode}): {shown}\n{proc.stderr.strip()}"
        )
    return proc.stdout


def ip_batch(ns: str | None, lines: Sequence[str]) -> None:
    """Run many ``ip`` commands at once (``ip -batch``), inside ``ns`` if given."""
    if not lines:
        return
    cmd = ["ip", "-n", ns, "-batch", "-"] if ns else ["ip", "-batch", "-"]
    sh(cmd, input="\n".join(lines) + "\n")


def list_namespaces(prefix: str = NS_PREFIX) -> list[str]:
    """Names of existing namespaces that start with ``prefix``."""
    out = sh(["ip", "-json", "netns", "list"], check=False).strip()
    names = [entry["name"] for entry in json.loads(out)] if out else []
    return sorted(n for n in names if n.startswith(prefix))


def ns_pids(ns: str) -> list[int]:
    """Pids of the processes whose network namespace is ``ns``."""
    out = sh(["ip", "netns", "pids", ns], check=False)
    return [int(p) for p in out.split() if p.isdigit()]


def kill_pids(pids: Sequence[int], timeout: float = 3.0) -> None:
    """SIGTERM, wait up to ``timeout``, then SIGKILL what is left."""
    live = list(pids)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in live:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + (timeout if sig == signal.SIGTERM else 1.0)
        while live and time.monotonic() < deadline:
            live = [p for p in live if _alive(p)]
            if live:
                time.sleep(0.02)
        if not live:
            return


def _alive(pid: int) -> bool:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def delete_namespaces(names: Sequence[str]) -> None:
    """Kill every process inside each namespace, then delete it (idempotent)."""
    for ns in names:
        kill_pids(ns_pids(ns))
    for ns in names:
        sh(["ip", "netns", "del", ns], check=False)


def state_file(name: str) -> Path:
    """Where the state of testbed ``name`` is kept between processes."""
    return STATE_DIR / f"{name}.json"


def read_state(name: str) -> dict | None:
    """The saved state of testbed ``name``, or None."""
    try:
        data: dict = json.loads(state_file(name).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None
    return data


def running_testbeds() -> list[str]:
    """Names of testbeds that have a state file or namespaces left."""
    names = {p.stem for p in STATE_DIR.glob("*.json")} if STATE_DIR.exists() else set()
    for ns in list_namespaces():
        names.add(ns[len(NS_PREFIX) :].rsplit("-", 1)[0])
    return sorted(names)


def in_use(name: str) -> bool:
    """True if testbed ``name`` belongs to another process that is still running."""
    owner = int((read_state(name) or {}).get("owner_pid") or 0)
    return owner > 0 and owner != os.getpid() and _alive(owner)


def down(name: str | None = None, *, include_in_use: bool = False) -> list[str]:
    """Remove testbed ``name``, also after a crash; None: every ``xtb-`` testbed not in use.

    Stops its delay line and background flows (pids from the state file, then every process
    still inside its namespaces), deletes its namespaces (which removes its interfaces,
    qdiscs and firewall rules with them) and its state file. Returns the namespaces removed.
    With ``name`` None, testbeds whose owning process is alive (a ``with Testbed(...)`` in
    another process) are left alone unless ``include_in_use``; ``xfer testbed up`` does not
    stay alive, so its testbeds count as not in use.
    """
    if name is not None:
        names = [name]
    else:
        names = [n for n in running_testbeds() if include_in_use or not in_use(n)]
    removed: list[str] = []
    for tb in names:
        state = read_state(tb) or {}
        pids = [int(p) for p in state.get("pids", {}).values() if p]
        kill_pids([p for p in pids if _alive(p)])
        prefix = ns_name(tb, "")
        spaces = [ns for ns in list_namespaces(prefix) if ns.count("-") == prefix.count("-")]
        spaces = sorted(
            set(spaces) | {ns for ns in state.get("namespaces", []) if ns in list_namespaces()}
        )
        delete_namespaces(spaces)
        removed += spaces
        for suffix in (".json", ".log"):
            with contextlib.suppress(FileNotFoundError):
                (STATE_DIR / f"{tb}{suffix}").unlink()
    return removed
