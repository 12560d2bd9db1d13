// SPDX-License-Identifier: GPL-2.0-only
/* KUnit: feature decisions. */
#include <kunit/test.h>
#include <linux/netdevice.h>
#include <uapi/linux/virtio_net.h>
#include "policy/features.h"
#include "policy/dev_stats.h"

#define B(x)	VNET_BIT(VIRTIO_NET_F_##x)

/* What QEMU's virtio-net-pci offers by default (mq=on). */
#define QEMU_DEFAULT	(B(CSUM) | B(GUEST_CSUM) | B(CTRL_GUEST_OFFLOADS) | \
			 B(MAC) | B(GUEST_TSO4) | B(GUEST_TSO6) | \
			 B(GUEST_ECN) | B(GUEST_UFO) | B(HOST_TSO4) | \
			 B(HOST_TSO6) | B(HOST_ECN) | B(HOST_UFO) | \
			 B(MRG_RXBUF) | B(STATUS) | B(CTRL_VQ) | B(CTRL_RX) | \
			 B(CTRL_VLAN) | B(GUEST_ANNOUNCE) | B(MQ) | \
			 B(CTRL_MAC_ADDR))

static void feat_consistent_offer_is_kept(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_unusable_features(QEMU_DEFAULT), 0ULL);
}

static void feat_no_cvq_drops_cvq_features(struct kunit *test)
{
	u64 offer = (QEMU_DEFAULT & ~B(CTRL_VQ)) | VNET_BIT(VNET_F_NOTF_COAL) |
		    VNET_BIT(VNET_F_VQ_NOTF_COAL) | B(RSS) | B(HASH_REPORT) |
		    VNET_BIT(VNET_F_DEVICE_STATS);
	u64 drop = vnet_unusable_features(offer);

	KUNIT_EXPECT_EQ(test, drop, B(CTRL_RX) | B(CTRL_VLAN) |
			B(GUEST_ANNOUNCE) | B(MQ) | B(CTRL_MAC_ADDR) |
			B(CTRL_GUEST_OFFLOADS) | VNET_BIT(VNET_F_NOTF_COAL) |
			VNET_BIT(VNET_F_VQ_NOTF_COAL) | B(RSS) |
			B(HASH_REPORT) | VNET_BIT(VNET_F_DEVICE_STATS));
}

static void feat_no_guest_csum_drops_guest_gso(struct kunit *test)
{
	u64 drop = vnet_unusable_features(QEMU_DEFAULT & ~B(GUEST_CSUM));

	KUNIT_EXPECT_EQ(test, drop, B(GUEST_TSO4) | B(GUEST_TSO6) |
			B(GUEST_ECN) | B(GUEST_UFO));
}

static void feat_no_csum_drops_host_gso(struct kunit *test)
{
	u64 drop = vnet_unusable_features(QEMU_DEFAULT & ~B(CSUM));

	KUNIT_EXPECT_EQ(test, drop, B(HOST_TSO4) | B(HOST_TSO6) |
			B(HOST_ECN) | B(HOST_UFO));
}

static void feat_ecn_needs_tso(struct kunit *test)
{
	u64 offer = B(CSUM) | B(GUEST_CSUM) | B(GUEST_ECN) | B(HOST_ECN);

	KUNIT_EXPECT_EQ(test, vnet_unusable_features(offer),
			B(GUEST_ECN) | B(HOST_ECN));
}

static void feat_netdev_defaults(struct kunit *test)
{
	struct vnet_netdev_features nf;

	vnet_pick_netdev_features(QEMU_DEFAULT, true, true, &nf);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_HW_CSUM);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_SG);
	KUNIT_EXPECT_EQ(test, nf.features & NETIF_F_ALL_TSO,
			NETIF_F_TSO | NETIF_F_TSO6 | NETIF_F_TSO_ECN);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_RXCSUM);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_GRO_HW);
	KUNIT_EXPECT_TRUE(test, nf.hw_features & NETIF_F_GRO_HW);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_HW_VLAN_CTAG_FILTER);
}

