# SPDX-License-Identifier: GPL-2.0-only
"""Locate guest kernel images and resolve their modules.

An image directory holds `vmlinuz`, a `release` file and `lib/modules/<release>/`
(the unpacked Debian module tree). It comes from, in order:

1. an explicit directory (`--image-dir`);
2. `tests/setup/kernel-env.sh image KEY` (prints the directory);
3. a matching `${VNET_CACHE}/images/<release>/` left by an earlier run;
4. for the release of the host's installed linux-headers only: `apt-get
   download linux-image-<release>` + `dpkg-deb -x` into that cache dir (a
   bootstrap for machines where kernel-env.sh is not available).
"""

from __future__ import annotations

import glob
import lzma
import os
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from . import modinfo as mi
from .util import SETUP_DIR, VmTestError, cache_dir, log, run

KERNEL_KEYS = ("5.10", "6.1", "6.12", "7.2")


def key_matches(key: str, release: str) -> bool:
    """'6.1' matches '6.1.0-56-amd64' but not '6.12.9+deb13-amd64'."""
    return re.match(re.escape(key) + r"([.\-+]|$)", release) is not None


class KernelImage:
    def __init__(self, path: str | Path, key: str | None = None):
        self.dir = Path(path).resolve()
        rel_file = self.dir / "release"
        if not rel_file.is_file():
            mods = sorted((self.dir / "lib" / "modules").glob("*"))
            if len(mods) != 1:
                raise VmTestError(f"{self.dir}: no 'release' file and no unique lib/modules/*")
            self.release = mods[0].name
        else:
            self.release = rel_file.read_text().strip()
        self.key = key or self.release
        self.vmlinuz = self.dir / "vmlinuz"
        if not self.vmlinuz.is_file():
            cands = sorted(self.dir.glob("vmlinuz*")) + sorted(self.dir.glob("boot/vmlinuz*"))
            if not cands:
                raise VmTestError(f"{self.dir}: no vmlinuz")
            self.vmlinuz = cands[0]
        self.moddir = self.dir / "lib" / "modules" / self.release
        if not self.moddir.is_dir():
            raise VmTestError(f"{self.dir}: missing lib/modules/{self.release}")
        self._index: dict[str, Path] | None = None
        self._builtin: set[str] | None = None
        self._deps: dict[str, list[str]] = {}

    def __repr__(self):
        return f"KernelImage({self.key}: {self.release} at {self.dir})"

    # --- module tree -------------------------------------------------------
    @property
    def index(self) -> dict[str, Path]:
        """module name -> file (kernel/ preferred over updates/ extra/...)."""
        if self._index is None:
            idx: dict[str, Path] = {}
            for root, _dirs, files in os.walk(self.moddir):
                for f in files:
                    if f.endswith(mi.MODULE_SUFFIXES):
                        p = Path(root) / f
                        name = mi.module_name(f)
                        if name not in idx or "/kernel/" in str(p):
                            idx[name] = p
            self._index = idx
        return self._index

    @property
    def builtin(self) -> set[str]:
        if self._builtin is None:
            names = set()
            f = self.moddir / "modules.builtin"
            if f.is_file():
                for line in f.read_text().split():
                    names.add(mi.module_name(line))
            self._builtin = names
        return self._builtin

    def is_builtin(self, name: str) -> bool:
        return name.replace("-", "_") in self.builtin

    def has_module(self, name: str) -> bool:
        return name.replace("-", "_") in self.index

    def module_path(self, name: str) -> Path:
        try:
            return self.index[name.replace("-", "_")]
        except KeyError:
            raise VmTestError(f"{self}: no module {name}") from None

    def depends(self, name: str) -> list[str]:
        name = name.replace("-", "_")
        if name not in self._deps:
            self._deps[name] = mi.module_depends(self.module_path(name))
        return self._deps[name]

    def closure(self, names, extra_deps: dict[str, list[str]] | None = None) -> list[str]:
        """Modular names needed for `names`, dependencies first.
        Built-in and unknown names are dropped (unknown ones with an error
        unless built in)."""
        order: list[str] = []
        seen: set[str] = set()

        def visit(n: str, stack: tuple):
            n = n.replace("-", "_")
            if n in seen:
                return
            if n in stack:
                raise VmTestError(f"module dependency loop: {' -> '.join(stack + (n,))}")
            if n not in self.index:
                if self.is_builtin(n):
                    seen.add(n)
                    return
                raise VmTestError(f"{self}: module {n} neither modular nor built-in")
            deps = (extra_deps or {}).get(n)
            for d in deps if deps is not None else self.depends(n):
                visit(d, stack + (n,))
            seen.add(n)
            order.append(n)

        for n in names:
            visit(n, ())
        return order

    def boot_kernel(self) -> Path:
        """The file to pass to QEMU -kernel.

        An uncompressed vmlinux with a PVH entry note boots ~3 s faster under
        TCG than the bzImage (which first decompresses itself in the guest),
        so it is extracted once into ${VNET_CACHE}/vmlinux/. Falls back to
        vmlinuz if extraction fails or the kernel has no PVH entry point.
        VNET_BZIMAGE=1 forces the bzImage."""
        if os.environ.get("VNET_BZIMAGE") == "1":
            return self.vmlinuz
        out = cache_dir() / "vmlinux" / f"{self.release}.pvh.elf"
        if out.is_file() and out.stat().st_mtime >= self.vmlinuz.stat().st_mtime:
            return out
        try:
            elf = extract_vmlinux(self.vmlinuz.read_bytes())
        except VmTestError as e:
            log(f"{self.release}: booting bzImage ({e})", 1)
            return self.vmlinuz
        if not has_pvh_note(elf):
            log(f"{self.release}: no PVH entry point, booting bzImage", 1)
            return self.vmlinuz
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(f".tmp{os.getpid()}")
        tmp.write_bytes(elf)
        os.replace(tmp, out)
        return out

    def config(self) -> dict[str, str]:
        for cand in [self.dir / "config", *self.dir.glob("config-*"), *self.dir.glob("boot/config-*")]:
            if cand.is_file():
                out = {}
                for line in cand.read_text().splitlines():
                    if line.startswith("CONFIG_") and "=" in line:
                        k, v = line.split("=", 1)
                        out[k] = v
                return out
        return {}


