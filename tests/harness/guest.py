# SPDX-License-Identifier: GPL-2.0-only
"""QEMU guest lifecycle: boot, agent commands, QMP, logs, host-side netns.

    from harness import Guest, Nic, VMConfig, resolve_kernel
    cfg = VMConfig(smp=4, nics=(Nic(queues=4),))
    with Guest(resolve_kernel("6.1"), cfg, driver="stock") as g:
        g.boot()
        rc, out = g.run("ethtool -i eth0")
        g.qmp("set_link", name="nic0", up=False)
        g.check_log()

Each NIC i: a pcie-root-port rp<i> on pcie.0 holding virtio-net-pci id nic<i>
(netdev net<i>, MAC 52:54:00:77:<i>:02) backed by tap vtap<i> in the guest's
own network namespace; host side 10.77.<i>.1/24, guest 10.77.<i>.2/24.
"""

from __future__ import annotations

import atexit
import base64
import itertools
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from . import initramfs, logcheck
from .agent import AGENT_DIR, Agent, AgentError, GuestBg, Result
from .kernels import KernelImage
from .netns import HostProc, Netns, reap_stale_namespaces
from .qmp import QMP
from .util import SETUP_DIR, CheckFailed, VmTestError, cache_dir, log, tail, timeout_scale

QEMU = os.environ.get("VNET_QEMU", "qemu-system-x86_64")
# Newer QEMUs, fetched on first use: name -> (setup script, what it is)
_NEWER_QEMU = {
    "backports": ("qemu-backports.sh", "QEMU from bookworm-backports"),
    "sid": ("qemu-sid.sh", "QEMU from Debian sid"),
}
_NEWER_QEMU_PATH: dict[str, str] = {}


def qemu_binary(which: str) -> str:
    """QEMU for a boot: "" the default (VNET_QEMU or the system's 7.2),
    "backports" the newer one from bookworm-backports (10.0,
    tests/setup/qemu-backports.sh), "sid" Debian sid's (11.1, run with sid's
    libraries, tests/setup/qemu-sid.sh); each is fetched into the cache once."""
    if not which:
        return QEMU
    if which not in _NEWER_QEMU:
        raise VmTestError(f"unknown QEMU {which!r}")
    if which not in _NEWER_QEMU_PATH:
        script, what = _NEWER_QEMU[which]
        r = subprocess.run(["bash", str(SETUP_DIR / script)], capture_output=True, text=True)
        if r.returncode != 0:
            raise VmTestError(f"no {what}:\n{tail(r.stderr, 15)}")
        _NEWER_QEMU_PATH[which] = r.stdout.strip().splitlines()[-1]
    return _NEWER_QEMU_PATH[which]
# sysrq_always_enabled: Guest.sysrq() (QMP sendkey through the PS/2
# keyboard) must work on a guest that no longer answers its agent.
DEFAULT_CMDLINE = ("console=ttyS0,115200 nokaslr panic=-1 no_console_suspend "
                   "mitigations=off sysrq_always_enabled")
_LIVE: list["Guest"] = []
# Printed by every kernel just before it starts userspace.
KERNEL_REACHED_INIT = "Run /init as init process"
# A first boot whose kernel has not printed that by STALL_BEFORE_INIT_S,
# or has panicked before it, is taken for the rare TCG stall before /init
# and booted again (Guest.boot()): no module of ours is loaded yet.  A
# 6.1 kernel gets there in 2-6 s on this project's hosts, and a stalled
# one never does, so the whole boot_timeout would only be lost (120 s in
# the CI run of 2026-12-02).  Seen so far: a 7.2 kernel's "Fatal
# exception in interrupt" panic about a second into the boot (2026-12-02);
# a 7.2 kernel that stalled and whose second boot then oopsed ("int3" in
# sched_clock_cpu, no module loaded) before /init (CI, 2026-12-06): so up
# to BOOT_ATTEMPTS boots, the last one without the stall limit.
BOOT_ATTEMPTS = 3
KERNEL_PANIC = "Kernel panic - not syncing"
STALL_BEFORE_INIT_S = 40.0
_counter = itertools.count()


