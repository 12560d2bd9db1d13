# SPDX-License-Identifier: GPL-2.0-only
"""Test-only kernel modules (guest-kmod/), built for a guest kernel on demand.

    ko = build_guest_kmod(kernel, "vnet_fault")   # cached Path, or VmTestError
    g.put_file(ko.read_bytes(), "/tmp/vnet_fault.ko")

The build runs `make -C <headers> M=<dir> modules` inside the kernel's
build environment (tests/setup/kernel-env.sh run KEY), the one the driver is
built in; the result is stripped of debug info (it goes over the serial
line) and cached by kernel release and source hash under
$VNET_CACHE/guest-kmod/<release>/<hash>/.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from .kernels import KERNEL_KEYS, KernelImage, key_matches
from .util import GUEST_DIR, SETUP_DIR, VmTestError, cache_dir, log, run

KMOD_DIR = GUEST_DIR / "kmod"


def env_key(kernel: KernelImage) -> str:
    """The kernel-env.sh key (5.10, 6.1, ...) of a kernel image."""
    if kernel.key in KERNEL_KEYS:
        return kernel.key
    for k in KERNEL_KEYS:
        if key_matches(k, kernel.release):
            return k
    raise VmTestError(f"no build environment for kernel {kernel.release}")


def build_guest_kmod(kernel: KernelImage, name: str) -> Path:
    """Path of the module `name` built for kernel; all of guest-kmod/ is
    built at once and cached together."""
    sources = sorted(p for p in KMOD_DIR.iterdir() if p.is_file())
    # An image that carries its build tree (the debug kernel) is built
    # against it on the host; Debian's kernels in their header environment.
    tree = kernel.moddir / "build"
    own_tree = tree.is_dir()
    h = hashlib.sha256(kernel.release.encode())
    if own_tree:
        h.update(str(tree.resolve()).encode() + b"\0")
        # the tree rebuilt with another config keeps its release: modules
        # built against the old build would not load ("invalid module format")
        for f in (".config", "Module.symvers"):
            if (tree / f).is_file():
                h.update((tree / f).read_bytes())
    for p in sources:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    out_dir = cache_dir() / "guest-kmod" / kernel.release / h.hexdigest()[:16]
    out = out_dir / f"{name}.ko"
    if out.is_file():
        return out
    kenv = str(SETUP_DIR / "kernel-env.sh")
    if own_tree:
        kdir = str(tree.resolve())
        prefix: list[str] = []
    else:
        key = env_key(kernel)
        run(["bash", kenv, "setup", key], timeout=1800)
        kdir = run(["bash", kenv, "kdir", key]).stdout.strip()
        prefix = ["bash", kenv, "run", key, "--"]
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="build-", dir=out_dir.parent))
    try:
        for p in sources:
            shutil.copy2(p, work / p.name)
        log(f"building the test modules in {KMOD_DIR.name}/ for {kernel.release}", 1)
        env = dict(os.environ, VNET_SRC=str(work))
        run(prefix + ["make", "-C", kdir, f"M={work}", "modules"],
            timeout=600, cwd=work, env=env)
        kos = sorted(work.glob("*.ko"))
        if not any(k.name == out.name for k in kos):
            raise VmTestError(f"building {KMOD_DIR} for {kernel.release} produced no {out.name}")
        tmp = out_dir.with_name(f"{out_dir.name}.tmp{os.getpid()}")
        tmp.mkdir()
        for ko in kos:
            run(["objcopy", "--strip-debug", str(ko), str(tmp / ko.name)])
        os.replace(tmp, out_dir)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out
