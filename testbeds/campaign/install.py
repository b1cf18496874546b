"""Put this xfer on campaign hosts: build a wheel locally, copy it, install it in a venv.

The wheel is built from a clean copy of the source tree (``pip wheel --no-deps
--no-build-isolation``, so no index is needed). On each host the wheel goes into
``WORKDIR/venv``, a venv made with ``--system-site-packages`` so that heavy dependencies
already on the host (torch, pyarrow) are reused: if every ``Requires-Dist`` of the wheel is
already importable there, it is installed with ``--no-deps``, otherwise with its dependencies
(which needs the host to reach a package index). A marker file with the digest of the wheel's contents makes
re-installing the same wheel a no-op, so resuming a campaign is fast.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from testbeds.campaign.remote import RemoteError, RemoteHost

_IGNORE = shutil.ignore_patterns(
    ".git",
    "__pycache__",
    "*.pyc",
    "build",
    "dist",
    "*.egg-info",
    "runs",
    "out",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    "*.parquet",
    "tests",
    "benchmarks",
)

# Run on the host with the venv's python: prints the requirements that are not installed.
_DEPS_CHECK = r"""
import sys, importlib.metadata as md
missing = []
for req in sys.argv[1:]:
    name, _, spec = req.partition(" ")
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        missing.append(req); continue
    try:
        from packaging.specifiers import SpecifierSet
        if spec and have not in SpecifierSet(spec.strip("()")):
            missing.append(req)
    except ImportError:
        pass
print("\n".join(missing))
"""


def project_dir() -> Path:
    """The source tree this xfer was installed from (an editable install or a checkout)."""
    here = Path(__file__).resolve().parents[2]
    if not (here / "setup.cfg").exists():
        raise FileNotFoundError(
            f"no source tree at {here} (xfer was installed from a wheel): pass --wheel PATH"
        )
    return here


def build_wheel(out_dir: Path, source: Path | None = None) -> Path:
    """Build ``xfer-*.whl`` from ``source`` (default: this checkout) into ``out_dir``."""
    src = source or project_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="xfer-wheel-") as tmp:
        copy = Path(tmp) / "src"
        shutil.copytree(src, copy, ignore=_IGNORE)
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "-q",
            "-w",
            str(out_dir),
            str(copy),
        ]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"building the xfer wheel failed: {res.stderr.strip()[-1500:]}")
    wheels = sorted(out_dir.glob("xfer-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise RuntimeError(f"pip wheel produced no xfer-*.whl in {out_dir}")
    return wheels[-1]


def wheel_digest(wheel: Path) -> str:
    """SHA-256 over the wheel's member names and contents (not the zip's timestamps), so
    that rebuilding the same tree gives the same digest and is not installed again."""
    h = hashlib.sha256()
    with zipfile.ZipFile(wheel) as zf:
        for name in sorted(zf.namelist()):
            h.update(name.encode() + b"\0" + zf.read(name) + b"\0")
    return h.hexdigest()


def wheel_requirements(wheel: Path) -> list[str]:
    """The wheel's unconditional ``Requires-Dist`` entries as ``"name spec"`` strings."""
    with zipfile.ZipFile(wheel) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        text = zf.read(meta).decode()
    reqs = []
    for line in text.splitlines():
        if not line.startswith("Requires-Dist:"):
            continue
        req = line.split(":", 1)[1].strip()
        if ";" in req:  # markers: extras and platform conditions are not needed to run
            continue
        m = re.match(r"([A-Za-z0-9_.-]+)\s*(?:\[[^\]]*\])?\s*(.*)", req)
        if m:
            reqs.append(f"{m.group(1)} {m.group(2).strip()}".strip())
    return reqs


def xfer_command(host: RemoteHost) -> list[str]:
    """The argv prefix that runs this campaign's xfer on ``host``."""
    if host.spec.install == "none":
        return ["xfer"]
    return [host.path("venv", "bin", "xfer")]


async def _ensure_venv(host: RemoteHost) -> str:
    venv = host.path("venv")
    py = host.path("venv", "bin", "python")
    if (await host.run(["test", "-x", py], check=False)).exit_status != 0:
        await host.run(
            [host.spec.python, "-m", "venv", "--system-site-packages", "--without-pip", venv]
        )
    if (await host.run([py, "-m", "pip", "--version"], check=False)).exit_status != 0:
        res = await host.run([py, "-m", "ensurepip", "--upgrade"], check=False, timeout=300)
        if res.exit_status != 0:
            raise RemoteError(
                f"{host.name}: no pip for {host.spec.python} (install python3-venv/python3-pip "
                f"on the host): {res.stderr.strip()[-400:]}"
            )
    return py


async def install_on(host: RemoteHost, wheel: Path, log: Callable[[str], None] = print) -> str:
    """Install ``wheel`` on ``host`` unless already there; return ``"installed"``,
    ``"installed-with-deps"``, ``"unchanged"`` or ``"preinstalled"``."""
    if host.spec.install == "none":
        await host.run(["xfer", "--version"])
        return "preinstalled"
    digest = wheel_digest(wheel)
    marker = host.path("venv", ".xfer-wheel-digest")
    py = host.path("venv", "bin", "python")
    have = await host.run(f"test -x {py} && cat {marker}", check=False)
    if have.exit_status == 0 and have.stdout.strip() == digest:
        return "unchanged"
    py = await _ensure_venv(host)
    await host.run(["mkdir", "-p", host.path("wheels")])
    remote_wheel = host.path("wheels", wheel.name)
    await host.put(wheel, remote_wheel)
    reqs = wheel_requirements(wheel)
    check = await host.run([py, "-c", _DEPS_CHECK, *reqs], timeout=120)
    missing = [line for line in check.stdout.splitlines() if line.strip()]
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--force-reinstall"]
    if missing:
        log(
            f"{host.name}: installing xfer with its dependencies (missing: {', '.join(missing[:6])})"
        )
        await host.run([*pip, remote_wheel], timeout=1800)
        how = "installed-with-deps"
    else:
        await host.run([*pip, "--no-deps", remote_wheel], timeout=600)
        how = "installed"
    where = await host.run([py, "-c", "import xfer, sys; print(xfer.__file__)"])
    if not where.stdout.strip().startswith(host.path("venv")):
        raise RemoteError(
            f"{host.name}: the venv imports xfer from {where.stdout.strip()}, not from the "
            "installed wheel (a .pth or PYTHONPATH shadows it)"
        )
    await host.run(f"echo {digest} > {marker}")
    return how
