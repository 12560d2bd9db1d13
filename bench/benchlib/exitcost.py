# SPDX-License-Identifier: GPL-2.0-only
"""VM-exit cost model for TCG guests (bench/exitcost/): symbols, QEMU args, counts.

    import sys; sys.path[:0] = ["bench", "tests"]     # from the repository root
    from harness import Guest, VMConfig, resolve_kernel
    from benchlib.exitcost import ExitCost

    k = resolve_kernel("6.1")
    ec = ExitCost(k, costs={"irq": 0})          # reference costs, irq cost 0
    with Guest(k, VMConfig(smp=2, qemu_args=ec.qemu_args())) as g:
        g.boot()
        ec.attach(g)                            # checks/fixes module symbol addresses
        before = ec.snapshot()
        ...                                     # the measured load
        d = ec.snapshot() - before              # Counts: d.kinds["kick"], d.vcpus[0], d.stall_ns
        ec.set_costs({"kick": 0})               # at once, no reboot
    final = ec.final()                          # written by the plugin at QEMU exit

The plugin (exitcost.so, built by bench/exitcost/build.sh) stalls a vCPU
for cost_<kind> microseconds at the first instruction of hooked guest
functions, and at every store to the xAPIC ICR (IPIs: the send code is
inlined in many places). Function addresses come from /proc/kallsyms of a guest booted once
per kernel release with nokaslr (the harness always boots with it), cached
in ${VNET_CACHE}/exitcost/syms-<release>.json. Functions in modules (vp_notify
is in virtio_pci.ko on 5.10 and 6.1) are re-checked after each boot by
attach(); if a module landed elsewhere the plugin is re-hooked at run time
through its control file (which flushes QEMU's translation cache).
"""

from __future__ import annotations

import atexit
import fcntl
import itertools
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.kernels import KernelImage, resolve_kernel
from harness.util import BENCH_DIR, VmTestError, cache_dir, log, run

KINDS = ("kick", "irq", "timer_irq", "ipi_irq", "timer_arm", "ipi", "hlt")
ALL_KINDS = KINDS + ("count",)
# Counts.kinds key of the wake-ups the hlt cost is charged on (one per HLT
# that an interrupt ended; "hlt" itself counts the HLT/MWAIT executions)
WAKES = "hlt_wakes"
# Reference costs in microseconds (see bench/exitcost/README.md): a KVM exit
# costs ~1-2 us of host time, TCG runs kernel code ~4.7x slower than native,
# so a stall that keeps the same proportion is ~5x the native cost. hlt: an
# idle vCPU's HLT exit, charged when an interrupt wakes it (the host wakes
# and re-enters the blocked vCPU thread, ~4 us natively without halt polling).
DEFAULT_COSTS_US = {"kick": 20.0, "irq": 30.0, "timer_irq": 30.0, "ipi_irq": 30.0,
                    "timer_arm": 10.0, "ipi": 15.0, "hlt": 20.0}

