//go:build ignore

// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Cilium-style socket load balancing: the cluster IP is replaced by a
 * backend's address when a socket connects (TCP, connected UDP) or sends
 * (unconnected UDP), so no packet ever carries the VIP and nothing needs
 * NAT on the way back; recvmsg4 shows unconnected UDP replies as coming
 * from the VIP. Attached to the cgroup v2 directory of the client
 * processes. */
#include "../bpfinclude/svc_maps.h"

#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SYS_REJECT 0
#define SYS_PROCEED 1

/* Reverse translation for unconnected UDP: (socket, backend) -> VIP. */
struct rev_key {
	__u64 cookie;
	__u32 ip;
	__u16 port;
	__u16 pad;
};

struct rev_val {
	__u32 vip;
	__u16 port;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct rev_key);
	__type(value, struct rev_val);
} rev_nat SEC(".maps");

static __always_inline int translate(struct bpf_sock_addr *ctx, __u8 proto)
{
	struct svc_key key = {};
	struct svc_val *sv;
	struct backend *be;

	key.vip = ctx->user_ip4;
	key.port = (__u16)ctx->user_port;
	key.proto = proto;
	sv = bpf_map_lookup_elem(&services, &key);
	if (!sv)
		return SYS_PROCEED; /* not a service */
	be = pick_backend(sv);
	if (!be)
		return SYS_REJECT; /* no endpoints: connect fails with EPERM */
	if (proto == IPPROTO_UDP) {
		struct rev_key rk = {};
		struct rev_val rv = {};

		rk.cookie = bpf_get_socket_cookie(ctx);
		rk.ip = be->ip;
		rk.port = be->port;
		rv.vip = key.vip;
		rv.port = key.port;
		bpf_map_update_elem(&rev_nat, &rk, &rv, BPF_ANY);
	}
	ctx->user_ip4 = be->ip;
	ctx->user_port = be->port;
	return SYS_PROCEED;
}

static __always_inline __u8 sock_proto(struct bpf_sock_addr *ctx)
{
	return ctx->type == 1 /* SOCK_STREAM */ ? IPPROTO_TCP : IPPROTO_UDP;
}

SEC("cgroup/connect4")
int cnperf_connect4(struct bpf_sock_addr *ctx)
{
	return translate(ctx, sock_proto(ctx));
}

SEC("cgroup/sendmsg4")
int cnperf_sendmsg4(struct bpf_sock_addr *ctx)
{
	return translate(ctx, IPPROTO_UDP);
}

SEC("cgroup/recvmsg4")
int cnperf_recvmsg4(struct bpf_sock_addr *ctx)
{
	struct rev_key rk = {};
	struct rev_val *rv;

	rk.cookie = bpf_get_socket_cookie(ctx);
	rk.ip = ctx->user_ip4;
	rk.port = (__u16)ctx->user_port;
	rv = bpf_map_lookup_elem(&rev_nat, &rk);
	if (rv) {
		ctx->user_ip4 = rv->vip;
		ctx->user_port = rv->port;
	}
	return SYS_PROCEED;
}

char __license[] SEC("license") = "Dual BSD/GPL";
