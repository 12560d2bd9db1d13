#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel feature probes for include/compat.h.
#
# Usage: compat-probe.sh SRCTREE            (what Kbuild runs)
#        compat-probe.sh --report SRCTREE   (make compat-report)
#
# Prints one -DVNET_HAVE_<NAME> compiler flag per feature the kernel
# headers under SRCTREE declare.  Each probe greps one header after
# joining its lines, so declarations split over several lines still
# match.  Probes test for a declaration, never for a version number.
#
# A probe that misses silently would change what the driver does (an ops
# callback built with the wrong prototype, a feature left out), so such
# probes cannot miss quietly:
#  - probe NAME HEADER REGEX ANCHOR WHAT: when the header names ANCHOR
#    but REGEX does not match, the kernel has the feature in a shape the
#    driver does not know;
#  - form NAME HEADER NEW OLD WHAT: exactly one of the two prototypes must
#    match.
# Either failure prints why on stderr and the token VNET_PROBE_FAILED,
# which makes Kbuild stop with an error.  ANCHOR "-" means a miss is safe
# (the fallback does not build where the declaration exists).
set -eu

report=0
if [ "${1:-}" = --report ]; then
	report=1
	shift
fi
srctree=${1:?usage: compat-probe.sh [--report] SRCTREE}
failed=0

flat() {
	# Header text on one line, runs of blanks squeezed to one space.
	[ -r "$srctree/$1" ] || return 0
	tr '\n\t' '  ' < "$srctree/$1" | tr -s ' '
}

has() {
	flat "$1" | grep -Eq -- "$2"
}

# result NAME HEADER yes|no|FAILED WHAT
result() {
	if [ "$report" -eq 1 ]; then
		printf '%-26s %-7s %-34s %s\n' "$1" "$3" "$2" "$4"
	elif [ "$3" = yes ]; then
		printf ' -DVNET_HAVE_%s' "$1"
	fi
}

fail() {
	echo "compat-probe: $1 ($2): $3" >&2
	failed=1
	result "$1" "$2" FAILED "$3"
}

# probe NAME HEADER REGEX ANCHOR WHAT
probe() {
	if has "$2" "$3"; then
		result "$1" "$2" yes "$5"
	elif [ "$4" != - ] && has "$2" "$4"; then
		fail "$1" "$2" "the header names '$4' in a form this driver does not know"
	else
		result "$1" "$2" no "$5"
	fi
}

# form NAME HEADER NEW-REGEX OLD-REGEX WHAT
form() {
	if has "$2" "$3" && ! has "$2" "$4"; then
		result "$1" "$2" yes "$5"
	elif has "$2" "$4" && ! has "$2" "$3"; then
		result "$1" "$2" no "$5"
	else
		fail "$1" "$2" "neither (or both) of the known prototypes found"
	fi
}

if [ "$report" -eq 1 ]; then
	printf 'compat probes for %s\n\n' "$srctree"
	printf '%-26s %-7s %-34s %s\n' PROBE FOUND HEADER \
		'what the driver uses it for (without it: the fallback)'
fi

probe VIRTIO_RESET_DEVICE include/linux/virtio.h \
	'void virtio_reset_device\(' - \
	'virtio_reset_device() (config->reset())'
probe VQ_NUM_MAX include/linux/virtio.h \
	'unsigned int num_max;' 'num_max' \
	'largest ring size for ethtool -G (the current size)'
probe VIRTQUEUE_RESIZE include/linux/virtio.h \
	'int virtqueue_resize\(' 'virtqueue_resize' \
	'ethtool -G (ring sizes fixed)'
probe RESIZE_RECYCLE_DONE include/linux/virtio.h \
	'int virtqueue_resize\([^;]*recycle_done' - \
	'virtqueue_resize() with recycle_done (without)'
probe CONFIG_DRIVER_ENABLE include/linux/virtio.h \
	'void virtio_config_driver_enable\(' 'virtio_config_driver_enable' \
	'config-change interrupts held until probe is done (not held)'
probe VIRTQUEUE_INFO include/linux/virtio_config.h \
	'struct virtqueue_info \{' - \
	'virtio_find_vqs() with virtqueue_info (callback and name arrays)'
probe NAPI_ADD_WEIGHT include/linux/netdevice.h \
	'netif_napi_add_weight\(' - \
	'netif_napi_add_weight() (netif_napi_add() with a weight)'
probe NAPI_ADD_TX_WEIGHT include/linux/netdevice.h \
	'netif_napi_add_tx_weight\(' - \
	'netif_napi_add_tx_weight() (netif_tx_napi_add())'