/* csum=0 / gso=0: off at load, but the user may switch them on. */
static void feat_module_options(struct kunit *test)
{
	struct vnet_netdev_features nf;

	vnet_pick_netdev_features(QEMU_DEFAULT, false, true, &nf);
	KUNIT_EXPECT_FALSE(test, nf.features & NETIF_F_HW_CSUM);
	KUNIT_EXPECT_TRUE(test, nf.hw_features & NETIF_F_HW_CSUM);

	vnet_pick_netdev_features(QEMU_DEFAULT, true, false, &nf);
	KUNIT_EXPECT_FALSE(test, nf.features & NETIF_F_ALL_TSO);
	KUNIT_EXPECT_TRUE(test, nf.hw_features & NETIF_F_TSO);
}

static void feat_no_device_csum(struct kunit *test)
{
	struct vnet_netdev_features nf;

	vnet_pick_netdev_features(B(MAC) | B(MRG_RXBUF), true, true, &nf);
	KUNIT_EXPECT_FALSE(test, (nf.features | nf.hw_features) &
			   (NETIF_F_HW_CSUM | NETIF_F_ALL_TSO | NETIF_F_GRO_HW));
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_RXCSUM);
	KUNIT_EXPECT_FALSE(test, nf.features & NETIF_F_HW_VLAN_CTAG_FILTER);
}

/* Without the control queue hardware GRO is fixed, not switchable. */
static void feat_gro_hw_needs_ctrl(struct kunit *test)
{
	struct vnet_netdev_features nf;

	vnet_pick_netdev_features(QEMU_DEFAULT & ~B(CTRL_GUEST_OFFLOADS),
				  true, true, &nf);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_GRO_HW);
	KUNIT_EXPECT_FALSE(test, nf.hw_features & NETIF_F_GRO_HW);
}

static void feat_guest_offloads(struct kunit *test)
{
	u64 cap = vnet_guest_offloads_capable(QEMU_DEFAULT);

	KUNIT_EXPECT_EQ(test, cap, B(GUEST_CSUM) | B(GUEST_TSO4) |
			B(GUEST_TSO6) | B(GUEST_ECN) | B(GUEST_UFO));
	KUNIT_EXPECT_EQ(test, vnet_guest_offloads_for(NETIF_F_GRO_HW, cap), cap);
	KUNIT_EXPECT_EQ(test, vnet_guest_offloads_for(0, cap), B(GUEST_CSUM));
}

#define USO_ALL		(VNET_BIT(VNET_F_HOST_USO) | VNET_BIT(VNET_F_GUEST_USO4) | \
			 VNET_BIT(VNET_F_GUEST_USO6))