# kind -> function names. Every name present in the kernel is hooked (static
# functions may exist more than once: every copy is). A tuple entry lists
# alternatives: the first one present in the kernel is used (an alternative
# may itself be a tuple of names hooked together).
HOOKS = {
    # the virtio-pci notify callback (vq->notify): one iowrite16 to the
    # queue's notify address = one trapped MMIO/PIO write on KVM
    "kick": ("vp_notify", "vp_notify_with_data"),
    # injected interrupts: device interrupts (the IDT stubs jump to
    # asm_common_interrupt) and the system vectors not listed below
    "irq": ("asm_common_interrupt", "asm_spurious_interrupt"),
    "timer_irq": ("asm_sysvec_apic_timer_interrupt",),
    # received IPIs: charged like any injected interrupt (a receiver without
    # APICv/posted interrupts exits for the injection and for the EOI write)
    "ipi_irq": ("asm_sysvec_reschedule_ipi", "asm_sysvec_call_function",
                "asm_sysvec_call_function_single", "asm_sysvec_irq_work"),
    # writes of the local APIC timer: TMICT (one-shot) or the TSC deadline MSR
    "timer_arm": ("lapic_next_event", "lapic_next_deadline"),
    # one ICR write = one IPI sent = one exit. xAPIC (what QEMU 7.2 TCG
    # "-cpu max" exposes: no x2apic): Linux writes the ICR with a 32-bit mov
    # to its fixmap address, inlined into many callers from 6.6 on
    # (default_send_IPI_single_phys, the *_mask_sequence_phys loops, the
    # shorthand callbacks...), so the xAPIC IPI is hooked as a *store* to the
    # ICR (XAPIC_ICR_STORE below, address read from the kernel image) and
    # these functions are only counted. Without the store hook they are the
    # fallback: every destination IPI ends in __default_send_IPI_dest_field
    # (<= 6.1: one call per ICR write, flat or physical mode), every
    # shorthand one (self/all/allbutself, irq_work's self-IPI) in
    # __default_send_IPI_shortcut (inlined into the three callbacks in 6.6+).
    # x2APIC (KVM guests; not reachable under QEMU 7.2 TCG, so not validated
    # here): a WRMSR that API v1 cannot see, so function entries:
    # __x2apic_send_IPI_dest (per CPU), __x2apic_send_IPI_shorthand (or the
    # all/allbutself callbacks that inline it), x2apic_send_IPI_self.
    # HLT/MWAIT: matched by instruction bytes in the plugin (hlt=on), not by
    # symbol; IDLE_HOOK below stands for them
    "hlt": (),
    "ipi": ("__default_send_IPI_dest_field",
            ("__default_send_IPI_shortcut",
             ("default_send_IPI_allbutself", "default_send_IPI_all", "default_send_IPI_self")),
            "__x2apic_send_IPI_dest",
            ("__x2apic_send_IPI_shorthand", ("x2apic_send_IPI_all", "x2apic_send_IPI_allbutself")),
            "x2apic_send_IPI_self"),
}


def _flat(entry) -> list[str]:
    if isinstance(entry, str):
        return [entry]
    return [n for e in entry for n in _flat(e)]


# with the ICR store hook these xAPIC IPI functions are counted, not charged
XAPIC_IPI_FUNCS = ("__default_send_IPI_dest_field", "__default_send_IPI_shortcut",
                   "default_send_IPI_allbutself", "default_send_IPI_all", "default_send_IPI_self")
XAPIC_ICR_STORE = "xapic_icr_write"
IDLE_HOOK = "hlt+mwait"
SYSVEC_PREFIX = "asm_sysvec_"
# count-only hooks (kind "count", never charged) used to see which IPI paths
# a kernel takes; add them with ExitCost(probe=True)
PROBE_SYMBOLS = (
    "native_smp_send_reschedule", "native_send_call_func_ipi", "native_send_call_func_single_ipi",
    "arch_irq_work_raise", "default_send_IPI_single_phys", "default_send_IPI_mask_sequence_phys",
    "default_send_IPI_mask_allbutself_phys", "default_send_IPI_single", "default_send_IPI_allbutself",
    "default_send_IPI_all", "default_send_IPI_self", "flat_send_IPI_mask",
    "flat_send_IPI_mask_allbutself", "_flat_send_IPI_mask", "apic_send_IPI_allbutself",
    "x2apic_send_IPI", "x2apic_send_IPI_mask", "__x2apic_send_IPI_mask", "native_x2apic_icr_write",
    "send_call_function_single_ipi", "lapic_timer_shutdown", "lapic_timer_set_periodic",
    "lapic_timer_set_oneshot", "native_apic_mem_write", "native_apic_msr_write",
    "kvm_send_ipi_mask", "virtqueue_notify", "vring_interrupt", "vp_interrupt",
)
SYMS_VERSION = 1
PLUGIN_BUILD = BENCH_DIR / "exitcost" / "build.sh"
_ids = itertools.count()


def plugin_path() -> Path:
    """Build (cached) and return exitcost.so."""
    cp = run([str(PLUGIN_BUILD)], timeout=900)
    p = Path(cp.stdout.strip().splitlines()[-1])
    if not p.is_file():
        raise VmTestError(f"exitcost build did not produce {p}:\n{cp.stderr}")
    return p