probe NETIF_QUEUE_SET_NAPI include/linux/netdevice.h \
	'void netif_queue_set_napi\(' 'netif_queue_set_napi' \
	'queue-to-NAPI links for netlink (none)'
probe NETIF_NAPI_SET_IRQ include/linux/netdevice.h \
	'void netif_napi_set_irq\(' 'netif_napi_set_irq' \
	'NAPI-to-IRQ links for netlink napi-get (none)'
probe NETIF_NAPI_ADD_CONFIG include/linux/netdevice.h \
	'void netif_napi_add_config\(' 'netif_napi_add_config' \
	'persistent per-NAPI ids and settings (new id at each enable)'
probe NAPI_DEFER_PER_NAPI include/linux/netdevice.h \
	'struct napi_struct \{[^}]* u32 defer_hard_irqs;' 'struct napi_config \{' \
	'defer-hard-irqs and gro-flush-timeout per NAPI (per device)'
probe DEV_SET_THREADED include/linux/netdevice.h \
	'int dev_set_threaded\(struct net_device \*dev, (bool|enum netdev_napi_threaded) threaded\);' \
	'dev_set_threaded' \
	'threaded NAPI switched by the driver (module option auto_threaded has no effect)'
probe DEV_SET_THREADED_ENUM include/linux/netdevice.h \
	'int dev_set_threaded\(struct net_device \*dev, enum netdev_napi_threaded' - \
	'dev_set_threaded() with enum netdev_napi_threaded (with bool)'
probe XPS_MAP_TYPE include/linux/netdevice.h \
	'enum xps_map_type \{' - \
	'__netif_set_xps_queue() with XPS_CPUS (with false)'
probe HRTIMER_SETUP include/linux/hrtimer.h \
	'void hrtimer_setup\(' - \
	'hrtimer_setup() (hrtimer_init() and ->function)'
probe ETH_HW_ADDR_SET include/linux/etherdevice.h \
	'eth_hw_addr_set\(' - \
	"eth_hw_addr_set() (compat.h's own)"
probe TCP_SND_CWND include/net/tcp.h \
	'u32 tcp_snd_cwnd\(const struct tcp_sock \*tp\)' - \
	'tcp_snd_cwnd() (snd_cwnd read directly)'
probe DQL_MIN_LIMIT_SETTER include/linux/netdevice.h \
	'void netdev_queue_set_dql_min_limit\(' - \
	'netdev_queue_set_dql_min_limit() (the dql field written directly)'
form COALESCE_EXTACK include/linux/ethtool.h \
	'\(\*set_coalesce\)\([^;]*netlink_ext_ack' \
	'\(\*set_coalesce\)\(struct net_device \*, struct ethtool_coalesce \*\);' \
	'ethtool -C with kernel_coalesce and extack (plain prototype)'
form RINGPARAM_EXTACK include/linux/ethtool.h \
	'\(\*set_ringparam\)\([^;]*netlink_ext_ack' \
	'\(\*set_ringparam\)\(struct net_device \*, struct ethtool_ringparam \*\);' \
	'ethtool -G with kernel_ringparam and extack (plain prototype)'
probe VIRTIO_NET_DEVICE_STATS include/uapi/linux/virtio_net.h \
	'struct virtio_net_stats_reply_hdr' 'virtio_net_stats_reply_hdr' \
	'ethtool -S names of 6.10+, rx0_packets (rx_queue_0_packets)'
probe NETDEV_STAT_OPS include/net/netdev_queues.h \
	'struct netdev_stat_ops \{' 'netdev_stat_ops' \
	'per-queue stats over netlink (none)'
probe QSTATS_HW include/net/netdev_queues.h \
	'u64 hw_gso_wire_bytes;' - \
	'device statistics in netlink queue stats (ethtool -S only)'
form RXFH_PARAM include/linux/ethtool.h \
	'\(\*get_rxfh\)\(struct net_device \*, struct ethtool_rxfh_param \*\)' \
	'\(\*get_rxfh\)\(struct net_device \*, u32 \*indir, u8 \*key, u8 \*hfunc\)' \
	'ethtool -x/-X with ethtool_rxfh_param (indir, key, hfunc)'
probe RXFH_FIELDS include/linux/ethtool.h \
	'\(\*get_rxfh_fields\)\(' 'get_rxfh_fields' \
	'ethtool -n/-N rx-flow-hash ops (through get_rxnfc)'
probe RX_RING_COUNT include/linux/ethtool.h \
	'\(\*get_rx_ring_count\)\(' 'get_rx_ring_count' \
	'RX ring count op (through get_rxnfc)'
