// SPDX-License-Identifier: GPL-2.0-only
/*
 * Feature decisions (pure): what the negotiated virtio features and the
 * module options mean for the network device.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/netdevice.h>
#include <uapi/linux/virtio_net.h>
#include "policy/features.h"
#include "policy/dev_stats.h"

#define VNET_GUEST_GSO_BITS	(VNET_BIT(VIRTIO_NET_F_GUEST_TSO4) | \
				 VNET_BIT(VIRTIO_NET_F_GUEST_TSO6) | \
				 VNET_BIT(VIRTIO_NET_F_GUEST_ECN) | \
				 VNET_BIT(VIRTIO_NET_F_GUEST_UFO) | \
				 VNET_BIT(VNET_F_GUEST_USO4) | \
				 VNET_BIT(VNET_F_GUEST_USO6))

#define VNET_HOST_GSO_BITS	(VNET_BIT(VIRTIO_NET_F_HOST_TSO4) | \
				 VNET_BIT(VIRTIO_NET_F_HOST_TSO6) | \
				 VNET_BIT(VIRTIO_NET_F_HOST_ECN) | \
				 VNET_BIT(VIRTIO_NET_F_HOST_UFO) | \
				 VNET_BIT(VIRTIO_NET_F_GSO) | \
				 VNET_BIT(VNET_F_HOST_USO))

/* Features that only work through the control virtqueue. */
#define VNET_NEEDS_CVQ_BITS	(VNET_BIT(VIRTIO_NET_F_CTRL_RX) | \
				 VNET_BIT(VIRTIO_NET_F_CTRL_VLAN) | \
				 VNET_BIT(VIRTIO_NET_F_GUEST_ANNOUNCE) | \
				 VNET_BIT(VIRTIO_NET_F_MQ) | \
				 VNET_BIT(VIRTIO_NET_F_CTRL_MAC_ADDR) | \
				 VNET_BIT(VIRTIO_NET_F_CTRL_GUEST_OFFLOADS) | \
				 VNET_BIT(VNET_F_NOTF_COAL) | \
				 VNET_BIT(VNET_F_VQ_NOTF_COAL) | \
				 VNET_BIT(VNET_F_DEVICE_STATS) | \
				 VNET_BIT(VIRTIO_NET_F_RSS) | \
				 VNET_BIT(VIRTIO_NET_F_HASH_REPORT))

/* Guest offload bits that switch the device's UDP tunnel coalescing. */
#define VNET_GUEST_TNL_OFFLOADS	(VNET_BIT(VNET_O_GUEST_UDP_TUNNEL_GSO) | \
				 VNET_BIT(VNET_O_GUEST_UDP_TUNNEL_GSO_CSUM))

static bool has(u64 f, unsigned int bit)
{
	return f & VNET_BIT(bit);
}

bool vnet_guest_gso(u64 vfeatures)
{
	return vfeatures & VNET_GUEST_GSO_BITS;
}

/*
 * Offered features that depend on one the device did not offer.  The
 * virtio spec forbids such offers; a device that makes them anyway gets
 * the dependent features dropped rather than being refused outright, so
 * the guest keeps its network.
 */
u64 vnet_unusable_features(u64 offered)
{
	u64 drop = 0;

	if (!has(offered, VIRTIO_NET_F_CTRL_VQ))
		drop |= offered & VNET_NEEDS_CVQ_BITS;
	if (!has(offered, VIRTIO_NET_F_GUEST_CSUM))
		drop |= offered & VNET_GUEST_GSO_BITS;
	if (!has(offered, VIRTIO_NET_F_GUEST_TSO4) &&
	    !has(offered, VIRTIO_NET_F_GUEST_TSO6))
		drop |= offered & VNET_BIT(VIRTIO_NET_F_GUEST_ECN);
	if (!has(offered, VIRTIO_NET_F_CSUM))
		drop |= offered & VNET_HOST_GSO_BITS;
	if (!has(offered, VIRTIO_NET_F_HOST_TSO4) &&
	    !has(offered, VIRTIO_NET_F_HOST_TSO6) &&
	    !has(offered, VIRTIO_NET_F_GSO))
		drop |= offered & VNET_BIT(VIRTIO_NET_F_HOST_ECN);
	return drop;
}

void vnet_pick_netdev_features(u64 vf, bool csum, bool gso,
			       struct vnet_netdev_features *out)
{
	netdev_features_t f = NETIF_F_HIGHDMA;
	netdev_features_t hw = 0;

	if (has(vf, VIRTIO_NET_F_CSUM)) {
		hw |= NETIF_F_HW_CSUM | NETIF_F_SG;
		if (csum)
			f |= NETIF_F_HW_CSUM | NETIF_F_SG;
		if (has(vf, VIRTIO_NET_F_GSO))
			hw |= NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_TSO_ECN;
		if (has(vf, VIRTIO_NET_F_HOST_TSO4))
			hw |= NETIF_F_TSO;
		if (has(vf, VIRTIO_NET_F_HOST_TSO6))
			hw |= NETIF_F_TSO6;
		if (has(vf, VIRTIO_NET_F_HOST_ECN))
			hw |= NETIF_F_TSO_ECN;
		if (has(vf, VNET_F_HOST_USO))
			hw |= NETIF_F_GSO_UDP_L4;
		/* The device copes with any GSO frame the stack builds. */
		f |= NETIF_F_GSO_ROBUST;
		/* TSO without checksum offload is dropped by the core. */
		if (gso)
			f |= hw & (NETIF_F_ALL_TSO | NETIF_F_GSO_UDP_L4);
	}

