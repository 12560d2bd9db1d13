#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel feature probes for include/compat.h.
#
# Usage: compat-probe.sh SRCTREE
# Prints one -DVNET_HAVE_<NAME> compiler flag per feature the kernel
# headers under SRCTREE declare.  Each probe greps one header after
# joining its lines, so declarations split over several lines still
# match.  Probes test for a declaration, never for a version number.
set -eu

srctree=${1:?usage: compat-probe.sh SRCTREE}

flat() {
	# Header text on one line, runs of blanks squeezed to one space.
	[ -r "$srctree/$1" ] || return 0
	tr '\n\t' '  ' < "$srctree/$1" | tr -s ' '
}

# probe NAME HEADER EXTENDED-REGEX
probe() {
	if flat "$2" | grep -Eq -- "$3"; then
		printf ' -DVNET_HAVE_%s' "$1"
	fi
}

probe VIRTIO_RESET_DEVICE include/linux/virtio.h \
	'void virtio_reset_device\('
probe VQ_NUM_MAX include/linux/virtio.h \
	'unsigned int num_max;'
probe VIRTQUEUE_RESIZE include/linux/virtio.h \
	'int virtqueue_resize\('
probe RESIZE_RECYCLE_DONE include/linux/virtio.h \
	'int virtqueue_resize\([^;]*recycle_done'
probe CONFIG_DRIVER_ENABLE include/linux/virtio.h \
	'void virtio_config_driver_enable\('
probe VIRTQUEUE_INFO include/linux/virtio_config.h \
	'struct virtqueue_info \{'
probe NAPI_ADD_WEIGHT include/linux/netdevice.h \
	'netif_napi_add_weight\('
probe NAPI_ADD_TX_WEIGHT include/linux/netdevice.h \
	'netif_napi_add_tx_weight\('
probe NETIF_QUEUE_SET_NAPI include/linux/netdevice.h \
	'void netif_queue_set_napi\('
probe XPS_MAP_TYPE include/linux/netdevice.h \
	'enum xps_map_type \{'
probe HRTIMER_SETUP include/linux/hrtimer.h \
	'void hrtimer_setup\('
probe ETH_HW_ADDR_SET include/linux/etherdevice.h \
	'eth_hw_addr_set\('
probe COALESCE_EXTACK include/linux/ethtool.h \
	'\(\*set_coalesce\)\([^;]*netlink_ext_ack'
probe RINGPARAM_EXTACK include/linux/ethtool.h \
	'\(\*set_ringparam\)\([^;]*netlink_ext_ack'
probe VIRTIO_NET_DEVICE_STATS include/uapi/linux/virtio_net.h \
	'struct virtio_net_stats_reply_hdr'
probe NETDEV_STAT_OPS include/net/netdev_queues.h \
	'struct netdev_stat_ops \{'
probe RXFH_PARAM include/linux/ethtool.h \
	'\(\*get_rxfh\)\(struct net_device \*, struct ethtool_rxfh_param \*\)'
probe RXFH_FIELDS include/linux/ethtool.h \
	'\(\*get_rxfh_fields\)\('
probe RX_RING_COUNT include/linux/ethtool.h \
	'\(\*get_rx_ring_count\)\('
probe NETDEV_RX_QUEUE_H include/net/netdev_rx_queue.h \
	'struct rx_queue_attribute \{'
probe VIRTIO_NET_USO include/linux/virtio_net.h \
	'gso_type = VIRTIO_NET_HDR_GSO_UDP_L4'
probe XDP_INIT_BUFF include/net/xdp.h \
	'xdp_init_buff\('
probe XDP_RXQ_NAPI_ID include/net/xdp.h \
	'int __xdp_rxq_info_reg\('
probe XDP_WARN_DEV include/linux/filter.h \
	'bpf_warn_invalid_xdp_action\((const )?struct net_device'
probe XDP_FEATURES include/linux/netdevice.h \
	'xdp_features_t xdp_features;'
probe XDP_FRAME_FRAGS include/net/xdp.h \
	'xdp_frame_has_frags\('
probe XDP_UPDATE_SKB_FRAGS_INFO include/net/xdp.h \
	'xdp_update_skb_frags_info\('
probe SKB_FRAG_FILL_PAGE_DESC include/linux/skbuff.h \
	'void skb_frag_fill_page_desc\('
echo
