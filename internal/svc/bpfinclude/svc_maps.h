/* Shared by cnperf's eBPF service load balancers: the service table and the
 * backend table, both filled by Go on Sync. */
#ifndef CNPERF_SVC_MAPS_H
#define CNPERF_SVC_MAPS_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define CNP_MAX_SERVICES 65536
#define CNP_MAX_BACKENDS 262144

/* A service is looked up by its cluster IP, port (both network order) and
 * IP protocol. */
struct svc_key {
	__u32 vip;
	__u16 port;
	__u8 proto;
	__u8 pad;
};

/* Its endpoints are backends[first .. first+count); count 0 means the
 * service exists but has no endpoints, and connections are rejected. */
struct svc_val {
	__u32 first;
	__u32 count;
};

struct backend {
	__u32 ip;
	__u16 port;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CNP_MAX_SERVICES);
	__type(key, struct svc_key);
	__type(value, struct svc_val);
} services SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CNP_MAX_BACKENDS);
	__type(key, __u32);
	__type(value, struct backend);
} backends SEC(".maps");

/* pick_backend chooses one endpoint of sv at random, as kube-proxy's
 * statistic and numgen rules do. */
static __always_inline struct backend *pick_backend(struct svc_val *sv)
{
	__u32 idx;

	if (sv->count == 0)
		return 0;
	idx = sv->first + bpf_get_prandom_u32() % sv->count;
	return bpf_map_lookup_elem(&backends, &idx);
}

#endif