/* USO: segmentation offload both ways, part of hardware GRO on receive. */
static void feat_uso(struct kunit *test)
{
	struct vnet_netdev_features nf;
	u64 cap = vnet_guest_offloads_capable(QEMU_DEFAULT | USO_ALL);

	KUNIT_EXPECT_EQ(test, vnet_unusable_features(QEMU_DEFAULT | USO_ALL), 0ULL);
	vnet_pick_netdev_features(QEMU_DEFAULT | USO_ALL, true, true, &nf);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_GSO_UDP_L4);
	KUNIT_EXPECT_TRUE(test, nf.hw_features & NETIF_F_GSO_UDP_L4);
	vnet_pick_netdev_features(QEMU_DEFAULT | USO_ALL, true, false, &nf);
	KUNIT_EXPECT_FALSE(test, nf.features & NETIF_F_GSO_UDP_L4);
	KUNIT_EXPECT_TRUE(test, nf.hw_features & NETIF_F_GSO_UDP_L4);
	vnet_pick_netdev_features(QEMU_DEFAULT, true, true, &nf);
	KUNIT_EXPECT_FALSE(test, (nf.features | nf.hw_features) &
			   NETIF_F_GSO_UDP_L4);

	/* receive: USO alone makes hardware GRO, switched with the rest */
	vnet_pick_netdev_features(B(CSUM) | B(GUEST_CSUM) | B(CTRL_VQ) |
				  B(CTRL_GUEST_OFFLOADS) |
				  VNET_BIT(VNET_F_GUEST_USO4), true, true, &nf);
	KUNIT_EXPECT_TRUE(test, nf.features & NETIF_F_GRO_HW);
	KUNIT_EXPECT_EQ(test, cap & (VNET_BIT(VNET_F_GUEST_USO4) |
				     VNET_BIT(VNET_F_GUEST_USO6)),
			VNET_BIT(VNET_F_GUEST_USO4) | VNET_BIT(VNET_F_GUEST_USO6));
	KUNIT_EXPECT_EQ(test, vnet_guest_offloads_for(0, cap), B(GUEST_CSUM));
	KUNIT_EXPECT_TRUE(test, vnet_guest_gso(VNET_BIT(VNET_F_GUEST_USO6)));

	/* dependencies: checksum offload each way */
	KUNIT_EXPECT_EQ(test, vnet_unusable_features((QEMU_DEFAULT | USO_ALL) &
						     ~B(CSUM)),
			B(HOST_TSO4) | B(HOST_TSO6) | B(HOST_ECN) |
			B(HOST_UFO) | VNET_BIT(VNET_F_HOST_USO));
	KUNIT_EXPECT_EQ(test, vnet_unusable_features((QEMU_DEFAULT | USO_ALL) &
						     ~B(GUEST_CSUM)),
			B(GUEST_TSO4) | B(GUEST_TSO6) | B(GUEST_ECN) |
			B(GUEST_UFO) | VNET_BIT(VNET_F_GUEST_USO4) |
			VNET_BIT(VNET_F_GUEST_USO6));
}

#define H(x)		VNET_HI_BIT(VNET_F_##x)
/* What QEMU 11.1's virtio-net-pci offers above bit 63 by default. */
#define TNL_ALL		(H(GUEST_UDP_TUNNEL_GSO) | H(GUEST_UDP_TUNNEL_GSO_CSUM) | \
			 H(HOST_UDP_TUNNEL_GSO) | H(HOST_UDP_TUNNEL_GSO_CSUM))

/* UDP tunnel GSO: kept only with the plain GSO and checksum it wraps. */
static void feat_tnl_dependencies(struct kunit *test)
{
	const u64 guest = H(GUEST_UDP_TUNNEL_GSO) | H(GUEST_UDP_TUNNEL_GSO_CSUM);
	const u64 host = H(HOST_UDP_TUNNEL_GSO) | H(HOST_UDP_TUNNEL_GSO_CSUM);

	KUNIT_EXPECT_EQ(test, vnet_tnl_unusable_features(QEMU_DEFAULT, TNL_ALL), 0ULL);
	KUNIT_EXPECT_EQ(test, vnet_tnl_unusable_features(QEMU_DEFAULT | USO_ALL, TNL_ALL),
			0ULL);
	KUNIT_EXPECT_EQ(test, vnet_tnl_unusable_features(QEMU_DEFAULT, 0), 0ULL);
	/* checksum offload each way */
	KUNIT_EXPECT_EQ(test, vnet_tnl_unusable_features(QEMU_DEFAULT & ~B(GUEST_CSUM),
							 TNL_ALL), guest);
	KUNIT_EXPECT_EQ(test, vnet_tnl_unusable_features(QEMU_DEFAULT & ~B(CSUM), TNL_ALL),
			host);
	/* some plain segmentation to wrap: TSO or USO */
	KUNIT_EXPECT_EQ(test,
			vnet_tnl_unusable_features(QEMU_DEFAULT & ~(B(GUEST_TSO4) |
								    B(GUEST_TSO6)),
						   TNL_ALL), guest);
	KUNIT_EXPECT_EQ(test,
			vnet_tnl_unusable_features((QEMU_DEFAULT & ~(B(GUEST_TSO4) |
								     B(GUEST_TSO6))) |
						   VNET_BIT(VNET_F_GUEST_USO6), TNL_ALL),
			0ULL);
	KUNIT_EXPECT_EQ(test,
			vnet_tnl_unusable_features(QEMU_DEFAULT & ~(B(HOST_TSO4) |
								    B(HOST_TSO6)),
						   TNL_ALL), host);
	KUNIT_EXPECT_EQ(test,
			vnet_tnl_unusable_features(QEMU_DEFAULT & ~B(HOST_TSO4), TNL_ALL),
			0ULL);
	/* the outer checksum variants need tunnel GSO itself */
	KUNIT_EXPECT_EQ(test,
			vnet_tnl_unusable_features(QEMU_DEFAULT,
						   H(GUEST_UDP_TUNNEL_GSO_CSUM) |
						   H(HOST_UDP_TUNNEL_GSO_CSUM)),
			H(GUEST_UDP_TUNNEL_GSO_CSUM) | H(HOST_UDP_TUNNEL_GSO_CSUM));
	/* bits it does not know are not its business */
	KUNIT_EXPECT_EQ(test, vnet_tnl_unusable_features(0, VNET_BIT(0) | VNET_BIT(63)),
			0ULL);
}