def _cache() -> Path:
    d = cache_dir() / "exitcost"
    d.mkdir(parents=True, exist_ok=True)
    return d


def wanted_symbols() -> set[str]:
    names = {n for entries in HOOKS.values() for e in entries for n in _flat(e)}
    return names | set(PROBE_SYMBOLS)


# --- symbols ---------------------------------------------------------------------------
KALLSYMS_LINE = re.compile(r"^([0-9a-f]+) (\w) (\S+)(?:\s+\[(\S+)\])?$")


def parse_kallsyms(text: str) -> dict[str, list[dict]]:
    """/proc/kallsyms lines -> {name: [{"addr": int, "type": "t", "module": str|None}]}."""
    out: dict[str, list[dict]] = {}
    for line in text.splitlines():
        m = KALLSYMS_LINE.match(line.strip())
        if not m:
            continue
        addr = int(m.group(1), 16)
        if addr == 0:
            raise VmTestError("/proc/kallsyms shows zero addresses (kptr_restrict?)")
        ent = {"addr": addr, "type": m.group(2), "module": m.group(4)}
        lst = out.setdefault(m.group(3), [])
        if ent not in lst:
            lst.append(ent)
    return out


def kallsyms_cmd(names) -> str:
    """Guest shell command printing the kallsyms lines of names and asm_sysvec_*
    (text symbols only; also foo.isra.N / foo.constprop.N clones)."""
    pat = "|".join(sorted(re.escape(n) for n in names))
    return (f"grep -E ' [tT] ({pat}|{SYSVEC_PREFIX}[a-z0-9_]+)((\\.isra|\\.constprop)\\.[0-9]+)?"
            f"([[:space:]]|$)' /proc/kallsyms")


def read_guest_symbols(g) -> dict:
    """Symbol table of a booted guest (must be booted with nokaslr)."""
    cmdline = g.run_ok("cat /proc/cmdline").strip()
    if "nokaslr" not in cmdline.split():
        raise VmTestError(f"guest not booted with nokaslr: {cmdline}")
    out = g.run_ok(kallsyms_cmd(wanted_symbols()), timeout=60)
    syms = parse_kallsyms(out)
    stext = parse_kallsyms(g.run_ok("grep -E ' [tT] _stext$' /proc/kallsyms"))
    flags = g.run_ok("grep -m1 '^flags' /proc/cpuinfo").split(":", 1)[-1].split()
    clocksource = g.run("cat /sys/devices/system/clocksource/clocksource0/current_clocksource").out
    return {"version": SYMS_VERSION, "release": g.kernel.release, "cmdline": cmdline,
            "stext": stext.get("_stext", [{}])[0].get("addr"),
            "x2apic": "x2apic" in flags, "tsc_deadline_timer": "tsc_deadline_timer" in flags,
            "clocksource": clocksource.strip(),
            "driver": g.driver, "time": time.time(), "symbols": syms}


def _syms_file(release: str) -> Path:
    return _cache() / f"syms-{release}.json"


def _decode(data: dict) -> dict:
    for k in ("stext", "xapic_icr"):
        if isinstance(data.get(k), str):
            data[k] = int(data[k], 16)
    for lst in data["symbols"].values():
        for e in lst:
            if isinstance(e["addr"], str):
                e["addr"] = int(e["addr"], 16)
    return data


def _encode(data: dict) -> dict:
    d = dict(data)
    d["symbols"] = {n: [dict(e, addr=f"0x{e['addr']:x}") for e in lst]
                    for n, lst in sorted(data["symbols"].items())}
    for k in ("stext", "xapic_icr"):
        if d.get(k) is not None:
            d[k] = f"0x{d[k]:x}"
    return d