@dataclass(frozen=True)
class Nic:
    """One virtio-net-pci NIC.

    props: extra -device properties, e.g. "mrg_rxbuf=off,packed=on".
    mtu: MTU set on the tap and in the guest (default: host_mtu from props).
    When queues > 1, "mq=on,vectors=2N+2" is added unless props set them."""
    queues: int = 1
    props: str = ""
    mtu: int | None = None
    netdev_opts: str = ""
    numa_node: int | None = None  # place the root port on a pxb-pcie of that node

    def prop_dict(self) -> dict[str, str]:
        out = {}
        for kv in filter(None, self.props.split(",")):
            k, _, v = kv.partition("=")
            out[k] = v
        return out

    def effective_mtu(self) -> int | None:
        if self.mtu:
            return self.mtu
        hm = self.prop_dict().get("host_mtu")
        return int(hm) if hm else None

    def describe(self) -> str:
        s = f"{self.queues}q"
        if self.props:
            s += f" {self.props}"
        if self.mtu:
            s += f" mtu={self.mtu}"
        return s


@dataclass(frozen=True)
class VMConfig:
    """Everything that defines a boot (hashable: the runner shares boots by it)."""
    smp: int = 2
    memory: int = 1024  # MiB
    # None: "max", or "max,vendor=GenuineIntel" when threads > 1. TCG's "max"
    # CPU says AuthenticAMD family 15, for which Linux ignores the SMT/core
    # topology (no TOPOEXT leaf) and sees every vCPU as a separate core; with
    # the Intel vendor string it enumerates threads/cores from CPUID leaves
    # 4/0xB as configured. Not the default: 5.10 boots ~2x slower with it.
    cpu: str | None = None
    sockets: int | None = None
    cores: int | None = None
    threads: int | None = None
    maxcpus: int | None = None
    numa_nodes: int = 0
    nics: tuple = (Nic(),)
    cmdline: str = ""
    qemu_args: tuple = ()
    trace_events: tuple = ()
    spare_root_ports: int = 1
    modopts: str = ""
    extra_modules: tuple = ()
    # more host binaries (with their libraries) in the initramfs, e.g. the
    # traffic matrix's servers ("/usr/sbin/nginx"); a separate cached base
    extra_binaries: tuple = ()
    boot_timeout: float = 120.0
    # "" the default QEMU, "backports" or "sid" a newer one (see qemu_binary)
    qemu: str = ""

    def with_(self, **kw) -> "VMConfig":
        return replace(self, **kw)

    def cpu_model(self) -> str:
        if self.cpu:
            return self.cpu
        return "max,vendor=GenuineIntel" if (self.threads or 1) > 1 else "max"

    def topology(self) -> str:
        s, c, t = self.sockets, self.cores, self.threads
        if s is None and c is None and t is None:
            return f"cpus={self.smp}"
        t = t or 1
        s = s or (1 if c else max(1, self.smp // t))
        c = c or max(1, self.smp // (s * t))
        if s * c * t != (self.maxcpus or self.smp):
            raise VmTestError(f"topology {s}x{c}x{t} does not match {self.maxcpus or self.smp} cpus")
        out = f"cpus={self.smp},sockets={s},cores={c},threads={t}"
        if self.maxcpus:
            out += f",maxcpus={self.maxcpus}"
        return out

    def describe(self) -> str:
        parts = [f"smp={self.smp}"]
        if self.sockets or self.cores or self.threads:
            parts.append(self.topology())
        if self.numa_nodes:
            parts.append(f"numa={self.numa_nodes}")
        parts.append(f"mem={self.memory}M")
        parts += [f"nic{i}[{n.describe()}]" for i, n in enumerate(self.nics)]
        if self.cmdline:
            parts.append(f"cmdline+='{self.cmdline}'")
        if self.modopts:
            parts.append(f"modopts='{self.modopts}'")
        if self.qemu:
            parts.append(f"qemu={self.qemu}")
        return " ".join(parts)


class NicInfo:
    """Runtime facts about NIC i of a booted guest."""

    def __init__(self, index: int, spec: Nic):
        self.index = index
        self.spec = spec
        self.id = f"nic{index}"
        self.netdev = f"net{index}"
        self.root_port = f"rp{index}"
        self.tap = f"vtap{index}"
        self.mac = f"52:54:00:77:{index:02x}:02"
        self.host_ip = f"10.77.{index}.1"
        self.guest_ip = f"10.77.{index}.2"
        self.prefix = 24
        self.ifname: str | None = None  # filled from the guest after boot

    @property
    def queues(self) -> int:
        return self.spec.queues

    def device_args(self) -> str:
        props = self.spec.prop_dict()
        if self.spec.queues > 1:
            props.setdefault("mq", "on")
            props.setdefault("vectors", str(2 * self.spec.queues + 2))
        props.setdefault("romfile", "")
        extra = ",".join(f"{k}={v}" if v != "" or k == "romfile" else k for k, v in props.items())
        return (f"virtio-net-pci,id={self.id},netdev={self.netdev},bus={self.root_port},"
                f"mac={self.mac}" + ("," + extra if extra else ""))

    def netdev_args(self) -> str:
        s = (f"tap,id={self.netdev},ifname={self.tap},script=no,downscript=no,vhost=off,"
             f"queues={self.spec.queues}")
        return s + ("," + self.spec.netdev_opts if self.spec.netdev_opts else "")

    def __repr__(self):
        return f"NicInfo({self.id} {self.ifname} {self.guest_ip})"


class Guest:
    """One QEMU guest. kernel: a KernelImage or a key ("6.1") for resolve_kernel()."""

    def __init__(self, kernel: KernelImage | str, config: VMConfig = VMConfig(), driver: str = "stock",
                 module: str | Path | None = None, name: str | None = None,
                 workdir: str | Path | None = None, keep_workdir: bool = False):
        if driver not in ("stock", "ours"):
            raise VmTestError(f"driver must be stock or ours, not {driver}")
        if driver == "ours" and not module:
            raise VmTestError("driver=ours needs a module path")
        if isinstance(kernel, str):
            from .kernels import resolve_kernel
            kernel = resolve_kernel(kernel)
        self.kernel = kernel
        self.cfg = config
        self.driver = driver
        self.module = Path(module).resolve() if module else None
        self.name = name or f"vmtest-{os.getpid()}-{next(_counter)}"
        self.keep_workdir = keep_workdir
        if workdir:
            self.workdir = Path(workdir)
            self.workdir.mkdir(parents=True, exist_ok=True)
        else:
            # short path: unix socket paths are limited to 107 bytes
            self.workdir = Path(tempfile.mkdtemp(prefix=f"{self.name}-", dir="/tmp"))
        self.console_path = self.workdir / "console.log"
        self.qemu_log_path = self.workdir / "qemu.log"
        self.agent_log_path = self.workdir / "agent.log"
        self.qmp_log_path = self.workdir / "qmp.log"
        self.dmesg_path = self.workdir / "dmesg.log"
        self.trace_path = self.workdir / "trace.log"
        self.nics = [NicInfo(i, n) for i, n in enumerate(config.nics)]
        self.netns: Netns | None = None
        self.proc: subprocess.Popen | None = None
        self.agent: Agent | None = None
        self._qmp: QMP | None = None
        self._files: list = []
        self.boot_time: float | None = None
        self.qemu_argv: list[str] = []
        self.closed = False
        self.read_to: tuple[int, int] = (0, 0)  # end of the last new_log()
        self.log_checked: tuple[int, int] = (0, 0)  # the test runner's checks read to here

    # --- context manager ---------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.shutdown()

    # --- boot ---------------------------------------------------------------
    def _initrd(self) -> Path:
        cfg = self.cfg
        if self.driver == "ours":
            from .modinfo import modinfo_field
            vermagic = modinfo_field(self.module, "vermagic").split()
            if not vermagic or vermagic[0] != self.kernel.release:
                raise VmTestError(f"{self.module} was built for "
                                  f"{vermagic[0] if vermagic else '?'}, the guest kernel is "
                                  f"{self.kernel.release}")
        spec = initramfs.Spec(kernel=self.kernel, extra_modules=tuple(cfg.extra_modules),
                              binaries=initramfs.DEFAULT_BINARIES + tuple(cfg.extra_binaries))
        base = initramfs.build_base(spec)
        nics = " ".join(f"{n.mac},{n.guest_ip}/{n.prefix},{n.spec.effective_mtu() or 0}"
                        for n in self.nics)
        conf = {"DRIVER": self.driver, "MODOPTS": cfg.modopts, "NICS": nics}
        overlay = initramfs.build_overlay(self.kernel, conf, self.module if self.driver == "ours"
                                          else None, initramfs.base_modules(base))
        out = self.workdir / "initrd.cpio"
        with open(out, "wb") as f, open(base, "rb") as b:
            shutil.copyfileobj(b, f)
            f.write(overlay)
        return out

    def _qemu_argv(self, initrd: Path) -> list[str]:
        cfg = self.cfg
        w = self.workdir
        cmdline = f"{DEFAULT_CMDLINE} vnet.driver={self.driver}"
        if cfg.modopts:
            cmdline += f' vnet.modopts="{cfg.modopts}"'
        if cfg.cmdline:
            cmdline += " " + cfg.cmdline
        a = [qemu_binary(cfg.qemu), "-name", self.name,
             "-machine", "q35", "-accel", "tcg,thread=multi", "-cpu", cfg.cpu_model(),
             "-smp", cfg.topology(), "-m", str(cfg.memory),
             "-nodefaults", "-no-user-config", "-display", "none", "-vga", "none",
             "-no-reboot",
             "-kernel", str(self.kernel.boot_kernel()), "-initrd", str(initrd), "-append", cmdline,
             "-chardev", f"socket,id=qmp,path={w}/qmp.sock,server=on,wait=off",
             "-mon", "chardev=qmp,mode=control",
             "-chardev", f"file,id=con,path={self.console_path}",
             "-serial", "chardev:con",
             # wait=on: QEMU waits for our connection, so no agent output is lost
             "-chardev", f"socket,id=agent,path={w}/agent.sock,server=on,wait=on",
             "-serial", "chardev:agent"]
        if cfg.numa_nodes:
            n = cfg.numa_nodes
            if cfg.smp % n or cfg.memory % n:
                raise VmTestError(f"{cfg.smp} cpus / {cfg.memory}M not divisible in {n} nodes")
            per = cfg.smp // n
            for i in range(n):
                a += ["-object", f"memory-backend-ram,id=mem{i},size={cfg.memory // n}M",
                      "-numa", f"node,nodeid={i},memdev=mem{i},cpus={i * per}-{i * per + per - 1}"]
        pxbs = sorted({n.spec.numa_node for n in self.nics if n.spec.numa_node is not None})
        for node in pxbs:
            a += ["-device", f"pxb-pcie,id=pxb{node},bus_nr={0x80 + 0x10 * node},"
                             f"numa_node={node},bus=pcie.0"]
        chassis = itertools.count(1)
        for n in self.nics:
            bus = f"pxb{n.spec.numa_node}" if n.spec.numa_node is not None else "pcie.0"
            a += ["-device", f"pcie-root-port,id={n.root_port},bus={bus},chassis={next(chassis)}",
                  "-netdev", n.netdev_args(), "-device", n.device_args()]
        for i in range(cfg.spare_root_ports):
            a += ["-device", f"pcie-root-port,id=rpspare{i},bus=pcie.0,chassis={next(chassis)}"]
        if cfg.trace_events:
            ev = w / "trace-events"
            ev.write_text("\n".join(cfg.trace_events) + "\n")
            a += ["-trace", f"events={ev}", "-D", str(self.trace_path)]
        a += list(cfg.qemu_args)
        return a

    def boot(self) -> "Guest":
        if self.proc:
            raise VmTestError("already booted")
        t0 = time.monotonic()
        for attempt in range(1, BOOT_ATTEMPTS + 1):
            last_try = attempt == BOOT_ATTEMPTS
            _LIVE.append(self)
            try:
                self._boot(stall_s=None if last_try else STALL_BEFORE_INIT_S)
                break
            except BaseException as e:
                # keep the workdir: the caller may want the logs (save_logs/cleanup)
                early = KERNEL_REACHED_INIT not in self.console_log()
                self.shutdown(quiet=True, keep_workdir=True)
                if isinstance(e, VmTestError) and not last_try and early:
                    # The kernel stalled before running /init, i.e. before
                    # any driver under test was loaded: a rare TCG hang on a
                    # loaded machine.  A fresh boot; the earlier console logs
                    # are kept as console.attemptN.log.
                    # what it did, for whoever looks into these
                    con = self.console_log()
                    if KERNEL_PANIC in con:
                        log(f"{self.name}: kernel panicked before /init; booting once more; "
                            f"its console ended:\n{tail(con, 30)}", 0)
                    else:
                        last = tail(con, 3).replace("\n", " | ")
                        log(f"{self.name}: kernel stalled before /init; booting once more "
                            f"(console ended: {last[-300:]})", 0)
                    self._reset_for_retry()
                    continue
                if isinstance(e, VmTestError):
                    raise VmTestError(f"{e}\n(logs in {self.workdir})") from None
                raise
        self.boot_time = time.monotonic() - t0
        if os.environ.get("VNET_KALLSYMS") == "1":
            self._save_kallsyms()
        log(f"{self.name}: booted in {self.boot_time:.1f}s ({self.kernel.release}, "
            f"driver={self.driver})", 1)
        return self

    def _boot(self, stall_s: float | None = None):
        """Start QEMU and wait for the guest's agent; with @stall_s, give up
        once the kernel has not reached /init within that many seconds
        (scaled)."""
        initrd = self._initrd()
        self.netns = Netns(workdir=self.workdir)
        for n in self.nics:
            self.netns.add_tap(n.tap, f"{n.host_ip}/{n.prefix}", n.queues, n.spec.effective_mtu())
        self.qemu_argv = self._qemu_argv(initrd)
        (self.workdir / "qemu.cmd").write_text(" ".join(shlex.quote(x) for x in self.qemu_argv) + "\n")
        log(f"{self.name}: starting QEMU in {self.netns.name}: {self.cfg.describe()}", 1)
        qlog = open(self.qemu_log_path, "w")
        self._files.append(qlog)
        self.proc = subprocess.Popen(self.netns.argv(self.qemu_argv), stdin=subprocess.DEVNULL,
                                     stdout=qlog, stderr=subprocess.STDOUT, start_new_session=True)
        # the agent chardev has wait=on: QEMU blocks until we connect to it
        sock_path = self.workdir / "agent.sock"
        deadline = time.monotonic() + 30
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            if self.proc.poll() is not None:
                raise VmTestError(f"QEMU exited at startup (rc={self.proc.returncode}):\n"
                                  f"{tail(self.qemu_log(), 30)}")
            try:
                sock.connect(str(sock_path))
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise VmTestError("QEMU did not create the agent socket in 30s") from None
                time.sleep(0.05)
        alog = open(self.agent_log_path, "w")
        self._files.append(alog)
        self.agent = Agent(sock, alog)
        qlogf = open(self.qmp_log_path, "w")
        self._files.append(qlogf)
        try:
            self._qmp = QMP(str(self.workdir / "qmp.sock"), logfile=qlogf)
        except VmTestError as e:
            time.sleep(0.5)
            if not self.alive():
                e = f"QEMU exited (rc={self.proc.returncode})"
            raise VmTestError(f"{self.name}: boot failed: {e}\n--- console tail ---\n"
                              f"{tail(self.console_log(), 40)}\n--- qemu ---\n"
                              f"{tail(self.qemu_log(), 10)}") from None
        t_ready = time.monotonic()
        stall_at = t_ready + stall_s * timeout_scale() if stall_s else None
        early = True

        def alive() -> bool:
            nonlocal early
            if early:
                con = self.console_log()
                if KERNEL_REACHED_INIT in con:
                    early = False
                elif KERNEL_PANIC in con:
                    raise AgentError("the kernel panicked before /init")
                elif stall_at is not None and time.monotonic() > stall_at:
                    raise AgentError(f"the kernel did not reach /init within "
                                     f"{stall_s * timeout_scale():.0f}s")
            return self.alive()

        try:
            status = self.agent.wait_ready(self.cfg.boot_timeout * timeout_scale(),
                                           alive=alive)
        except AgentError as e:
            raise VmTestError(f"{self.name}: boot failed: {e}\n--- console tail ---\n"
                              f"{tail(self.console_log(), 40)}\n--- qemu ---\n"
                              f"{tail(self.qemu_log(), 10)}") from None
        if status != "ok":
            raise VmTestError(f"{self.name}: guest init reported '{status}'\n--- console tail ---\n"
                              f"{tail(self.console_log(), 40)}")
        log(f"{self.name}: agent ready after {time.monotonic() - t_ready:.1f}s", 2)
        self.refresh_nics()

    def _reset_for_retry(self) -> None:
        """Forget a failed boot's QEMU, agent and namespace so boot() can start over."""
        if self.console_path.exists():
            n = 1
            while (self.workdir / f"console.attempt{n}.log").exists():
                n += 1
            self.console_path.rename(self.workdir / f"console.attempt{n}.log")
        self.closed = False
        self.proc = None
        self.agent = None
        self._qmp = None
        self.netns = None
        self._files = []

    def refresh_nics(self) -> None:
        """Re-read the NIC index -> interface name table written by `vnet nicup`."""
        out = self.run("cat /run/vnet/nics", timeout=10, quiet=True).out
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 2 and f[0].isdigit() and int(f[0]) < len(self.nics):
                self.nics[int(f[0])].ifname = f[1]

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- guest commands ---------------------------------------------------------
    def run(self, cmd: str, timeout: float = 60.0, check: bool = False, quiet: bool = False) -> Result:
        """Run a shell command in the guest -> Result (rc, stdout), .err has stderr."""
        if not self.agent:
            raise VmTestError("guest not booted")
        res = self.agent.run(cmd, timeout * timeout_scale(), alive=self.alive, quiet=quiet)
        if check and res.rc != 0:
            raise CheckFailed(f"guest command failed (rc={res.rc}"
                              f"{', timed out' if res.timed_out else ''}): {cmd}\n"
                              f"{tail(res.out, 20)}{tail(res.err, 20)}")
        return res

    def run_ok(self, cmd: str, timeout: float = 60.0) -> str:
        """Run and require rc 0; returns stdout."""
        return self.run(cmd, timeout, check=True).out

    def put_file(self, data: bytes, path: str, mode: int = 0o644) -> None:
        """Write data to path in the guest through the agent (base64 in
        chunks; the serial line moves ~40 KB/s, so keep it small)."""
        b64 = base64.b64encode(data).decode()
        step = 12000
        self.run_ok(f": >{path}.b64", timeout=10)
        for i in range(0, len(b64), step):
            self.run_ok(f"printf %s '{b64[i:i + step]}' >>{path}.b64", timeout=30)
        self.run_ok(f"base64 -d {path}.b64 >{path} && rm {path}.b64 && chmod {mode:o} {path}",
                    timeout=30)

    def run_bg(self, cmd: str) -> GuestBg:
        """Start cmd in the background in the guest; see agent.GuestBg."""
        tok, pid = self.agent.spawn(cmd)
        return GuestBg(self, tok, pid, cmd)

    # --- host side (the guest's network namespace) ------------------------------
    def host(self, cmd, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        """Run a command (argv list or shell string) in the guest's netns."""
        return self.netns.run(cmd, check=check, timeout=timeout)

    def host_bg(self, cmd, name: str | None = None) -> HostProc:
        """Start a host-side background process in the netns (killed at shutdown)."""
        return self.netns.spawn(cmd, name)

    # --- QMP ----------------------------------------------------------------------
    def qmp(self, command: str, timeout: float = 60.0, **args):
        """Execute a QMP command (use __ for '-' in argument names)."""
        return self._qmp.cmd(command, timeout=timeout, **args)

    def wait_event(self, name: str, timeout: float = 30.0, match: dict | None = None) -> dict:
        return self._qmp.wait_event(name, timeout, match)

    def set_link(self, nic: int, up: bool) -> None:
        """QMP set_link on NIC nic (the guest sees a config change / carrier)."""
        self.qmp("set_link", name=self.nics[nic].id, up=up)

    def nic_unplug(self, nic: int, timeout: float = 60.0) -> dict:
        """device_del NIC nic from its root port and wait for DEVICE_DELETED
        (which needs the guest to release the device)."""
        n = self.nics[nic]
        self.qmp("device_del", id=n.id)
        ev = self.wait_event("DEVICE_DELETED", timeout, match={"device": n.id})
        n.ifname = None
        return ev

    def nic_plug(self, nic: int, configure: bool = True, timeout: float = 30.0) -> None:
        """device_add NIC nic again on its root port (same netdev, MAC and
        properties); with configure, run `vnet nicup` for it in the guest."""
        n = self.nics[nic]
        _, _, rest = n.device_args().partition(",")
        props = dict(kv.partition("=")[::2] for kv in rest.split(","))
        self.qmp("device_add", driver="virtio-net-pci", **props)
        if configure:
            self.run_ok(f"vnet nicup {nic}", timeout=timeout)
            self.refresh_nics()

    @property
    def qmp_client(self) -> QMP:
        return self._qmp

    # --- logs ---------------------------------------------------------------------
    def console_log(self) -> str:
        try:
            return self.console_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def qemu_log(self) -> str:
        try:
            return self.qemu_log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def trace_log(self) -> str:
        try:
            return self.trace_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def trace_counts(self, since: int = 0) -> dict[str, int]:
        """Count trace lines per event name (from byte offset since of trace.log)."""
        counts: dict[str, int] = {}
        try:
            with open(self.trace_path, "rb") as f:
                f.seek(since)
                for line in f:
                    m = re.match(rb"(?:\d+@[\d.]+:)?(\w+)", line)
                    if m:
                        k = m.group(1).decode()
                        counts[k] = counts.get(k, 0) + 1
        except FileNotFoundError:
            pass
        return counts

    def trace_events(self, since: int = 0):
        """Yield (event, {field: value}) from trace.log ("name k v k v ..." lines)."""
        try:
            f = open(self.trace_path, "rb")
        except FileNotFoundError:
            return
        with f:
            f.seek(since)
            for line in f:
                words = line.decode(errors="replace").split()
                if not words:
                    continue
                name = re.sub(r"^\d+@[\d.]+:", "", words[0])
                yield name, dict(zip(words[1::2], words[2::2]))

    def trace_offset(self) -> int:
        """Current size of trace.log, for trace_counts/trace_events(since=...)."""
        return self.trace_path.stat().st_size if self.trace_path.exists() else 0

    def drain_dmesg(self) -> None:
        """Append new kernel messages (dmesg -c) to the host-side dmesg.log."""
        if not (self.agent and not self.agent.broken and self.alive()):
            return
        try:
            out = self.run("dmesg -c", timeout=20, quiet=True).out
        except VmTestError:
            return
        with open(self.dmesg_path, "a") as f:
            f.write(out)

    def mark(self) -> tuple[int, int]:
        """Current log positions; check_log(since=mark) only looks after them."""
        self.drain_dmesg()
        sizes = []
        for p in (self.console_path, self.dmesg_path):
            sizes.append(p.stat().st_size if p.exists() else 0)
        return tuple(sizes)

    def new_log(self, since: tuple[int, int] = (0, 0)) -> str:
        """The console and kernel log since a mark; read_to is where it ended."""
        self.drain_dmesg()
        text = []
        ends = []
        for p, off in zip((self.console_path, self.dmesg_path), since):
            end = off
            if p.exists():
                with open(p, "rb") as f:
                    f.seek(off)
                    text.append(f.read().decode(errors="replace"))
                    end = f.tell()
            ends.append(end)
        self.read_to = tuple(ends)
        return "\n".join(text)

    def check_log(self, since: tuple[int, int] = (0, 0), ignore=()) -> None:
        """Raise CheckFailed if the console or dmesg shows warnings, oopses..."""
        msg = logcheck.report(self.new_log(since), ignore)
        if msg:
            raise CheckFailed(msg)

    # --- teardown ------------------------------------------------------------------
    def shutdown(self, quiet: bool = False, keep_workdir: bool | None = None) -> None:
        """Stop QEMU and remove the namespace; safe to call repeatedly and on errors."""
        if self.closed:
            if keep_workdir is False:
                shutil.rmtree(self.workdir, ignore_errors=True)
            return
        self.closed = True
        try:
            if self.alive() and self._qmp:
                try:
                    self._qmp.cmd("quit", timeout=5)
                except Exception:
                    pass
            if self.proc:
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    self.proc.wait(10)
        finally:
            for obj in (self.agent, self._qmp):
                if obj:
                    obj.close()
            if self.netns:
                self.netns.cleanup()
            for f in self._files:
                f.close()
            if self in _LIVE:
                _LIVE.remove(self)
            if not (self.keep_workdir if keep_workdir is None else keep_workdir):
                shutil.rmtree(self.workdir, ignore_errors=True)

    def _kallsyms_file(self) -> Path:
        return cache_dir() / "kallsyms" / self.kernel.release

    def _save_kallsyms(self) -> None:
        """The kernel's own text symbols, once per kernel, for vcpu_dump
        (Debian's System.map is a stub; with nokaslr the addresses are the
        same at every boot).  Reading them through the agent takes about
        100 s, so only with VNET_KALLSYMS=1."""
        f = self._kallsyms_file()
        if f.is_file():
            return
        text = self.run_ok(r"grep -E '^[0-9a-f]+ [tTwW] [^[:space:]]+$' /proc/kallsyms",
                           timeout=120)
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(f)

    def vcpu_dump(self, samples: int = 3, gap: float = 1.0) -> str:
        """Where each vCPU is, a few times (QMP 'info registers -a'): for a
        guest that stopped answering, tells a spinning CPU (and in which
        kernel function) from an idle one."""
        import bisect
        syms: list[tuple[int, str]] = []
        smap = self._kallsyms_file()
        if smap.is_file():
            for line in smap.read_text(errors="replace").splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "tTwW":
                    syms.append((int(f[0], 16), f[2]))
            syms.sort()
        addrs = [a for a, _ in syms]

        def name(rip: int) -> str:
            if rip >= 0xffffffffc0000000:
                return "module code"
            i = bisect.bisect_right(addrs, rip) - 1
            if i < 0:
                return "(no symbols: boot once with VNET_KALLSYMS=1)"
            return f"{syms[i][1]}+{rip - syms[i][0]:#x}"

        out = []
        for s in range(samples):
            try:
                text = self._qmp.cmd("human-monitor-command",
                                     **{"command-line": "info registers -a"}, timeout=10)
            except Exception as e:   # noqa: BLE001 - a diagnostic must not mask the failure
                out.append(f"sample {s}: {e}")
                break
            cpu = "?"
            for line in str(text).splitlines():
                m = re.match(r"CPU#(\d+)", line)
                if m:
                    cpu = m.group(1)
                m = re.search(r"RIP=([0-9a-f]{16}).*?(HLT=\d)", line)
                if m:
                    rip = int(m.group(1), 16)
                    out.append(f"sample {s} cpu {cpu}: rip {rip:#x} {name(rip)} {m.group(2)}")
            time.sleep(gap)
        return "\n".join(out) + "\n"

    def sysrq(self, keys: str = "wt", settle: float = 3.0) -> None:
        """Press alt-sysrq-<key> for each key through QMP (the PS/2
        keyboard, not the agent); the kernel prints the answer on the
        console (w: blocked tasks, t: every task, l: every CPU).  For a
        guest that stopped answering: tells a task stuck in the kernel from
        an agent that never saw its request."""
        for k in keys:
            try:
                self._qmp.cmd("human-monitor-command",
                              **{"command-line": f"sendkey alt-sysrq-{k}"}, timeout=10)
            except Exception as e:   # noqa: BLE001 - a diagnostic must not mask the failure
                log(f"warning: sysrq {k} on {self.name}: {e}")
                return
            time.sleep(settle)

    def hang_probe(self) -> str:
        """For a guest that stopped answering: what the host sent and
        received last, whether the agent still answers a PING, and which
        requests reached it (its requests log).  Tells a request lost on
        the way in from a command stuck in the guest."""
        if not self.agent:
            return "no agent\n"
        a = self.agent
        out = [f"unconsumed agent input ({len(a.buf)} bytes): {a.buf[-3000:]!r}",
               f"last bytes received: {a.rawtail!r}",
               f"last requests sent (host monotonic {time.monotonic():.1f} now): {a.sent}"]
        broken, a.broken = a.broken, None
        try:
            pong = a.ping(timeout=10)
            out.append(f"PING after the hang: {'answered' if pong else 'no answer'}")
            if pong:
                out.append("requests the agent read last:\n" + a.run(
                    f"tail -8 {AGENT_DIR}/requests; cat /proc/tty/driver/serial",
                    timeout=15, quiet=True).out)
        except Exception as e:   # noqa: BLE001 - a diagnostic must not mask the failure
            out.append(f"PING after the hang: {e}")
        finally:
            a.broken = broken
        return "\n".join(out) + "\n"

    def save_logs(self, dest: Path) -> None:
        """Copy the logs of this guest (console, dmesg, agent, qmp, qemu, trace) to dest."""
        dest.mkdir(parents=True, exist_ok=True)
        for p in self.workdir.glob("*"):
            if p.suffix in (".log", ".cmd") and p.is_file():
                shutil.copy2(p, dest / p.name)


def shutdown_all() -> None:
    for g in list(_LIVE):
        try:
            g.shutdown(quiet=True)
        except Exception as e:
            log(f"warning: cleanup of {g.name}: {e}")


atexit.register(shutdown_all)


def install_signal_handlers() -> None:
    """SIGINT/SIGTERM/SIGHUP -> KeyboardInterrupt so `finally` blocks clean up
    guests (SIGINT too: a shell starting us in the background ignores it)."""
    def handler(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, handler)
    reap_stale_namespaces()