static void feat_tnl_netdev(struct kunit *test)
{
	const netdev_features_t tnl = NETIF_F_GSO_UDP_TUNNEL |
				      NETIF_F_GSO_UDP_TUNNEL_CSUM;
	struct vnet_netdev_features nf;

	/* without the features nothing changes, no inner offloads */
	vnet_pick_netdev_features(QEMU_DEFAULT, true, true, &nf);
	vnet_pick_tnl_features(0, true, &nf);
	KUNIT_EXPECT_FALSE(test, (nf.features | nf.hw_features) & tnl);
	KUNIT_EXPECT_FALSE(test, nf.hw_enc_features);

	/* both; the inner packet gets the plain offloads */
	vnet_pick_netdev_features(QEMU_DEFAULT, true, true, &nf);
	vnet_pick_tnl_features(TNL_ALL, true, &nf);
	KUNIT_EXPECT_EQ(test, nf.features & tnl, tnl);
	KUNIT_EXPECT_EQ(test, nf.hw_features & tnl, tnl);
	KUNIT_EXPECT_EQ(test, nf.hw_enc_features & tnl, tnl);
	KUNIT_EXPECT_TRUE(test, nf.hw_enc_features & NETIF_F_TSO);
	KUNIT_EXPECT_TRUE(test, nf.hw_enc_features & NETIF_F_TSO6);
	KUNIT_EXPECT_TRUE(test, nf.hw_enc_features & NETIF_F_HW_CSUM);

	/* without the outer checksum */
	vnet_pick_netdev_features(QEMU_DEFAULT, true, true, &nf);
	vnet_pick_tnl_features(H(HOST_UDP_TUNNEL_GSO), true, &nf);
	KUNIT_EXPECT_EQ(test, nf.features & tnl, NETIF_F_GSO_UDP_TUNNEL);
	KUNIT_EXPECT_EQ(test, nf.hw_enc_features & tnl, NETIF_F_GSO_UDP_TUNNEL);

	/* gso=0: off, but switchable */
	vnet_pick_netdev_features(QEMU_DEFAULT, true, false, &nf);
	vnet_pick_tnl_features(TNL_ALL, false, &nf);
	KUNIT_EXPECT_FALSE(test, nf.features & tnl);
	KUNIT_EXPECT_EQ(test, nf.hw_features & tnl, tnl);

	/* receive-only tunnel features change nothing on transmit */
	vnet_pick_netdev_features(QEMU_DEFAULT, true, true, &nf);
	vnet_pick_tnl_features(H(GUEST_UDP_TUNNEL_GSO) | H(GUEST_UDP_TUNNEL_GSO_CSUM),
			       true, &nf);
	KUNIT_EXPECT_FALSE(test, (nf.features | nf.hw_features) & tnl);

	/* no checksum offload: no tunnel GSO either */
	vnet_pick_netdev_features(B(MAC) | B(MRG_RXBUF), true, true, &nf);
	vnet_pick_tnl_features(TNL_ALL, true, &nf);
	KUNIT_EXPECT_FALSE(test, (nf.features | nf.hw_features) & tnl);
}