probe NETDEV_RX_QUEUE_H include/net/netdev_rx_queue.h \
	'struct rx_queue_attribute \{' - \
	'rx queue sysfs attributes from netdev_rx_queue.h (netdevice.h)'
probe VIRTIO_NET_USO include/linux/virtio_net.h \
	'gso_type = VIRTIO_NET_HDR_GSO_UDP_L4' 'VIRTIO_NET_HDR_GSO_UDP_L4' \
	'UDP segmentation offload, USO (none)'
probe VIRTIO_NET_UDP_TUNNEL include/linux/virtio_net.h \
	'int virtio_net_hdr_tnl_to_skb\(' 'virtio_net_hdr_tnl_to_skb' \
	'UDP tunnel GSO header helpers, features 65-68 (not negotiated)'
probe XDP_INIT_BUFF include/net/xdp.h \
	'xdp_init_buff\(' 'xdp_init_buff' \
	'xdp_init_buff() (fields set by hand)'
probe XDP_RXQ_NAPI_ID include/net/xdp.h \
	'int __xdp_rxq_info_reg\(' - \
	'xdp_rxq_info_reg() with a NAPI id (without)'
probe XDP_WARN_DEV include/linux/filter.h \
	'bpf_warn_invalid_xdp_action\((const )?struct net_device' - \
	'bpf_warn_invalid_xdp_action() with the device (without)'
probe XDP_FEATURES include/linux/netdevice.h \
	'xdp_features_t xdp_features;' 'xdp_features_t' \
	'XDP features advertised over netlink (none)'
probe XDP_RX_HASH_TYPE include/net/xdp.h \
	'int \(\*xmo_rx_hash\)\(const struct xdp_md \*ctx, u32 \*hash, enum xdp_rss_hash_type \*rss_type\);' \
	'enum xdp_rss_hash_type \{' \
	'XDP RX hash metadata for programs, bpf_xdp_metadata_rx_hash (none)'
probe XDP_FRAME_FRAGS include/net/xdp.h \
	'xdp_frame_has_frags\(' 'xdp_frame_has_frags' \
	'multi-buffer XDP, xdp.frags (single buffer only)'
probe XDP_UPDATE_SKB_FRAGS_INFO include/net/xdp.h \
	'xdp_update_skb_frags_info\(' - \
	'xdp_update_skb_frags_info() (xdp_update_skb_shared_info())'
probe SKB_FRAG_FILL_PAGE_DESC include/linux/skbuff.h \
	'void skb_frag_fill_page_desc\(' - \
	'skb_frag_fill_page_desc() (__skb_frag_set_page() and friends)'
probe VQ_ADD_INBUF_PREMAPPED include/linux/virtio.h \
	'int virtqueue_add_inbuf_premapped\(' - \
	'AF_XDP zero-copy receive (copy mode only)'
probe VQ_ADD_OUTBUF_PREMAPPED include/linux/virtio.h \
	'int virtqueue_add_outbuf_premapped\(' - \
	'AF_XDP zero-copy transmit (copy mode only)'
probe VIRTQUEUE_RESET_DONE include/linux/virtio.h \
	'int virtqueue_reset\([^;]*recycle_done' - \
	'virtqueue_reset() with recycle_done, to swap buffers for AF_XDP (no zero-copy)'
probe VQ_MAP_SINGLE include/linux/virtio.h \
	'dma_addr_t virtqueue_map_single_attrs\(' - \
	'virtqueue_map_sync_single_range_for_cpu() for pool buffers (virtqueue_dma_*())'
probe PAGE_POOL_HELPERS_H include/net/page_pool/helpers.h \
	'page_pool_dev_alloc_frag\(' 'page_pool_dev_alloc_frag' \
	'page pool API in net/page_pool/helpers.h (net/page_pool.h)'
probe PAGE_POOL_FRAG include/net/page_pool.h \
	'struct page \*page_pool_alloc_frag\(' 'page_pool_alloc_frag' \
	'page pool fragments in net/page_pool.h, PP_FLAG_PAGE_FRAG (none)'
probe PAGE_POOL_NETDEV include/net/page_pool/types.h \
	'struct page_pool_params \{[^}]*struct napi_struct \*napi;[^}]*struct net_device \*netdev;' \
	'struct net_device \*netdev;' \
	'receive page pools listed over netlink with their NAPI (not listed)'

if [ "$report" -eq 0 ]; then
	[ "$failed" -eq 0 ] || printf ' VNET_PROBE_FAILED'
	echo
elif [ "$failed" -ne 0 ]; then
	exit 1
fi
