// SPDX-License-Identifier: GPL-2.0-only
/*
 * Someone else's XDP program, for the tests that run one beside roxe's
 * (selftests/xdp/coexist_netns_test.c): it counts IPv4 UDP frames to
 * port 4791 (RoCE v2, entry 0) and to ROXE_COUNT_PORT (entry 1) and passes
 * every frame, as a firewall or a monitor would. Frags-aware, so that a
 * libxdp dispatcher holding it and roxe's program stays frags-aware.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ROXE_COUNT_PORT	7777

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} roxe_counts SEC(".maps");

SEC("xdp.frags")
int roxe_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u32 key;
	__u64 *n;

	/* IPv4 without options: what the tests send */
	if ((void *)(udp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || ip->protocol != IPPROTO_UDP)
		return XDP_PASS;
	if (udp->dest == bpf_htons(4791))
		key = 0;
	else if (udp->dest == bpf_htons(ROXE_COUNT_PORT))
		key = 1;
	else
		return XDP_PASS;
	n = bpf_map_lookup_elem(&roxe_counts, &key);
	if (n)
		__sync_fetch_and_add(n, 1);
	return XDP_PASS;
}