def guest_symbols(kernel: KernelImage | str, refresh: bool = False) -> dict:
    """Cached symbol table of a kernel release; boots a guest (stock driver,
    2 vCPUs, nokaslr) once per release to read /proc/kallsyms."""
    if isinstance(kernel, str):
        kernel = resolve_kernel(kernel)
    path = _syms_file(kernel.release)
    with open(_cache() / f".syms-{kernel.release}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists() and not refresh:
            data = _decode(json.loads(path.read_text()))
            if data.get("version") == SYMS_VERSION and \
                    set(data.get("wanted", ())) >= wanted_symbols():
                if "xapic_icr" not in data:     # host-side only, no boot needed
                    data["xapic_icr"] = find_xapic_icr(kernel, data["symbols"])
                    _write_syms(path, data)
                return data
        from harness.guest import Guest, VMConfig
        log(f"exitcost: reading /proc/kallsyms of {kernel.release} (one boot)", 0)
        with Guest(kernel, VMConfig(smp=2), driver="stock", name=f"exitcost-syms-{os.getpid()}") as g:
            g.boot()
            data = read_guest_symbols(g)
        data["wanted"] = sorted(wanted_symbols())
        data["xapic_icr"] = find_xapic_icr(kernel, data["symbols"])
        _write_syms(path, data)
        return data


def _write_syms(path: Path, data: dict) -> None:
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(_encode(data), indent=1) + "\n")
    tmp.replace(path)


@dataclass
class Hook:
    kind: str
    name: str
    addr: int
    module: str | None = None
    store: bool = False     # absolute store to addr (xAPIC register), not a function entry
    idle: bool = False      # every HLT and MWAIT instruction (plugin argument hlt=on)

    def arg(self) -> str:
        if self.idle:
            return "hlt=on"
        return f"{'store' if self.store else 'hook'}={self.kind}:0x{self.addr:x}:{self.name}"


