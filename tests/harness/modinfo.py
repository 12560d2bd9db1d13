# SPDX-License-Identifier: GPL-2.0-only
"""Read kernel modules without kmod: decompression and the ELF .modinfo section.

Debian ships plain .ko up to 6.1 and .ko.xz from 6.12 on; busybox insmod in
the guest can only load uncompressed modules, so the initramfs builder uses
read_module() to decompress on the host.
"""

from __future__ import annotations

import gzip
import lzma
import shutil
import struct
import subprocess
from pathlib import Path

from .util import VmTestError

MODULE_SUFFIXES = (".ko", ".ko.xz", ".ko.zst", ".ko.gz")


def module_name(path: str | Path) -> str:
    """'drivers/net/virtio_net.ko.xz' -> 'virtio_net' (dashes normalised)."""
    name = Path(path).name
    for suf in MODULE_SUFFIXES:
        if name.endswith(suf):
            name = name[: -len(suf)]
            break
    return name.replace("-", "_")


def read_module(path: str | Path) -> bytes:
    """Return the uncompressed ELF image of a module file."""
    path = Path(path)
    data = path.read_bytes()
    name = path.name
    if name.endswith(".xz"):
        return lzma.decompress(data)
    if name.endswith(".gz"):
        return gzip.decompress(data)
    if name.endswith(".zst"):
        if not shutil.which("zstd"):
            raise VmTestError(f"{path}: zstd is needed to decompress it (apt-get install zstd)")
        return subprocess.run(["zstd", "-dc"], input=data, stdout=subprocess.PIPE,
                              check=True).stdout
    return data


def elf_section(elf: bytes, wanted: str) -> bytes | None:
    """Contents of one section of a 64-bit little-endian ELF file."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise VmTestError("not a 64-bit little-endian ELF file")
    e_shoff, = struct.unpack_from("<Q", elf, 0x28)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    if e_shoff == 0 or e_shnum == 0:
        return None

    def shdr(i):
        # name, type, flags, addr, offset, size
        return struct.unpack_from("<IIQQQQ", elf, e_shoff + i * e_shentsize)

    _, _, _, _, str_off, str_size = shdr(e_shstrndx)
    strtab = elf[str_off:str_off + str_size]
    for i in range(e_shnum):
        name_off, sh_type, _, _, off, size = shdr(i)
        end = strtab.find(b"\0", name_off)
        if strtab[name_off:end].decode() == wanted:
            if sh_type == 8:  # SHT_NOBITS
                return b""
            return elf[off:off + size]
    return None


def modinfo(path_or_bytes) -> dict[str, list[str]]:
    """All key=value pairs of .modinfo (keys may repeat: alias, parm...)."""
    elf = path_or_bytes if isinstance(path_or_bytes, (bytes, bytearray)) \
        else read_module(path_or_bytes)
    sec = elf_section(elf, ".modinfo")
    info: dict[str, list[str]] = {}
    if not sec:
        return info
    for item in sec.split(b"\0"):
        if b"=" not in item:
            continue
        k, v = item.split(b"=", 1)
        info.setdefault(k.decode(errors="replace"), []).append(v.decode(errors="replace"))
    return info


def modinfo_field(path_or_bytes, field: str) -> str:
    """First value of a field ('' if absent), like `modinfo -F field`."""
    return (modinfo(path_or_bytes).get(field) or [""])[0]


def module_depends(path_or_bytes) -> list[str]:
    deps = modinfo_field(path_or_bytes, "depends")
    return [d.replace("-", "_") for d in deps.split(",") if d]
