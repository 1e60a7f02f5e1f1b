// SPDX-License-Identifier: GPL-2.0-only
/*
 * An XDP program that passes every frame. A veth only accepts frames
 * redirected or transmitted into it from XDP (AF_XDP copy-mode TX is not
 * that, but XDP_TX and redirects are) when its peer runs an XDP program:
 * tests put this one on the end that does not run roxe. Frags-aware so the
 * peer may have an MTU above 3506.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("xdp.frags")
int roxe_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}