	/*
	 * Received frames either carry a partial checksum the stack trusts
	 * (GUEST_CSUM) or a full one, possibly already validated by the
	 * device: receive checksumming is always on.
	 */
	f |= NETIF_F_RXCSUM;

	if (has(vf, VIRTIO_NET_F_GUEST_TSO4) || has(vf, VIRTIO_NET_F_GUEST_TSO6) ||
	    has(vf, VNET_F_GUEST_USO4) || has(vf, VNET_F_GUEST_USO6)) {
		f |= NETIF_F_GRO_HW;
		if (has(vf, VIRTIO_NET_F_CTRL_GUEST_OFFLOADS))
			hw |= NETIF_F_GRO_HW;
	}

	if (has(vf, VIRTIO_NET_F_CTRL_VLAN))
		f |= NETIF_F_HW_VLAN_CTAG_FILTER;

	out->features = f;
	out->hw_features = hw;
	out->hw_enc_features = 0;
}

static bool has_hi(u64 hi, unsigned int bit)
{
	return hi & VNET_HI_BIT(bit);
}

/*
 * UDP tunnel features (in @offered_hi) that depend on one the device did
 * not offer, as bits of that word: tunnel GSO needs the plain GSO it
 * wraps (with its checksum feature), the outer checksum variant needs
 * tunnel GSO.
 */
u64 vnet_tnl_unusable_features(u64 offered, u64 offered_hi)
{
	const u64 guest = VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO) |
			  VNET_HI_BIT(VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM);
	const u64 host = VNET_HI_BIT(VNET_F_HOST_UDP_TUNNEL_GSO) |
			 VNET_HI_BIT(VNET_F_HOST_UDP_TUNNEL_GSO_CSUM);
	u64 drop = 0;

	if (!has(offered, VIRTIO_NET_F_GUEST_CSUM) ||
	    !(offered & (VNET_BIT(VIRTIO_NET_F_GUEST_TSO4) |
			 VNET_BIT(VIRTIO_NET_F_GUEST_TSO6) |
			 VNET_BIT(VNET_F_GUEST_USO4) |
			 VNET_BIT(VNET_F_GUEST_USO6))) ||
	    !has_hi(offered_hi, VNET_F_GUEST_UDP_TUNNEL_GSO))
		drop |= offered_hi & guest;
	if (!has(offered, VIRTIO_NET_F_CSUM) ||
	    !(offered & (VNET_BIT(VIRTIO_NET_F_HOST_TSO4) |
			 VNET_BIT(VIRTIO_NET_F_HOST_TSO6) |
			 VNET_BIT(VNET_F_HOST_USO))) ||
	    !has_hi(offered_hi, VNET_F_HOST_UDP_TUNNEL_GSO))
		drop |= offered_hi & host;
	return drop;
}

/*
 * Transmit side of UDP tunnel GSO, added to what
 * vnet_pick_netdev_features() chose: the stack may hand over VXLAN or
 * Geneve GSO frames, whose inner packet gets every offload the device
 * has for plain frames (hw_enc_features).  Needs checksum offload.
 */
void vnet_pick_tnl_features(u64 hi, bool gso, struct vnet_netdev_features *nf)
{
	netdev_features_t tnl = 0;

	if (!(nf->hw_features & NETIF_F_HW_CSUM) ||
	    !has_hi(hi, VNET_F_HOST_UDP_TUNNEL_GSO))
		return;
	tnl = NETIF_F_GSO_UDP_TUNNEL;
	if (has_hi(hi, VNET_F_HOST_UDP_TUNNEL_GSO_CSUM))
		tnl |= NETIF_F_GSO_UDP_TUNNEL_CSUM;
	nf->hw_enc_features = nf->hw_features | tnl;
	nf->hw_features |= tnl;
	if (gso)
		nf->features |= tnl;
}

/* Guest offload bits for the UDP tunnel features negotiated (in @hi). */
u64 vnet_tnl_guest_offloads(u64 hi)
{
	u64 o = 0;

	if (has_hi(hi, VNET_F_GUEST_UDP_TUNNEL_GSO))
		o |= VNET_BIT(VNET_O_GUEST_UDP_TUNNEL_GSO);
	if (has_hi(hi, VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM))
		o |= VNET_BIT(VNET_O_GUEST_UDP_TUNNEL_GSO_CSUM);
	return o;
}

/* Guest offloads that the control queue can switch on this device. */
u64 vnet_guest_offloads_capable(u64 vf)
{
	return vf & (VNET_GUEST_GSO_BITS | VNET_BIT(VIRTIO_NET_F_GUEST_CSUM));
}

/* Guest offloads to program for a set of netdev features. */
u64 vnet_guest_offloads_for(netdev_features_t features, u64 capable)
{
	u64 offloads = capable;

	if (!(features & NETIF_F_GRO_HW))
		offloads &= ~(VNET_GUEST_GSO_BITS | VNET_GUEST_TNL_OFFLOADS);
	return offloads;
}

/*
 * Queue pairs used at probe: one per online CPU, no more than the device
 * has, capped by the max_queue_pairs option when it is set (non-zero).
 */
unsigned int vnet_default_pairs(unsigned int max_pairs, unsigned int cpus,
				unsigned int cap)
{
	unsigned int n = min(max_pairs, cpus);

	if (cap)
		n = min(n, cap);
	return max(n, 1U);
}
