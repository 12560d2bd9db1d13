# SPDX-License-Identifier: GPL-2.0-only
"""Per-guest network namespaces holding the tap backends and host-side tools.

Each guest gets a fresh namespace `vnet-<pid>-<n>`; QEMU runs inside it, so the
taps, their addresses and every host-side helper (iperf3 -s, socat, sockperf
server) live there and traffic can only go between the guest and that
namespace. cleanup() kills every process still in the namespace (they are all
ours: the namespace was created for this guest) and deletes it.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from .util import VmTestError, log, run

_counter = itertools.count()
PREFIX = "vnet-"


def reap_stale_namespaces() -> None:
    """Delete vnet-<pid>-<n> namespaces left behind by dead harness processes."""
    cp = run(["ip", "netns", "list"], check=False)
    for line in cp.stdout.splitlines():
        m = re.match(rf"({PREFIX}(\d+)-\d+)\b", line)
        if not m:
            continue
        name, pid = m.group(1), int(m.group(2))
        if pid == os.getpid() or Path(f"/proc/{pid}").exists():
            continue
        log(f"removing stale network namespace {name} (pid {pid} is gone)")
        Netns(name, create=False).cleanup()


class HostProc:
    """A host-side process running in the namespace, output in a log file."""

    def __init__(self, ns: "Netns", argv: list[str], logfile: Path, **kw):
        self.argv = argv
        self.logfile = logfile
        self._fh = open(logfile, "w")
        self.p = subprocess.Popen(["ip", "netns", "exec", ns.name, *argv],
                                  stdout=self._fh, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True, **kw)
        ns.procs.append(self)

    @property
    def pid(self) -> int:
        return self.p.pid

    def alive(self) -> bool:
        return self.p.poll() is None

    def wait(self, timeout: float | None = None) -> int:
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            raise VmTestError(f"host process timed out after {timeout}s: {self.argv}") from None

    def output(self) -> str:
        self._fh.flush()
        return self.logfile.read_text(errors="replace")

    def stop(self, sig=signal.SIGTERM, grace: float = 3.0) -> int | None:
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.p.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.p.wait(5)
        self._fh.close()
        return self.p.returncode


class Netns:
    def __init__(self, name: str | None = None, create: bool = True, workdir: Path | None = None):
        self.name = name or f"{PREFIX}{os.getpid()}-{next(_counter)}"
        self.workdir = Path(workdir) if workdir else Path("/tmp")
        self.procs: list[HostProc] = []
        self.taps: list[str] = []
        self._nproc = 0
        self.created = False
        if create:
            run(["ip", "netns", "add", self.name])
            self.created = True
            self.run(["ip", "link", "set", "lo", "up"])

    def __repr__(self):
        return f"Netns({self.name})"

    def argv(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    def run(self, argv, check=True, timeout=120) -> subprocess.CompletedProcess:
        """Run a command in the namespace and wait (argv list or shell string)."""
        if isinstance(argv, str):
            argv = ["/bin/sh", "-c", argv]
        return run(self.argv([str(a) for a in argv]), check=check, timeout=timeout)

    def spawn(self, argv, name: str | None = None) -> HostProc:
        """Start a background command in the namespace (argv list or shell string)."""
        if isinstance(argv, str):
            argv = ["/bin/sh", "-c", argv]
        self._nproc += 1
        tag = name or Path(str(argv[0])).name
        logfile = self.workdir / f"host-{self._nproc:02d}-{tag}.log"
        return HostProc(self, [str(a) for a in argv], logfile)

    def add_tap(self, name: str, addr: str, queues: int = 1, mtu: int | None = None) -> None:
        """Create a tap (multi_queue when QEMU will open several queues) with addr."""
        cmd = ["ip", "tuntap", "add", "dev", name, "mode", "tap"]
        # QEMU asks for IFF_MULTI_QUEUE only when queues > 1 and the kernel
        # rejects a TUNSETIFF whose multi-queue flag differs from the device's.
        if queues > 1:
            cmd.append("multi_queue")
        self.run(cmd)
        if mtu:
            self.run(["ip", "link", "set", "dev", name, "mtu", str(mtu)])
        self.run(["ip", "addr", "add", addr, "dev", name])
        self.run(["ip", "link", "set", "dev", name, "up"])
        self.taps.append(name)

    def pids(self) -> list[int]:
        cp = run(["ip", "netns", "pids", self.name], check=False)
        return [int(p) for p in cp.stdout.split() if p.isdigit()]

    def cleanup(self) -> None:
        for p in self.procs:
            try:
                p.stop(grace=1.0)
            except Exception as e:  # keep cleaning up
                log(f"warning: stopping {p.argv}: {e}")
        # anything else still in the namespace (QEMU, helpers' children)
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.pids()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            for _ in range(30):
                if not self.pids():
                    break
                time.sleep(0.1)
        run(["ip", "netns", "del", self.name], check=False)
