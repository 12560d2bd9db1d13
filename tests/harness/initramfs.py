# SPDX-License-Identifier: GPL-2.0-only
"""Guest initramfs: a cached base archive per kernel + a small per-boot overlay.

The base (newc cpio, uncompressed: the kernel unpacks it faster than it would
decompress it under TCG) holds busybox with its applet links, the userland
tools with the shared libraries ldd reports, the guest scripts of guestfs/,
and the kernel modules needed to boot virtio-pci NICs with the stock driver
(decompressed, since busybox insmod only takes plain ELF). It is cached as
${VNET_CACHE}/initramfs/<release>/base-<hash>.cpio, the hash covering every
input file, so a changed tool, module or script rebuilds it.

The overlay holds /vnet/boot.conf (driver, module options, NIC table) and
optionally our module as /vnet/virtio_net.ko (without its debugging
sections). The kernel unpacks concatenated cpio archives in order, so the
initrd QEMU gets is simply base + overlay.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from . import modinfo as mi
from .kernels import KernelImage
from .util import GUEST_DIR, SETUP_DIR, VmTestError, cache_dir, log

GUESTFS = GUEST_DIR / "rootfs"
GUEST_TOOLS = GUEST_DIR / "tools"  # C helpers, built statically on the host
FORMAT_VERSION = "1"  # bump to invalidate cached archives after layout changes

# Userland copied from the host (the CI installs them with apt-get, see
# tests/setup/apt-packages.txt). iproute2's ip, ss and tc land in
# /usr/sbin/ip, /usr/bin/ss, /usr/sbin/tc; busybox ash runs its own applets
# first (it has ip and tc), so call them by full path.
DEFAULT_BINARIES = ("iperf3", "ethtool", "sockperf", "/usr/sbin/ip", "/usr/bin/ss",
                    "/usr/sbin/tc")

# Modules the stock driver needs to come up on virtio-pci; virtio_pci pulls in
# virtio, virtio_ring and the pci transport libraries (modular up to 6.1,
# built-in from 6.12: then closure() drops them).
CORE_MODULES = ("virtio_pci",)
STOCK_DRIVER = "virtio_net"


class Cpio:
    """Minimal writer for the 'newc' cpio format the kernel unpacks."""

    def __init__(self):
        self.chunks: list[bytes] = []
        self.ino = 1000
        self.seen: set[str] = set()

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev=(0, 0), nlink=1):
        name = name.lstrip("/")
        self.ino += 1
        namez = name.encode() + b"\0"
        hdr = "070701" + "".join(f"{v:08x}" for v in (
            self.ino, mode, 0, 0, nlink, 0, len(data), 0, 0, rdev[0], rdev[1], len(namez), 0))
        blob = hdr.encode() + namez
        blob += b"\0" * (-len(blob) % 4)
        blob += data
        blob += b"\0" * (-len(blob) % 4)
        self.chunks.append(blob)

    def dir(self, path: str, mode: int = 0o755):
        path = path.strip("/")
        if not path or path in self.seen:
            return
        parent = os.path.dirname(path)
        if parent:
            self.dir(parent)
        self.seen.add(path)
        self._entry(path, stat.S_IFDIR | mode, nlink=2)

    def file(self, path: str, data: bytes, mode: int = 0o644):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        self.seen.add(path)
        self._entry(path, stat.S_IFREG | mode, data)

    def symlink(self, path: str, target: str):
        path = path.strip("/")
        if path in self.seen:
            return
        self.dir(os.path.dirname(path))
        self.seen.add(path)
        self._entry(path, stat.S_IFLNK | 0o777, target.encode())

    def chardev(self, path: str, major: int, minor: int, mode: int = 0o600):
        path = path.strip("/")
        self.dir(os.path.dirname(path))
        self.seen.add(path)
        self._entry(path, stat.S_IFCHR | mode, rdev=(major, minor))

    def bytes(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        out = b"".join(self.chunks)
        self.chunks.pop()
        return out


def ldd_libs(binary: str) -> list[str]:
    """Absolute paths of the shared libraries (and loader) a binary needs."""
    cp = subprocess.run(["ldd", binary], text=True, stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, check=False)
    if "not a dynamic executable" in cp.stdout:
        return []
    libs = []
    for line in cp.stdout.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)\s+\(", line)
        if m:
            libs.append(m.group(1))
        elif "not found" in line:
            raise VmTestError(f"ldd {binary}: {line.strip()}")
    return libs


@dataclass
class Spec:
    """What goes into the base archive of one kernel."""
    kernel: KernelImage
    binaries: tuple = DEFAULT_BINARIES
    extra_modules: tuple = ()
    extra_files: dict = field(default_factory=dict)  # guest path -> host path


class Builder:
    def __init__(self, spec: Spec):
        self.spec = spec
        self.k = spec.kernel
        # entries: (kind, guest path, payload, mode); payload is bytes / target
        self.entries: list[tuple] = []
        self.module_names: list[str] = []

    # --- collect --------------------------------------------------------
    def _add(self, kind, path, payload=b"", mode=0o644):
        self.entries.append((kind, path, payload, mode))

    def _host_binary(self, name: str) -> tuple[str, str]:
        path = name if name.startswith("/") else shutil.which(name)
        if not path or not os.path.exists(path):
            raise VmTestError(f"host binary {name} not found (apt packages: "
                              f"{SETUP_DIR / 'apt-packages.txt'})")
        # guest path: keep the directory the host PATH found it in, minus /usr merges
        return path, path

    def collect(self):
        bb = shutil.which("busybox") or "/bin/busybox"
        if ldd_libs(bb):
            raise VmTestError(f"{bb} is not static: apt-get install busybox-static")
        self._add("file", "/bin/busybox", Path(bb).read_bytes(), 0o755)
        applets = subprocess.run([bb, "--list-full"], text=True, check=True,
                                 stdout=subprocess.PIPE).stdout.split()
        for a in applets:
            if a.endswith("/busybox"):
                continue
            self._add("symlink", "/" + a, "/bin/busybox")

        libs: set[str] = set()
        for b in self.spec.binaries:
            host, guest = self._host_binary(b)
            self._add("file", guest, Path(host).read_bytes(), 0o755)
            libs.update(ldd_libs(host))
        for lib in sorted(libs):
            self._add("file", lib, Path(lib).read_bytes(), 0o755)
        for gpath, hpath in sorted(self.spec.extra_files.items()):
            hp = Path(hpath)
            self._add("file", gpath, hp.read_bytes(), hp.stat().st_mode & 0o777)

        for f in sorted(GUESTFS.iterdir()):
            target = "/init" if f.name == "init" else f"/vnet/{f.name}"
            self._add("file", target, f.read_bytes(), 0o755)
        for src in sorted(GUEST_TOOLS.glob("*.c")):
            exe = build_guest_tool(src)
            if exe:
                self._add("file", f"/vnet/{src.stem}", exe.read_bytes(), 0o755)

        self._collect_modules()

        etc = {
            "/etc/passwd": "root:x:0:0:root:/root:/bin/sh\n",
            "/etc/group": "root:x:0:\n",
            "/etc/hosts": "127.0.0.1 localhost\n",
            "/etc/hostname": "vnet-guest\n",
            "/etc/nsswitch.conf": "hosts: files\n",
            "/etc/protocols": "ip 0 IP\nicmp 1 ICMP\ntcp 6 TCP\nudp 17 UDP\n",
        }
        for p, text in etc.items():
            self._add("file", p, text.encode())

    def _collect_modules(self):
        k = self.k
        names = list(CORE_MODULES) + [STOCK_DRIVER] + list(self.spec.extra_modules)
        order = k.closure(names)
        core = k.closure(CORE_MODULES)
        dep_lines = []
        for n in order:
            src = k.module_path(n)
            rel = src.relative_to(k.moddir)
            gpath = f"/lib/modules/{k.release}/{rel}"
            for suf in (".xz", ".zst", ".gz"):
                if gpath.endswith(suf):
                    gpath = gpath[: -len(suf)]
            self._add("file", gpath, mi.read_module(src), 0o644)
            deps = [d for d in k.depends(n) if not k.is_builtin(d)]
            dep_lines.append(" ".join([n, gpath, *deps]))
        self.module_names = order
        self._add("file", "/vnet/modules.dep", ("\n".join(dep_lines) + "\n").encode())
        self._add("file", "/vnet/modules.builtin", ("\n".join(sorted(k.builtin)) + "\n").encode())
        self._add("file", "/vnet/modules.conf",
                  f"VNET_CORE_MODULES={shlex.quote(' '.join(core))}\n".encode())

    # --- emit -----------------------------------------------------------
    def digest(self) -> str:
        h = hashlib.sha256(FORMAT_VERSION.encode())
        h.update(self.k.release.encode())
        for kind, path, payload, mode in self.entries:
            h.update(f"{kind}\0{path}\0{mode:o}\0".encode())
            h.update(payload if isinstance(payload, bytes) else payload.encode())
            h.update(b"\0")
        return h.hexdigest()[:16]

    def archive(self) -> bytes:
        c = Cpio()
        for d in ("dev", "proc", "sys", "run", "tmp", "root", "etc", "var", "mnt",
                  "lib64", "usr/lib", "sys/kernel/debug"):
            c.dir(d)
        c.chardev("/dev/console", 5, 1)
        c.chardev("/dev/null", 1, 3, 0o666)
        for kind, path, payload, mode in self.entries:
            if kind == "file":
                c.file(path, payload, mode)
            elif kind == "symlink":
                c.symlink(path, payload)
        return c.bytes()


def build_guest_tool(src: Path) -> Path | None:
    """Compile a guest helper statically (cached by the hash of its source and
    of the headers beside it); None without gcc."""
    h = hashlib.sha256(src.read_bytes())
    for hdr in sorted(src.parent.glob("*.h")):
        h.update(hdr.name.encode() + b"\0" + hdr.read_bytes())
    digest = h.hexdigest()[:16]
    out = cache_dir() / "guest-tools" / f"{src.stem}-{digest}"
    if out.is_file():
        return out
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        log(f"warning: no C compiler, the guest gets no {src.stem} (apt-get install gcc libc6-dev)")
        return None
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    cp = subprocess.run([cc, "-static", "-O2", "-Wall", "-o", str(tmp), str(src)], text=True,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if cp.returncode != 0:
        log(f"warning: building {src.name} failed, the guest gets no {src.stem}:\n{cp.stdout}")
        tmp.unlink(missing_ok=True)
        return None
    os.replace(tmp, out)
    return out


def build_base(spec: Spec) -> Path:
    """Return the cached base archive for spec, building it if needed."""
    b = Builder(spec)
    b.collect()
    digest = b.digest()
    out_dir = cache_dir() / "initramfs" / spec.kernel.release
    out = out_dir / f"base-{digest}.cpio"
    if out.is_file():
        log(f"initramfs: cached {out}", 1)
        return out
    out_dir.mkdir(parents=True, exist_ok=True)
    data = b.archive()
    tmp = out.with_suffix(f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, out)
    (out_dir / f"base-{digest}.modules").write_text("\n".join(b.module_names) + "\n")
    log(f"initramfs: built {out} ({len(data) >> 10} KiB, modules: "
        f"{' '.join(b.module_names)})")
    return out


def stripped_module(path: Path) -> bytes:
    """The module without its debugging sections (strip --strip-debug keeps
    the symbol table, so kallsyms and backtraces still name our functions):
    a W=1 build is ~9 MiB of which the guest uses a few hundred KiB, and
    every boot unpacks it and every insmod copies it, under TCG.  Cached by
    content; the module as built when strip is missing or fails."""
    data = mi.read_module(path)
    strip = shutil.which("strip")
    if not strip:
        return data
    digest = hashlib.sha256(data).hexdigest()[:16]
    out = cache_dir() / "stripped" / f"{path.stem}-{digest}.ko"
    if not out.is_file():
        out.parent.mkdir(parents=True, exist_ok=True)
        src = out.with_suffix(f".{os.getpid()}.in")
        tmp = out.with_suffix(f".{os.getpid()}.tmp")
        src.write_bytes(data)
        r = subprocess.run([strip, "--strip-debug", "-o", str(tmp), str(src)],
                           capture_output=True, text=True)
        src.unlink()
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            log(f"warning: strip --strip-debug {path}: {r.stderr.strip()}; using it as built")
            return data
        tmp.replace(out)
    return out.read_bytes()


def build_overlay(kernel: KernelImage, boot_conf: dict[str, str], ours: Path | None,
                  base_modules: list[str], extra_files: dict | None = None) -> bytes:
    """Per-boot archive: boot.conf, our module and anything it needs beyond the base."""
    c = Cpio()
    conf = dict(boot_conf)
    if ours is not None:
        data = stripped_module(ours)
        c.file("/vnet/virtio_net.ko", data)
        deps = [d for d in mi.module_depends(data) if d != STOCK_DRIVER]
        need = kernel.closure(deps)
        missing = [n for n in need if n not in base_modules]
        if missing:
            raise VmTestError(f"our module needs modules missing from the base initramfs: "
                              f"{missing} (add them to extra_modules)")
        conf["VNET_OURS_DEPS"] = " ".join(need)
    text = "".join(f"VNET_{k}={shlex.quote(str(v))}\n" if not k.startswith("VNET_")
                   else f"{k}={shlex.quote(str(v))}\n" for k, v in conf.items())
    # modules.conf (from the base) is sourced through boot.conf
    c.file("/vnet/boot.conf", (". /vnet/modules.conf\n" + text).encode())
    for gpath, payload in (extra_files or {}).items():
        if isinstance(payload, (str, Path)) and Path(payload).is_file():
            p = Path(payload)
            c.file(gpath, p.read_bytes(), p.stat().st_mode & 0o777)
        else:
            c.file(gpath, payload if isinstance(payload, bytes) else str(payload).encode(), 0o755)
    return c.bytes()


def base_modules(base: Path) -> list[str]:
    f = base.with_suffix(".modules")
    return f.read_text().split() if f.is_file() else []
