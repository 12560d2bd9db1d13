# SPDX-License-Identifier: GPL-2.0-only
"""Small shared helpers: paths, logging, subprocess wrappers, errors."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

# tests/harness/util.py: the harness library, beside the suites (tests/suites),
# the guest side (tests/guest) and host setup (tests/setup); bench/ uses it too.
HARNESS_DIR = Path(__file__).resolve().parent
TESTS_DIR = HARNESS_DIR.parent
REPO_ROOT = TESTS_DIR.parent
SETUP_DIR = TESTS_DIR / "setup"
GUEST_DIR = TESTS_DIR / "guest"
BENCH_DIR = REPO_ROOT / "bench"


class VmTestError(Exception):
    """Any harness-level failure (setup, boot, agent, QMP...)."""


class CheckFailed(AssertionError):
    """A test expectation was not met."""


def cache_dir() -> Path:
    """${VNET_CACHE:-$HOME/.cache/virtio-net-dkms}"""
    env = os.environ.get("VNET_CACHE")
    base = Path(env) if env else Path.home() / ".cache" / "virtio-net-dkms"
    return base


def timeout_scale() -> float:
    """VNET_TIMEOUT_SCALE: factor for boot, test and guest command timeouts
    (a KASAN/lockdep guest kernel under TCG is several times slower)."""
    try:
        return max(1.0, float(os.environ.get("VNET_TIMEOUT_SCALE", "1") or 1))
    except ValueError:
        return 1.0


_T0 = time.monotonic()
VERBOSE = int(os.environ.get("VNET_VERBOSE", "0") or 0)


def set_verbose(level: int) -> None:
    global VERBOSE
    VERBOSE = level


def log(msg: str, level: int = 0) -> None:
    """Progress message on stderr, prefixed with seconds since start."""
    if level <= VERBOSE:
        sys.stderr.write(f"[{time.monotonic() - _T0:7.1f}] {msg}\n")
        sys.stderr.flush()


def run(cmd, check: bool = True, capture: bool = True, timeout: float | None = 120,
        **kw) -> subprocess.CompletedProcess:
    """subprocess.run with text output; raises VmTestError with output on failure."""
    if isinstance(cmd, str):
        cmd = ["/bin/sh", "-c", cmd]
    log("host$ " + " ".join(shlex.quote(str(c)) for c in cmd), 2)
    try:
        cp = subprocess.run([str(c) for c in cmd], text=True, timeout=timeout,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.PIPE if capture else None, **kw)
    except subprocess.TimeoutExpired as e:
        raise VmTestError(f"host command timed out after {timeout}s: {cmd}") from e
    if check and cp.returncode != 0:
        raise VmTestError(f"host command failed (rc={cp.returncode}): "
                          f"{' '.join(map(str, cmd))}\n{cp.stdout or ''}{cp.stderr or ''}")
    return cp


def tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])
