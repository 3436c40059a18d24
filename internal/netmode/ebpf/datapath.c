//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// cnperf's Cilium-like datapath: tc programs on the pod-facing veths and on
// the host's underlay NIC move IPv4 packets between pods without the host's
// bridge, netfilter or routing: straight into a local pod's namespace with
// bpf_redirect_peer, or out of the underlay NIC with bpf_redirect_neigh
// (the kernel fills in the next hop's MAC from the FIB and neighbour table).
// Everything else (ARP, traffic to the host) passes to the stack untouched.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define TC_ACT_OK 0
#define ETH_HLEN 14
#define ETH_P_IP 0x0800
#define IP_TTL_OFF (ETH_HLEN + 8)
#define IP_CSUM_OFF (ETH_HLEN + 10)

struct eth {
	__u8 dst[6];
	__u8 src[6];
	__be16 proto;
} __attribute__((packed));

struct ipv4 {
	__u8 vhl;
	__u8 tos;
	__be16 len;
	__be16 id;
	__be16 frag;
	__u8 ttl;
	__u8 proto;
	__sum16 csum;
	__be32 saddr;
	__be32 daddr;
};

// endpoint is a pod on this host, keyed by its IPv4 address. mac and
// host_mac are adjacent, as destination and source are in an Ethernet
// header, so one store rewrites both.
struct endpoint {
	__u32 ifindex;   // host side of its veth
	__u8 mac[6];     // its eth0
	__u8 host_mac[6]; // the host side's, the source of what we deliver
} __attribute__((packed));

// config is the host's datapath configuration (one entry).
struct config {
	__u32 underlay_ifindex;
	__be32 pod_net;  // the cluster pod network, network order
	__be32 pod_mask;
	__u32 flags;     // CFG_*
};

// CFG_LOCAL_BACKLOG: deliver to a local pod through its veth's transmit
// (bpf_redirect to the host side: the packet crosses the veth and the CPU
// backlog into the pod, as the bridge's does) instead of bpf_redirect_peer.
#define CFG_LOCAL_BACKLOG 1

enum {
	STAT_LOCAL = 0,  // redirected into a pod on this host
	STAT_REMOTE = 1, // redirected out of the underlay NIC
	STAT_PASS = 2,   // handed to the stack
	STAT_MAX,
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __be32);
	__type(value, struct endpoint);
} endpoints SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct config);
} config_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&stats, &what);
	if (n)
		*n += 1;
}

// dec_ttl does what a router does to the header; it fails on an expiring
// packet, which then goes to the stack for its ICMP error.
static __always_inline int dec_ttl(struct __sk_buff *skb, __u8 ttl, __u8 proto)
{
	if (ttl <= 1)
		return -1;
	__be16 old = bpf_htons(((__u16)ttl << 8) | proto);
	__be16 new = bpf_htons(((__u16)(ttl - 1) << 8) | proto);
	__u8 nttl = ttl - 1;
	if (bpf_l3_csum_replace(skb, IP_CSUM_OFF, old, new, 2) < 0)
		return -1;
	return bpf_skb_store_bytes(skb, IP_TTL_OFF, &nttl, 1, 0);
}

// parse finds the IPv4 header; it returns 0 for anything else.
static __always_inline struct ipv4 *parse(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct eth *eth = data;
	struct ipv4 *ip = data + sizeof(*eth);
	if ((void *)(ip + 1) > end || eth->proto != bpf_htons(ETH_P_IP))
		return 0;
	return ip;
}

static __always_inline int deliver(struct __sk_buff *skb, struct endpoint *ep, int backlog)
{
	if (bpf_skb_store_bytes(skb, 0, ep->mac, 12, 0) < 0)
		return TC_ACT_OK;
	count(STAT_LOCAL);
	if (backlog)
		return bpf_redirect(ep->ifindex, 0);
	return bpf_redirect_peer(ep->ifindex, 0);
}

// from_container runs at tc ingress of a pod's host-side veth: every packet
// a pod sends.
SEC("tc")
int from_container(struct __sk_buff *skb)
{
	struct ipv4 *ip = parse(skb);
	if (!ip)
		return TC_ACT_OK;
	__be32 dst = ip->daddr;
	__u8 ttl = ip->ttl, proto = ip->proto;
	__u32 zero = 0;
	struct config *cfg = bpf_map_lookup_elem(&config_map, &zero);
	struct endpoint *ep = bpf_map_lookup_elem(&endpoints, &dst);
	if (ep) {
		if (dec_ttl(skb, ttl, proto) < 0)
			goto pass;
		return deliver(skb, ep, cfg && (cfg->flags & CFG_LOCAL_BACKLOG));
	}
	if (!cfg || cfg->underlay_ifindex == 0 || (dst & cfg->pod_mask) != cfg->pod_net)
		goto pass;
	if (dec_ttl(skb, ttl, proto) < 0)
		goto pass;
	count(STAT_REMOTE);
	return bpf_redirect_neigh(cfg->underlay_ifindex, 0, 0, 0);
pass:
	count(STAT_PASS);
	return TC_ACT_OK;
}

// from_netdev runs at tc ingress of the host's underlay NIC: packets for a
// local pod go straight into its namespace.
SEC("tc")
int from_netdev(struct __sk_buff *skb)
{
	struct ipv4 *ip = parse(skb);
	if (!ip)
		return TC_ACT_OK;
	__be32 dst = ip->daddr;
	__u8 ttl = ip->ttl, proto = ip->proto;
	struct endpoint *ep = bpf_map_lookup_elem(&endpoints, &dst);
	if (!ep || dec_ttl(skb, ttl, proto) < 0)
		return TC_ACT_OK;
	return deliver(skb, ep, 0);
}

char __license[] SEC("license") = "Dual BSD/GPL";