def extract_vmlinux(bzimage: bytes) -> bytes:
    """Uncompressed ELF kernel from a bzImage (xz, zstd or gzip payload)."""
    if bzimage[0x202:0x206] != b"HdrS":
        raise VmTestError("not a bzImage")
    setup_sects = bzimage[0x1F1] or 4
    payload_off, payload_len = struct.unpack_from("<II", bzimage, 0x248)
    start = (setup_sects + 1) * 512 + payload_off
    payload = bzimage[start:start + payload_len]
    if payload.startswith(b"\xfd7zXZ\x00"):
        out = lzma.LZMADecompressor().decompress(payload)
    elif payload.startswith(b"\x28\xb5\x2f\xfd"):
        if not shutil.which("zstd"):
            raise VmTestError("zstd not installed")
        # the payload ends with the 4-byte uncompressed size, which zstd
        # reports as trailing garbage (rc 1) after writing the whole output
        out = subprocess.run(["zstd", "-dc"], input=payload, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=False).stdout
    elif payload.startswith(b"\x1f\x8b"):
        import zlib
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(payload)
    else:
        raise VmTestError(f"unsupported bzImage payload {payload[:4].hex()}")
    size, = struct.unpack("<I", payload[-4:])
    if not out.startswith(b"\x7fELF") or len(out) != size:
        raise VmTestError("vmlinux extraction produced no complete ELF")
    return out


