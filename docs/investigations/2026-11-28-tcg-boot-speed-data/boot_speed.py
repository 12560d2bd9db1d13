#!/usr/bin/env python3
"""Why one boot runs the same guest code slower than another under TCG:
per boot, over SECONDS of each cell, the vCPU threads' host CPU per
transaction (/proc schedstat), a `perf record -e cpu-clock` of the QEMU
process summed by symbol (samples per transaction), and where the guest
put the virtio modules' code (/sys/module/*/sections/.text).  Boots
alternate between the variants; QEMU's translation-block lookups
(qht_lookup_custom, tb_htable_lookup), softmmu TLB fills
(tlb_set_page_full) and the host kernel's scheduler are the symbols to
compare between fast and slow boots.

boot_speed.py KERNEL TOPO CELL[,CELL...] OUT --module KO [--variants stock-notx,ours] [--runs N]
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # the repository root
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from benchlib import probe  # noqa: E402


def vcpu_ns(pid: int) -> int:
    """Host CPU of the QEMU threads other than the main loop (vCPUs, helpers)."""
    total = 0
    for t in Path(f"/proc/{pid}/task").iterdir():
        if t.name == str(pid):
            continue
        try:
            total += int((t / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            pass
    return total


def perf_symbols(data: Path) -> dict[str, int]:
    """perf report by object and symbol -> {"object [k|.] symbol": samples}
    (all QEMU threads)."""
    text = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--sort", "dso,sym",
                           "-n"], capture_output=True, text=True).stdout
    res: dict[str, int] = {}
    for ln in text.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.+?)\s*$", ln)
        if m:
            res[f"{m.group(2)} [{m.group(3)}] {m.group(4)}"] = int(m.group(1))
    return res


# QEMU's own work for the guest code it runs, by kind (substrings of symbols)
KINDS = {
    "tb lookup": ("qht_lookup", "tb_htable_lookup", "helper_lookup_tb_ptr", "tb_lookup"),
    "translation": ("tb_gen_code", "translator_loop", "tcg_gen_code", "tcg_optimize",
                    "gen_intermediate_code", "disas_insn"),
    "softmmu tlb": ("tlb_set_page", "tlb_fill", "x86_cpu_tlb_fill", "mmu_translate",
                    "get_physical_address", "probe_access", "tlb_flush"),
    "memory slow path": ("helper_le_", "helper_be_", "helper_ret_", "helper_ld", "helper_st",
                         "cpu_ld", "cpu_st", "mmu_lookup", "do_ld", "do_st"),
    "exec loop": ("cpu_exec", "cpu_handle_", "mttcg_cpu_thread", "tcg_cpus_exec"),
}


def kinds(syms: dict[str, int]) -> dict[str, int]:
    """Samples by kind: host kernel, the code TCG generated (outside any
    file), QEMU's functions without a symbol, the QEMU functions of KINDS,
    the rest of QEMU and its libraries."""
    res = {k: 0 for k in ("host kernel", "generated code", "qemu unnamed", *KINDS,
                          "other qemu")}
    for key, n in syms.items():
        dso, mode, name = key.split(" ", 2)
        if mode == "[k]":
            res["host kernel"] += n
        elif not dso.startswith(("qemu", "lib")) and not dso.endswith(".so"):
            res["generated code"] += n
        elif name.startswith("0x"):
            res["qemu unnamed"] += n
        else:
            kind = next((k for k, subs in KINDS.items() if any(x in name for x in subs)),
                        "other qemu")
            res[kind] += n
    return res


def module_text(g) -> dict[str, str]:
    out = g.run("for m in virtio_net virtio_ring virtio_pci; do "
                "echo $m $(cat /sys/module/$m/sections/.text 2>/dev/null); done",
                timeout=30, quiet=True).out
    return {p[0]: p[1] for p in (ln.split() for ln in out.splitlines()) if len(p) == 2}


def main() -> None:
    a = probe.parser(__doc__).parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    res = []
    for rep, vname in probe.boots(a):
        with probe.booted(a, vname, "speed") as g:
            text = module_text(g)
            for cname in a.cells.split(","):
                data = a.out / f"{rep}-{vname}-{cname}.perf.data"
                with probe.load(g, cname, probe.ncpu(a)) as client:
                    v0, w0 = vcpu_ns(g.proc.pid), time.monotonic()
                    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "2000",
                                    "-o", str(data), "-p", str(g.proc.pid), "--",
                                    "sleep", str(a.seconds)], check=True,
                                   stdout=subprocess.DEVNULL)
                    v1, w1 = vcpu_ns(g.proc.pid), time.monotonic()
                    lat = client.window()
                syms = perf_symbols(data)
                data.unlink()
                n = max(1, lat.get("recv") or 1)
                total = sum(syms.values())
                top = sorted(syms.items(), key=lambda kv: -kv[1])[:40]
                rec = {"rep": rep, "variant": vname, "cell": cname, "text": text,
                       "answers_per_s": round(n / (w1 - w0)), "p50_us": lat.get("p50_us"),
                       "vcpu_us_per_txn": round((v1 - v0) / n / 1000, 2),
                       "samples_per_ktxn": round(total * 1000 / n, 1),
                       "kinds_per_ktxn": {k: round(c * 1000 / n, 2)
                                          for k, c in kinds(syms).items()},
                       "top_per_ktxn": {k: round(c * 1000 / n, 2) for k, c in top}}
                res.append(rec)
                print(json.dumps({k: rec[k] for k in rec if k != "top_per_ktxn"}), flush=True)
                time.sleep(1.0)
        probe.save(a.out / "boot_speed.json", res)


if __name__ == "__main__":
    main()
