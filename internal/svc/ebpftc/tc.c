//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The Tencent TKE / Cilium design studied in seeds/003: load balancing on
 * the client pod's own eth0. On egress, a packet to a service is DNATed to
 * a backend chosen at random on the connection's first packet and kept in
 * a conntrack-like map; on ingress, replies are reverse-DNATed back to the
 * service address. Traffic never passes the node's netfilter as a service.
 * When the chosen backend is the pod itself (self-access) the packet is
 * handed to the pod's own stack through loopback, where the same ingress
 * program reverses the replies. A TCP connection to a service without
 * endpoints is sent to port 0 of the pod itself, whose stack answers with
 * a reset: the client sees "connection refused", as Kubernetes rejects. */
#include "../bpfinclude/svc_maps.h"
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <stddef.h>

/* Set per pod by the loader. */
volatile const __u32 self_ip = 0;    /* network order */
volatile const __u32 lo_ifindex = 1;

struct ct_key {
	__u32 saddr;
	__u32 daddr;
	__u16 sport;
	__u16 dport;
	__u8 proto;
	__u8 pad[3];
};

struct ct_val {
	__u32 ip;
	__u16 port;
	__u16 pad;
};

/* client -> service tuple: the chosen backend */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 131072);
	__type(key, struct ct_key);
	__type(value, struct ct_val);
} ct_fwd SEC(".maps");

/* backend -> client tuple: the service it stands for */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 131072);
	__type(key, struct ct_key);
	__type(value, struct ct_val);
} ct_rev SEC(".maps");

#define IP_CSUM_OFF (ETH_HLEN + offsetof(struct iphdr, check))
#define IP_SRC_OFF (ETH_HLEN + offsetof(struct iphdr, saddr))
#define IP_DST_OFF (ETH_HLEN + offsetof(struct iphdr, daddr))

static __always_inline int parse(struct __sk_buff *skb, struct ct_key *k, __u32 *l4off)
{
	struct iphdr ip;
	__u16 ports[2];

	if (skb->protocol != bpf_htons(ETH_P_IP))
		return -1;
	if (bpf_skb_load_bytes(skb, ETH_HLEN, &ip, sizeof(ip)) < 0)
		return -1;
	if (ip.protocol != IPPROTO_TCP && ip.protocol != IPPROTO_UDP)
		return -1;
	if (ip.frag_off & bpf_htons(0x3fff))
		return -1; /* fragments carry no ports */
	if (ip.ihl < 5)
		return -1;
	*l4off = ETH_HLEN + ip.ihl * 4;
	if (bpf_skb_load_bytes(skb, *l4off, ports, sizeof(ports)) < 0)
		return -1;
	k->saddr = ip.saddr;
	k->daddr = ip.daddr;
	k->sport = ports[0];
	k->dport = ports[1];
	k->proto = ip.protocol;
	return 0;
}

/* rewrite replaces an address (at ip_off) and a port (at l4off+port_off),
 * fixing the IP and L4 checksums. */
static __always_inline int rewrite(struct __sk_buff *skb, __u32 l4off, __u8 proto, __u32 ip_off,
				   __u32 old_ip, __u32 new_ip, __u32 port_off, __u16 old_port, __u16 new_port)
{
	__u32 csum_off = l4off + (proto == IPPROTO_TCP ? offsetof(struct tcphdr, check) : offsetof(struct udphdr, check));
	__u64 flags = proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;

	if (old_ip != new_ip) {
		if (bpf_l4_csum_replace(skb, csum_off, old_ip, new_ip, flags | BPF_F_PSEUDO_HDR | sizeof(new_ip)) < 0)
			return -1;
		if (bpf_l3_csum_replace(skb, IP_CSUM_OFF, old_ip, new_ip, sizeof(new_ip)) < 0)
			return -1;
		if (bpf_skb_store_bytes(skb, ip_off, &new_ip, sizeof(new_ip), 0) < 0)
			return -1;
	}
	if (old_port != new_port) {
		if (bpf_l4_csum_replace(skb, csum_off, old_port, new_port, flags | sizeof(new_port)) < 0)
			return -1;
		if (bpf_skb_store_bytes(skb, l4off + port_off, &new_port, sizeof(new_port), 0) < 0)
			return -1;
	}
	return 0;
}

SEC("tc")
int cnperf_tc_egress(struct __sk_buff *skb)
{
	struct ct_key k = {};
	struct ct_val nb = {};
	struct ct_val *be;
	__u32 l4off;

	if (parse(skb, &k, &l4off) < 0)
		return TC_ACT_OK;
	be = bpf_map_lookup_elem(&ct_fwd, &k);
	if (be) {
		nb = *be;
	} else {
		struct svc_key sk = {};
		struct svc_val *sv;
		struct backend *b;

		sk.vip = k.daddr;
		sk.port = k.dport;
		sk.proto = k.proto;
		sv = bpf_map_lookup_elem(&services, &sk);
		if (!sv)
			return TC_ACT_OK; /* not a service */
		b = pick_backend(sv);
		if (b) {
			nb.ip = b->ip;
			nb.port = b->port;
		} else if (k.proto == IPPROTO_TCP) {
			nb.ip = self_ip; /* no endpoints: our own closed port 0 resets */
			nb.port = 0;
		} else {
			return TC_ACT_SHOT;
		}
		struct ct_key rk = {};
		struct ct_val rv = {};

		rk.saddr = nb.ip;
		rk.daddr = k.saddr;
		rk.sport = nb.port;
		rk.dport = k.sport;
		rk.proto = k.proto;
		rv.ip = k.daddr;
		rv.port = k.dport;
		bpf_map_update_elem(&ct_rev, &rk, &rv, BPF_ANY);
		bpf_map_update_elem(&ct_fwd, &k, &nb, BPF_ANY);
	}
	if (rewrite(skb, l4off, k.proto, IP_DST_OFF, k.daddr, nb.ip, 2, k.dport, nb.port) < 0)
		return TC_ACT_SHOT;
	if (nb.ip == self_ip) {
		/* Self-access: deliver to our own stack through loopback, whose
		 * address is all zeros, so the frame is for this host. */
		__u8 zero[ETH_ALEN * 2] = {};

		if (bpf_skb_store_bytes(skb, 0, zero, sizeof(zero), 0) < 0)
			return TC_ACT_SHOT;
		return bpf_redirect(lo_ifindex, BPF_F_INGRESS);
	}
	return TC_ACT_OK;
}

SEC("tc")
int cnperf_tc_ingress(struct __sk_buff *skb)
{
	struct ct_key k = {};
	struct ct_val *v;
	__u32 l4off, ip;
	__u16 port;

	if (parse(skb, &k, &l4off) < 0)
		return TC_ACT_OK;
	v = bpf_map_lookup_elem(&ct_rev, &k);
	if (!v)
		return TC_ACT_OK;
	ip = v->ip;
	port = v->port;
	if (rewrite(skb, l4off, k.proto, IP_SRC_OFF, k.saddr, ip, 0, k.sport, port) < 0)
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char __license[] SEC("license") = "Dual BSD/GPL";
