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

/*
 * UDP tunnel GSO (VXLAN, Geneve): feature bits beyond the first 64, which
 * only kernels with the extended feature space (6.17) can negotiate.  The
 * driver passes these in a second word, @hi, bit N at position N - 64.
 */
#define VNET_F_GUEST_UDP_TUNNEL_GSO		65	/* device coalesces */
#define VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM	66	/* ... with outer csum */
#define VNET_F_HOST_UDP_TUNNEL_GSO		67	/* device segments */
#define VNET_F_HOST_UDP_TUNNEL_GSO_CSUM		68	/* ... with outer csum */
#define VNET_HI_BIT(f)	VNET_BIT((f) - 64)

/*
 * The guest offload bits (control queue, 64 bits wide) that switch the
 * first two: feature number minus 19.
 */
#define VNET_O_GUEST_UDP_TUNNEL_GSO		46
#define VNET_O_GUEST_UDP_TUNNEL_GSO_CSUM	47

struct vnet_netdev_features {
	netdev_features_t features;	/* enabled at probe */
	netdev_features_t hw_features;	/* user may toggle */
	netdev_features_t hw_enc_features; /* for encapsulated frames */
};

void vnet_pick_netdev_features(u64 vfeatures, bool csum, bool gso,
			       struct vnet_netdev_features *out);
u64 vnet_unusable_features(u64 offered);
u64 vnet_guest_offloads_capable(u64 vfeatures);
u64 vnet_guest_offloads_for(netdev_features_t features, u64 capable);
unsigned int vnet_default_pairs(unsigned int max_pairs, unsigned int cpus,
				unsigned int cap);
bool vnet_guest_gso(u64 vfeatures);
u64 vnet_tnl_unusable_features(u64 offered, u64 offered_hi);
void vnet_pick_tnl_features(u64 hi, bool gso, struct vnet_netdev_features *nf);
u64 vnet_tnl_guest_offloads(u64 hi);

#endif /* VNET_FEATURES_H */