def has_pvh_note(elf: bytes) -> bool:
    """True if the ELF has a Xen PHYS32_ENTRY note (QEMU's PVH -kernel boot)."""
    e_phoff, = struct.unpack_from("<Q", elf, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(e_phnum):
        p_type, _, p_off, _, _, p_filesz = struct.unpack_from("<IIQQQQ", elf, e_phoff + i * e_phentsize)
        if p_type != 4:  # PT_NOTE
            continue
        pos, end = p_off, p_off + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == 18:
                return True
            pos += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    return False


def _from_kernel_env(key: str) -> Path | None:
    script = SETUP_DIR / "kernel-env.sh"
    if not script.is_file():
        return None
    log(f"resolving kernel {key} with {script.name} image {key}", 1)
    cp = subprocess.run(["bash", str(script), "image", key], text=True,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=1800)
    if cp.returncode != 0:
        log(f"warning: kernel-env.sh image {key} failed (rc={cp.returncode}):\n"
            f"{cp.stderr.strip()[-2000:]}")
        return None
    lines = [ln.strip() for ln in cp.stdout.splitlines() if ln.strip()]
    if not lines or not Path(lines[-1]).is_dir():
        log(f"warning: kernel-env.sh image {key} printed no directory: {cp.stdout!r}")
        return None
    return Path(lines[-1])


def _from_cache(key: str) -> Path | None:
    hits = []
    for rel in glob.glob(str(cache_dir() / "images" / "*" / "release")):
        release = Path(rel).read_text().strip()
        if key_matches(key, release) and (Path(rel).parent / "vmlinuz").is_file():
            hits.append(Path(rel).parent)
    return sorted(hits)[-1] if hits else None


def host_header_release(key: str) -> str | None:
    """Release of an installed linux-headers-<release> matching key, e.g. 6.1.0-56-amd64."""
    rels = [Path(p).name[len("linux-headers-"):] for p in glob.glob("/usr/src/linux-headers-*-amd64")]
    rels = sorted(r for r in rels if key_matches(key, r))
    return rels[-1] if rels else None


def fetch_debian_image(release: str) -> Path:
    """apt-get download linux-image-<release> and lay it out as an image dir."""
    dest = cache_dir() / "images" / release
    if (dest / "release").is_file():
        return dest
    pkg = f"linux-image-{release}"
    if not shutil.which("apt-get"):
        raise VmTestError(f"cannot fetch {pkg}: no apt-get")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{release}.") as tmp:
        log(f"fetching {pkg} with apt-get download (one time)")
        # apt's _apt sandbox user cannot write into root's home: download in /tmp
        with tempfile.TemporaryDirectory() as dl:
            os.chmod(dl, 0o777)
            run(["apt-get", "download", pkg], cwd=dl, timeout=900)
            debs = glob.glob(os.path.join(dl, f"{pkg}_*.deb"))
            if not debs:
                raise VmTestError(f"apt-get download {pkg} produced no .deb")
            x = Path(tmp) / "x"
            run(["dpkg-deb", "-x", debs[0], str(x)], timeout=600)
        img = Path(tmp) / "img"
        img.mkdir()
        for what, name in (("vmlinuz", "vmlinuz"), ("config", "config"), ("System.map", "System.map")):
            src = x / "boot" / f"{what}-{release}"
            if src.exists():
                shutil.copy2(src, img / name)
        libmod = x / "lib" / "modules"
        if not libmod.is_dir():
            libmod = x / "usr" / "lib" / "modules"
        (img / "lib").mkdir()
        shutil.move(str(libmod), str(img / "lib" / "modules"))
        (img / "release").write_text(release + "\n")
        os.rename(img, dest)
    return dest


def resolve_kernel(key: str, image_dir: str | Path | None = None) -> KernelImage:
    if image_dir:
        return KernelImage(image_dir, key)
    for finder in (_from_kernel_env, _from_cache):
        d = finder(key)
        if d:
            return KernelImage(d, key)
    rel = host_header_release(key)
    if rel:
        return KernelImage(fetch_debian_image(rel), key)
    raise VmTestError(
        f"no kernel image for {key}: tests/setup/kernel-env.sh image {key} is unavailable or failed, "
        f"nothing matching in {cache_dir() / 'images'}, and no linux-headers-{key}* installed "
        f"(pass --image-dir DIR with vmlinuz, release, lib/modules/<release>/)")
