/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Feature decisions: from negotiated virtio feature bits and module
 * options to netdev features, guest offloads and queue counts.
 * Pure functions of their arguments, tested with KUnit.
 */
#ifndef VNET_FEATURES_H
#define VNET_FEATURES_H

#include <linux/types.h>
#include <linux/netdev_features.h>

#define VNET_BIT(f)	(1ULL << (f))

/* Feature bits newer than some supported kernels' headers (virtio 1.3). */
#define VNET_F_VQ_NOTF_COAL	52	/* per-virtqueue notification coalescing */
#define VNET_F_NOTF_COAL	53	/* notification coalescing */
#define VNET_F_GUEST_USO4	54	/* the guest takes UDP segmentation, IPv4 */
#define VNET_F_GUEST_USO6	55	/* ... and IPv6 */
#define VNET_F_HOST_USO		56	/* the device segments UDP (USO) */

struct vnet_netdev_features {
	netdev_features_t features;	/* enabled at probe */
	netdev_features_t hw_features;	/* user may toggle */
};

void vnet_pick_netdev_features(u64 vfeatures, bool csum, bool gso,
			       struct vnet_netdev_features *out);
u64 vnet_unusable_features(u64 offered);
u64 vnet_guest_offloads_capable(u64 vfeatures);
u64 vnet_guest_offloads_for(netdev_features_t features, u64 capable);
unsigned int vnet_default_pairs(unsigned int max_pairs, unsigned int cpus,
				unsigned int cap);
bool vnet_guest_gso(u64 vfeatures);

#endif /* VNET_FEATURES_H */
