# SPDX-License-Identifier: GPL-2.0-only
#
# virtio-net-dkms: user-facing make targets.  The module itself is
# described in Kbuild.
#
#   make                  build virtio_net.ko for the running kernel
#   make KVER=<release>   ... or for another installed kernel
#   make KDIR=<dir>       ... or against a kernel build tree
#   make W=1 C=2          extra warnings, sparse
#   make install          install into /lib/modules/<KVER>/updates
#   make compat-report    what each compat probe finds in that kernel
#   make check            checkpatch --strict over the sources
#   make test             the whole test suite (tests/run-all.sh, see README)
#   make demo             stock driver and ours side by side in a guest
#   make bench            the benchmark (bench/bench.py)
#   make deb              build/packages/virtio-net-dkms_<version>_all.deb
#   make rpm              build/packages/virtio-net-dkms-<version>-1.noarch.rpm

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build

all: module

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)

version:
	@sh scripts/version.sh .

# The probes read the kernel's headers: KDIR itself for a full tree, its
# source tree where the build directory holds only generated files
# (Debian's linux-headers-<release>-common beside -<arch>).
compat-report:
	@for d in $(KDIR) $(KDIR)/source $(dir $(KDIR))source \
		$$(sed -n 's|^include \(.*\)/Makefile$$|\1|p' $(KDIR)/Makefile 2>/dev/null); do \
		if [ -r "$$d/include/linux/virtio.h" ]; then \
			exec sh scripts/compat-probe.sh --report "$$d"; \
		fi; \
	done; \
	echo "no kernel headers found for KDIR=$(KDIR): give KDIR=<dir with include/linux/virtio.h>" >&2; \
	exit 1

check:
	bash tests/checkpatch.sh

test:
	bash tests/run-all.sh

demo:
	bash bench/demo.sh

bench:
	python3 bench/bench.py

deb:
	bash packaging/make-deb.sh

rpm:
	bash packaging/make-rpm.sh

.PHONY: all module clean install version compat-report check test demo bench deb rpm