# --- xAPIC ICR address from the kernel image ---------------------------------------------
def _elf_reader(path: Path):
    """-> read(vaddr, size) over the PT_LOAD segments of an ELF64 file."""
    import struct
    data = path.read_bytes() if path.suffix == ".elf" else None
    if data is None or not data.startswith(b"\x7fELF"):
        from .kernels import extract_vmlinux
        data = extract_vmlinux(path.read_bytes())
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segs = []
    for i in range(phnum):
        p_type, _fl, off, va, _pa, filesz = struct.unpack_from("<IIQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            segs.append((va, off, filesz))

    def read(vaddr: int, size: int) -> bytes:
        for va, off, filesz in segs:
            if va <= vaddr < va + filesz:
                n = min(size, va + filesz - vaddr)
                return data[off + vaddr - va: off + vaddr - va + n]
        return b""
    return read


ABS_STORE = re.compile(rb"[\x40-\x4f]?\x89[\x04\x0c\x14\x1c\x24\x2c\x34\x3c]\x25(....)", re.S)


def find_xapic_icr(kernel: KernelImage, symbols: dict) -> int | None:
    """Virtual address of the xAPIC ICR (fixmap APIC base + 0x300) as the
    kernel's IPI code stores to it: "mov r32, [disp32]" in
    __default_send_IPI_dest_field (or the functions that inline it)."""
    import struct
    names = ("__default_send_IPI_dest_field", "default_send_IPI_single_phys",
             "__default_send_IPI_shortcut", "default_send_IPI_self")
    funcs = [e["addr"] for n in names for e in symbols.get(n, []) if not e.get("module")]
    if not funcs:
        return None
    try:
        read = _elf_reader(kernel.boot_kernel())
    except (OSError, VmTestError) as e:
        log(f"exitcost: cannot read the kernel image of {kernel.release}: {e}", 0)
        return None
    found: dict[int, int] = {}
    for f in funcs:
        code = read(f, 512)
        for m in ABS_STORE.finditer(code):
            d, = struct.unpack("<i", m.group(1))
            a = d & 0xFFFFFFFFFFFFFFFF
            if a >> 24 == 0xFFFFFFFFFF and a & 0xFFF == 0x300:
                found[a] = found.get(a, 0) + 1
    return max(found, key=found.get) if found else None


def _lookup(symbols: dict, name: str) -> list[tuple[str, dict]]:
    """Exact name, else its .isra.N/.constprop.N clones (same entry semantics)."""
    if name in symbols:
        return [(name, e) for e in symbols[name]]
    clones = [(n, e) for n, lst in symbols.items()
              if re.fullmatch(re.escape(name) + r"\.(isra|constprop)\.\d+", n) for e in lst]
    return clones


def select_hooks(symbols: dict, kinds=KINDS, probe: bool = False,
                 xapic_icr: int | None = None) -> list[Hook]:
    """Hooks for the given kinds from a symbol table ({name: [entries]});
    xapic_icr: ICR address for the store hook (see HOOKS["ipi"])."""
    hooks: list[Hook] = []
    seen: set[int] = set()

    def add(kind, name):
        if kind == "ipi" and xapic_icr and name in XAPIC_IPI_FUNCS:
            kind = "count"
        for n, e in _lookup(symbols, name):
            if e["addr"] in seen:
                continue
            seen.add(e["addr"])
            hooks.append(Hook(kind, n, e["addr"], e.get("module")))

    if "ipi" in kinds and xapic_icr:
        hooks.append(Hook("ipi", XAPIC_ICR_STORE, xapic_icr, store=True))
    if "hlt" in kinds:
        hooks.append(Hook("hlt", IDLE_HOOK, 0, idle=True))

    for kind in KINDS:
        if kind not in kinds:
            continue
        for entry in HOOKS[kind]:
            if isinstance(entry, str):
                add(kind, entry)
                continue
            for alt in entry:   # alternatives: the first one present
                names = _flat(alt)
                if any(_lookup(symbols, n) for n in names):
                    for n in names:
                        add(kind, n)
                    break
    if "irq" in kinds:
        # every other system vector is an injected interrupt too
        special = {n for k in ("timer_irq", "ipi_irq") for n in HOOKS[k]}
        for name in sorted(symbols):
            if name.startswith(SYSVEC_PREFIX) and name not in special:
                add("irq", name)
    if probe:
        for name in PROBE_SYMBOLS:
            add("count", name)
    return hooks


def coverage(hooks: list[Hook]) -> dict[str, list[str]]:
    """kind -> names of the hooked functions (empty list: kind not hooked)."""
    cov: dict[str, list[str]] = {k: [] for k in KINDS}
    for h in hooks:
        if h.kind in cov and h.name not in cov[h.kind]:
            cov[h.kind].append(h.name)
    return cov


# --- counts ------------------------------------------------------------------------------
@dataclass
class Counts:
    """A snapshot of the plugin's counters (or the difference of two)."""
    raw: dict
    kinds: dict[str, int] = field(default_factory=dict)
    stall_ns: dict[str, int] = field(default_factory=dict)
    hooks: dict[str, int] = field(default_factory=dict)     # name -> count (all copies)
    vcpus: dict[int, dict[str, int]] = field(default_factory=dict)
    elapsed_ns: int = 0

    @classmethod
    def from_json(cls, d: dict) -> "Counts":
        c = cls(raw=d, elapsed_ns=d.get("elapsed_ns", 0))
        for k, v in d.get("kinds", {}).items():
            c.kinds[k] = v["count"]
            c.stall_ns[k] = v["stall_ns"]
        if "hlt_wakes" in d:
            # halted vCPUs woken by an interrupt: where the hlt cost is charged
            c.kinds[WAKES] = d["hlt_wakes"]
        for h in d.get("hooks", []):
            c.hooks[h["name"]] = c.hooks.get(h["name"], 0) + h["count"]
        for v in d.get("vcpus", []):
            c.vcpus[v["vcpu"]] = {k: v.get(k, 0) for k in ALL_KINDS + (WAKES,)}
        return c

    def __sub__(self, other: "Counts") -> "Counts":
        sub = lambda a, b: {k: a.get(k, 0) - b.get(k, 0) for k in a}  # noqa: E731
        return Counts(raw={"delta": True}, kinds=sub(self.kinds, other.kinds),
                      stall_ns=sub(self.stall_ns, other.stall_ns), hooks=sub(self.hooks, other.hooks),
                      vcpus={c: sub(v, other.vcpus.get(c, {})) for c, v in self.vcpus.items()},
                      elapsed_ns=self.elapsed_ns - other.elapsed_ns)

    def stall_s(self) -> float:
        return sum(self.stall_ns.values()) / 1e9

    def table(self) -> str:
        lines = [f"{'kind':<10} {'count':>9} {'stall s':>8}"]
        for k in ALL_KINDS:
            if k in self.kinds:
                lines.append(f"{k:<10} {self.kinds[k]:>9} {self.stall_ns.get(k, 0) / 1e9:>8.3f}")
        return "\n".join(lines)


def read_counts(path: str | Path) -> Counts:
    return Counts.from_json(json.loads(Path(path).read_text()))


# --- one plugin instance ---------------------------------------------------------------------
def ctl_request(ctl: Path, out: Path, lines: list[str], timeout: float = 15.0) -> dict:
    """Hand a plugin of bench/exitcost/ (exitcost.c, insnprof.c) control
    @lines and a "snap TOKEN" line through its control file @ctl (written
    atomically), and return its JSON from @out once that carries TOKEN."""
    token = f"{os.getpid()}-{next(_ids)}-{time.monotonic_ns()}"
    tmp = ctl.with_suffix(".tmp")
    tmp.write_text("".join(f"{line}\n" for line in lines) + f"snap {token}\n")
    os.replace(tmp, ctl)
    deadline = time.monotonic() + timeout
    while True:
        try:
            d = json.loads(out.read_text())
            if d.get("request") == token:
                return d
        except (FileNotFoundError, json.JSONDecodeError):
            pass
        if time.monotonic() > deadline:
            raise VmTestError(f"plugin did not answer snapshot {token} in {timeout}s "
                              f"(is QEMU running with {ctl}?)")
        time.sleep(0.002)


class ExitCost:
    """Plugin configuration for one guest boot: qemu_args() for VMConfig,
    attach(g) after boot, snapshot() during the run, final() after shutdown.

    costs: {kind: microseconds} overriding DEFAULT_COSTS_US (cost_irq also
    applies to timer_irq and ipi_irq unless they are given); kinds: which
    kinds to hook (others are neither hooked nor counted); probe: also add
    count-only hooks on PROBE_SYMBOLS; mode: "spin" or "sleep"."""

    def __init__(self, kernel: KernelImage | str, costs: dict | None = None, kinds=KINDS,
                 probe: bool = False, mode: str = "spin", scale: float = 1.0,
                 poll_ms: int = 5, interval_ms: int = 0, workdir: str | Path | None = None):
        self.kernel = resolve_kernel(kernel) if isinstance(kernel, str) else kernel
        self.syms = guest_symbols(self.kernel)
        self.hooks = select_hooks(self.syms["symbols"], kinds, probe,
                                  None if self.syms.get("x2apic") else self.syms.get("xapic_icr"))
        self.costs = dict(DEFAULT_COSTS_US)
        costs = dict(costs or {})
        if "irq" in costs:
            for k in ("timer_irq", "ipi_irq"):
                costs.setdefault(k, costs["irq"])
        unknown = set(costs) - set(KINDS)
        if unknown:
            raise VmTestError(f"unknown exit kinds {sorted(unknown)}")
        self.costs.update(costs)
        self.mode, self.scale = mode, scale
        self.poll_ms, self.interval_ms = poll_ms, interval_ms
        self.so = plugin_path()
        if workdir:
            self.dir = Path(workdir)
        else:
            self.dir = Path(tempfile.mkdtemp(prefix=f"exitcost-{os.getpid()}-", dir="/tmp"))
            atexit.register(self.cleanup)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.out = self.dir / "counts.json"
        self.ctl = self.dir / "ctl"
        self.guest = None
        self.rehooked: list[str] = []

    def coverage(self) -> dict[str, list[str]]:
        return coverage(self.hooks)

    def plugin_arg(self) -> str:
        parts = [f"file={self.so}", f"out={self.out}", f"ctl={self.ctl}", f"mode={self.mode}",
                 f"poll_ms={self.poll_ms}"]
        if self.interval_ms:
            parts.append(f"interval_ms={self.interval_ms}")
        if self.scale != 1.0:
            parts.append(f"scale={self.scale:g}")
        parts += [f"cost_{k}={self.costs[k]:g}" for k in KINDS]
        parts += [h.arg() for h in self.hooks]
        for p in parts:
            if "," in p:
                raise VmTestError(f"plugin argument with a comma: {p}")
        return ",".join(parts)

    def qemu_args(self) -> tuple:
        return ("-plugin", self.plugin_arg())

    # --- after boot -------------------------------------------------------------------------
    def attach(self, g) -> list[str]:
        """Check that module functions are where the cached table says; re-hook
        the plugin (control file) where they moved. Returns the re-hooked names."""
        self.guest = g
        mod_hooks = [h for h in self.hooks if h.module]
        if not mod_hooks:
            return []
        now = parse_kallsyms(g.run_ok(kallsyms_cmd({h.name for h in mod_hooks}), timeout=60))
        lines = []
        for h in mod_hooks:
            addrs = [e["addr"] for e in now.get(h.name, []) if e.get("module") == h.module]
            if h.addr in addrs:
                continue
            lines.append(f"unhook 0x{h.addr:x}")
            if addrs:
                log(f"exitcost: {h.name} [{h.module}] moved 0x{h.addr:x} -> 0x{addrs[0]:x}, re-hooking", 1)
                h.addr = addrs[0]
                lines.append(f"hook {h.kind} 0x{h.addr:x} {h.name}")
            else:
                log(f"exitcost: {h.name} [{h.module}] not loaded in this guest", 0)
            self.rehooked.append(h.name)
        if lines:
            self.snapshot(extra=lines)
        return self.rehooked

    def snapshot(self, timeout: float = 15.0, extra: list[str] | None = None) -> Counts:
        """Ask the running plugin for its counters now (synchronous)."""
        return Counts.from_json(ctl_request(self.ctl, self.out, extra or [], timeout))

    def set_costs(self, costs: dict, scale: float | None = None) -> Counts:
        """Change costs of the running plugin at once (no TB flush needed):
        {kind: us}; kinds not given keep their cost. Returns a snapshot taken
        right after the change."""
        unknown = set(costs) - set(KINDS)
        if unknown:
            raise VmTestError(f"unknown exit kinds {sorted(unknown)}")
        self.costs.update(costs)
        lines = [f"cost {k} {v:g}" for k, v in costs.items()]
        if scale is not None:
            self.scale = scale
            lines.append(f"scale {scale:g}")
        c = self.snapshot(extra=lines)
        got = c.raw.get("cost_us", {})
        for k, v in costs.items():
            if abs(got.get(k, -1) - v * self.scale) > 1e-3:
                raise VmTestError(f"exitcost: cost_{k} is {got.get(k)} after setting {v}")
        return c

    def final(self) -> Counts:
        """Counters written by the plugin at QEMU's exit."""
        d = json.loads(self.out.read_text())
        if not d.get("final"):
            raise VmTestError(f"{self.out}: no final counts (QEMU killed?)")
        return Counts.from_json(d)

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def hooked_kinds_report(kernel: KernelImage | str) -> str:
    """One line per kind: the functions hooked for this kernel, or 'NOT HOOKED'."""
    k = resolve_kernel(kernel) if isinstance(kernel, str) else kernel
    syms = guest_symbols(k)
    icr = None if syms.get("x2apic") else syms.get("xapic_icr")
    cov = coverage(select_hooks(syms["symbols"], xapic_icr=icr))
    lines = [f"{k.release}: x2apic={syms.get('x2apic')} tsc_deadline={syms.get('tsc_deadline_timer')}"
             f" xapic_icr={'0x%x' % icr if icr else None} clocksource={syms.get('clocksource')}"]
    for kind in KINDS:
        names = cov[kind]
        mods = {e.get("module") for n in names for e in syms["symbols"].get(n, []) if e.get("module")}
        lines.append(f"  {kind:<10} " + (", ".join(names) if names else "NOT HOOKED")
                     + (f"  (module {', '.join(sorted(mods))})" if mods else ""))
    return "\n".join(lines)
