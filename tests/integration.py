#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""QEMU (TCG) integration tests of the virtio_net driver, stock or ours.

  tests/integration.py --kernel 6.1 --driver stock
  tests/integration.py --kernel 6.1 --module build/6.1.0-56-amd64/virtio_net.ko
  tests/integration.py --kernel 6.1,6.12 --smoke
  tests/integration.py --list

The kernel image comes from `tests/setup/kernel-env.sh image KEY` (or --image-dir).
Exit status: 0 if every selected test passed, 1 on failures, 2 on usage or
setup errors. Logs of failed tests: build/test-logs/<release>-<driver>/<test>/.
See tests/harness/README.md.
"""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import VmTestError, install_signal_handlers, kmemleak, resolve_kernel  # noqa: E402
from harness.runner import Runner  # noqa: E402
from harness.util import set_verbose  # noqa: E402
from suites import affinity, faults, functional  # noqa: E402
from suites import harness as harness_suite  # noqa: E402
from suites import failover, page_pool, parity, rss, udp_tunnel, uso, xdp, xsk  # noqa: E402,F401  (add to functional)


SUITES = {"functional": functional.suite, "harness": harness_suite.suite,
          "affinity": affinity.suite, "faults": faults.suite, "soak": faults.soak_suite}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--kernel", help="kernel key(s): 5.10, 6.1, 6.12, 7.2 (comma separated)")
    ap.add_argument("--module", type=Path, help="our virtio_net.ko (implies --driver ours)")
    ap.add_argument("--driver", choices=("ours", "stock"),
                    help="driver to test (default: ours with --module, else stock)")
    ap.add_argument("--image-dir", type=Path,
                    help="kernel image dir (vmlinuz, release, lib/modules/<release>/) "
                         "instead of kernel-env.sh; only with a single --kernel")
    ap.add_argument("--suite", choices=sorted(SUITES), default="functional",
                    help="functional: the driver tests (default); harness: self-checks "
                         "of the harness (topology, hotplug, trace, agent); affinity: "
                         "IRQ affinity plan and its application (ours only); faults: "
                         "link flaps, hot-unplug, rmmod, ethtool/CPU/MTU/freeze under "
                         "traffic, out-of-range ethtool and module options (ours only); "
                         "soak: checksummed transfers while coalescing changes "
                         "(VNET_SOAK_SECONDS, default 180)")
    ap.add_argument("--smoke", action="store_true",
                    help="boot + ethtool -i + ping + short TCP both ways only")
    ap.add_argument("--only", help="comma separated test names (a prefix like 'feature' "
                                   "selects feature.*)")
    ap.add_argument("--list", action="store_true", help="list the tests and exit")
    ap.add_argument("--kmemleak", action="store_true",
                    help="before each guest is stopped, scan for leaks with kmemleak and "
                         "fail on objects allocated through virtio_net (needs a kernel "
                         "with CONFIG_DEBUG_KMEMLEAK: tests/debug-kernel.sh)")
    ap.add_argument("--logs", type=Path, help="where to keep logs of failed tests "
                                              "(default build/test-logs)")
    ap.add_argument("-v", "--verbose", action="count", default=0,
                    help="progress details on stderr (-vv: every command)")
    a = ap.parse_args()
    set_verbose(a.verbose)

    suite = SUITES[a.suite]
    only = [x for x in (a.only or "").split(",") if x]
    try:
        tests = suite.select(only, a.smoke)
    except VmTestError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.list:
        for t in suite.tests:
            doc = " ".join(t.doc.split())
            print(f"{t.name:<24} {'smoke ' if t.smoke else '      '}[{t.boot}] {doc}")
        return 0
    if not a.kernel:
        ap.error("--kernel is required")
    driver = a.driver or ("ours" if a.module else "stock")
    if driver == "ours" and not a.module:
        ap.error("--driver ours needs --module PATH")
    if a.module and not a.module.is_file():
        ap.error(f"--module {a.module}: no such file")
    keys = [k for k in a.kernel.split(",") if k]
    if a.image_dir and len(keys) != 1:
        ap.error("--image-dir needs exactly one --kernel")
    if os.geteuid() != 0:
        print("error: needs root (network namespaces, taps)", file=sys.stderr)
        return 2

    install_signal_handlers()
    ok = True
    for key in keys:
        try:
            kernel = resolve_kernel(key, a.image_dir)
        except VmTestError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"=== kernel {key}: {kernel.release} ({kernel.dir}), driver {driver}, "
              f"{len(tests)} tests", flush=True)
        runner = Runner(kernel, driver, a.module.resolve() if a.module else None, a.logs)
        if a.kmemleak:
            runner.guest_checks.append(("kmemleak", kmemleak.check))
        ok = runner.run(tests) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
