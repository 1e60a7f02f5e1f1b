// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * xsk_bind IFACE QUEUE: what the kernel answers to an AF_XDP bind on
 * IFACE's QUEUE in zero-copy, with and without multi-buffer
 * (XDP_USE_SG), one line each: "xsk_bind: IFACE queue Q
 * zerocopy|need_wakeup|sg: ok" or the errno's name and text. Each try
 * gets a fresh UMEM and socket, closed before the next; no XDP program
 * is loaded. For selftests/vm/zerocopy.sh: the driver's own answer next
 * to the mode roxe ends up in. Exit 0 once every bind was tried.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <xdp/xsk.h>

#ifndef XDP_USE_SG
#define XDP_USE_SG	(1 << 4)
#endif

int main(int argc, char **argv)
{
	static const struct { unsigned short flags; const char *name; } tries[] = {
		{ XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP | XDP_USE_SG, "zerocopy|need_wakeup|sg" },
		{ XDP_ZEROCOPY | XDP_USE_NEED_WAKEUP, "zerocopy|need_wakeup" },
	};
	const size_t size = 1024 * 4096;

	if (argc != 3) {
		fprintf(stderr, "usage: xsk_bind IFACE QUEUE\n");
		return 2;
	}
	for (unsigned i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		struct xsk_umem_config uc = {
			.fill_size = 512, .comp_size = 512, .frame_size = 4096,
		};
		struct xsk_socket_config sc = {
			.rx_size = 512, .tx_size = 512,
			.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
			.bind_flags = tries[i].flags,
		};
		struct xsk_ring_prod fq, tx;
		struct xsk_ring_cons cq, rx;
		struct xsk_umem *umem;
		struct xsk_socket *xsk;
		void *area;
		int err;

		area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (area == MAP_FAILED) {
			perror("xsk_bind: mmap");
			return 1;
		}
		err = xsk_umem__create(&umem, area, size, &fq, &cq, &uc);
		if (err) {
			fprintf(stderr, "xsk_bind: UMEM: %s\n", strerror(-err));
			return 1;
		}
		err = xsk_socket__create(&xsk, argv[1], atoi(argv[2]), umem, &rx, &tx, &sc);
		if (err)
			printf("xsk_bind: %s queue %s %s: %s (%s)\n", argv[1], argv[2], tries[i].name,
			       strerrorname_np(-err) ? strerrorname_np(-err) : "?", strerror(-err));
		else
			printf("xsk_bind: %s queue %s %s: ok\n", argv[1], argv[2], tries[i].name);
		if (!err)
			xsk_socket__delete(xsk);
		xsk_umem__delete(umem);
		munmap(area, size);
	}
	return 0;
}
