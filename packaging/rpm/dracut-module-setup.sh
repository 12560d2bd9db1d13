#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# dracut module of virtio-net-dkms: virtio_net is loaded from the
# initramfs at boot, so the initramfs holds what the running system has:
# our virtio_net (the one depmod prefers, extra/), the kernel's own
# virtio_net and its dependencies for the fallback, the fallback rule and
# its helper, and the kmod tools the helper uses.  Untested (no RHEL or
# Fedora machine in the test suite); the initramfs-tools hook of the
# Debian package is the tested equivalent.
# dracut provides kernel, srcmods and the inst* functions:
# shellcheck disable=SC2154

check() {
	return 0
}

depends() {
	return 0
}

installkernel() {
	local f deps
	instmods virtio_net
	for f in "$srcmods"/kernel/drivers/net/virtio_net.ko*; do
		[ -e "$f" ] || continue
		inst_simple "$f"
		deps=$(modinfo -k "$kernel" -F depends "$f" 2>/dev/null | tr ',' ' ')
		# shellcheck disable=SC2086 # a list of module names
		[ -n "$deps" ] && instmods $deps
		break
	done
	return 0
}

install() {
	inst_multiple modprobe insmod rmmod modinfo
	inst_simple /usr/lib/virtio-net-dkms/virtio-net-load
	inst_simple /usr/lib/modprobe.d/virtio-net-dkms-fallback.conf
	if [ -e /etc/modprobe.d/virtio-net-dkms-fallback.conf ]; then
		inst_simple /etc/modprobe.d/virtio-net-dkms-fallback.conf
	fi
}
