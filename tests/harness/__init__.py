# SPDX-License-Identifier: GPL-2.0-only
"""harness: the QEMU/TCG test harness of virtio-net-dkms (tests/harness).

Library layout:
  kernels    locate guest kernel images (tests/setup/kernel-env.sh image KEY)
  initramfs  cached base initramfs + per-boot overlay
  guest      Guest / VMConfig / Nic: boot, run, run_bg, qmp, logs, shutdown
  netns      per-guest network namespace with the tap backends
  agent      host side of the serial guest agent
  qmp        QMP client with events
  logcheck   kernel log problem patterns
  net        traffic helpers (iperf3, integrity, queue counters)
  runner     named tests sharing boots, PASS/FAIL report
  functional the driver test suite; harness_suite: self-checks of the harness
"""

from .guest import Guest, Nic, VMConfig, install_signal_handlers, shutdown_all
from .kernels import KernelImage, resolve_kernel
from .util import CheckFailed, VmTestError

__all__ = ["Guest", "Nic", "VMConfig", "install_signal_handlers", "shutdown_all",
           "KernelImage", "resolve_kernel", "CheckFailed", "VmTestError"]