/* Receive: the tunnel offloads switch with the other hardware GRO ones. */
static void feat_tnl_guest_offloads(struct kunit *test)
{
	const u64 o = VNET_BIT(VNET_O_GUEST_UDP_TUNNEL_GSO) |
		      VNET_BIT(VNET_O_GUEST_UDP_TUNNEL_GSO_CSUM);
	u64 cap = vnet_guest_offloads_capable(QEMU_DEFAULT) |
		  vnet_tnl_guest_offloads(TNL_ALL);

	KUNIT_EXPECT_EQ(test, vnet_tnl_guest_offloads(0), 0ULL);
	KUNIT_EXPECT_EQ(test, vnet_tnl_guest_offloads(TNL_ALL), o);
	KUNIT_EXPECT_EQ(test, vnet_tnl_guest_offloads(H(GUEST_UDP_TUNNEL_GSO)),
			VNET_BIT(VNET_O_GUEST_UDP_TUNNEL_GSO));
	KUNIT_EXPECT_EQ(test, vnet_tnl_guest_offloads(H(HOST_UDP_TUNNEL_GSO)), 0ULL);
	/* the offload bits are the feature bits less 19 */
	KUNIT_EXPECT_EQ(test, VNET_F_GUEST_UDP_TUNNEL_GSO - VNET_O_GUEST_UDP_TUNNEL_GSO, 19);
	KUNIT_EXPECT_EQ(test, VNET_F_GUEST_UDP_TUNNEL_GSO_CSUM -
			VNET_O_GUEST_UDP_TUNNEL_GSO_CSUM, 19);
	KUNIT_EXPECT_EQ(test, vnet_guest_offloads_for(NETIF_F_GRO_HW, cap), cap);
	KUNIT_EXPECT_EQ(test, vnet_guest_offloads_for(0, cap), B(GUEST_CSUM));
}

static void feat_default_pairs(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vnet_default_pairs(8, 4, 0), 4U);
	KUNIT_EXPECT_EQ(test, vnet_default_pairs(2, 4, 0), 2U);
	KUNIT_EXPECT_EQ(test, vnet_default_pairs(8, 4, 3), 3U);
	KUNIT_EXPECT_EQ(test, vnet_default_pairs(8, 4, 16), 4U);
	KUNIT_EXPECT_EQ(test, vnet_default_pairs(1, 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, vnet_default_pairs(4, 0, 0), 1U);
}

static struct kunit_case features_cases[] = {
	KUNIT_CASE(feat_consistent_offer_is_kept),
	KUNIT_CASE(feat_no_cvq_drops_cvq_features),
	KUNIT_CASE(feat_no_guest_csum_drops_guest_gso),
	KUNIT_CASE(feat_no_csum_drops_host_gso),
	KUNIT_CASE(feat_ecn_needs_tso),
	KUNIT_CASE(feat_netdev_defaults),
	KUNIT_CASE(feat_module_options),
	KUNIT_CASE(feat_no_device_csum),
	KUNIT_CASE(feat_uso),
	KUNIT_CASE(feat_gro_hw_needs_ctrl),
	KUNIT_CASE(feat_guest_offloads),
	KUNIT_CASE(feat_tnl_dependencies),
	KUNIT_CASE(feat_tnl_netdev),
	KUNIT_CASE(feat_tnl_guest_offloads),
	KUNIT_CASE(feat_default_pairs),
	{}
};

static struct kunit_suite features_suite = {
	.name = "vnet_features",
	.test_cases = features_cases,
};

kunit_test_suite(features_suite);
