// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UDP port backend: RoCE v2 through an ordinary UDP socket on port 4791.
 *
 * The engine deals in whole Ethernet frames everywhere. On transmit this
 * backend strips Ethernet/IP/UDP and sends the rest (BTH .. ICRC) to the
 * frame's destination IP, port 4791, TTL and TOS as the frame's builder
 * described them (roxe_buf.tx; a frame not described is parsed); on
 * receive it puts synthesised Ethernet/IP/UDP headers in front of the
 * datagram.
 *
 * The ICRC covers the IP header (but TOS/TTL/checksum, IPv6 class, flow
 * label and hop limit) and the UDP header (but its checksum): the frame the
 * engine sealed must match what the kernel puts on the wire, field by field:
 *   - UDP source port: the socket's, 4791. port->fixed_sport tells the
 *     engine to write exactly that.
 *   - IPv4 ID and DF: an unconnected socket with IP_PMTUDISC_DO sends every
 *     datagram with DF set and ID 0 (Linux sets the ID only for connected
 *     sockets or fragmentable datagrams). The engine must use ID 0 with
 *     DF, as roxe_frame_build() does with ip_id 0. The xdp selftests
 *     capture the wire frames and check their ICRC to hold this assumption.
 *   - On receive the kernel has consumed the real headers: we rebuild them
 *     with ID 0 and DF, the addresses from the datagram's source and
 *     IP_PKTINFO, the TOS / traffic class (ECN: a CE mark) from IP_RECVTOS
 *     / IPV6_RECVTCLASS, and the peer's source port. A peer that sends a nonzero
 *     ID (or without DF) fails the ICRC check: then only a raw backend helps.
 * MAC addresses are not known to a UDP socket: synthesised headers carry
 * zeros (the ICRC does not cover Ethernet).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "roxe/frame.h"
#include "roxe/port.h"

#define UDP_FRAME_SIZE	(9216u + 128)	/* jumbo frames and our headers */
#define UDP_BUFS	64u		/* rx and tx each */
#define HDR_ROOM	64u		/* Ethernet + IPv6 + UDP = 62 */
#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102		/* linux/udp.h */
#endif

struct udp_port {
	struct roxe_port port;
	int		fd;
	bool		v6;
	struct sockaddr_storage local;
	uint8_t		*rx_mem, *tx_mem;
	unsigned	rx_free[UDP_BUFS], rx_nfree;
	unsigned	tx_free[UDP_BUFS], tx_nfree;
	/* frames submitted, not yet sent: buffer index, payload offset, len */
	struct {
		unsigned	buf;
		uint32_t	off, len;
		struct sockaddr_storage to;
		uint8_t		ttl, tos;	/* the frame's IP TTL and TOS */
	} pend[UDP_BUFS];
	unsigned	npend;
};

static uint8_t *rx_buf(struct udp_port *p, unsigned i) { return p->rx_mem + (size_t)i * UDP_FRAME_SIZE; }
static uint8_t *tx_buf(struct udp_port *p, unsigned i) { return p->tx_mem + (size_t)i * UDP_FRAME_SIZE; }

static void put16(uint8_t *b, uint16_t v) { b[0] = v >> 8; b[1] = v & 0xff; }

/* Write Ethernet/IP/UDP in front of a datagram at buf + HDR_ROOM; returns
 * the frame's offset in buf. */
static uint32_t synth_hdrs(struct udp_port *p, uint8_t *buf, uint32_t dlen,
			   const struct sockaddr_storage *from, const void *dst_addr, uint8_t tos)
{
	uint32_t hlen = p->v6 ? 14 + 40 + 8 : 14 + 20 + 8;
	uint8_t *f = buf + HDR_ROOM - hlen, *ip = f + 14, *udp;
	uint16_t sport;

	memset(f, 0, hlen);
	put16(f + 12, p->v6 ? 0x86dd : 0x0800);
	if (p->v6) {
		const struct sockaddr_in6 *s6 = (const void *)from;

		ip[0] = (uint8_t)(0x60 | tos >> 4);
		ip[1] = (uint8_t)(tos << 4);
		put16(ip + 4, 8 + dlen);
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, &s6->sin6_addr, 16);
		memcpy(ip + 24, dst_addr, 16);
		udp = ip + 40;
		sport = ntohs(s6->sin6_port);
	} else {
		const struct sockaddr_in *s4 = (const void *)from;

		ip[0] = 0x45;
		ip[1] = tos;
		put16(ip + 2, 20 + 8 + dlen);
		put16(ip + 6, 0x4000);		/* ID 0, DF: what Linux sent */
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, &s4->sin_addr, 4);
		memcpy(ip + 16, dst_addr, 4);
		put16(ip + 10, roxe_ipv4_csum(ip, 20));
		udp = ip + 20;
		sport = ntohs(s4->sin_port);
	}
	put16(udp, sport);
	put16(udp + 2, ROXE_UDP_PORT);
	put16(udp + 4, 8 + dlen);
	return HDR_ROOM - hlen;
}

static unsigned udp_rx_burst(struct roxe_port *port, struct roxe_buf *bufs, unsigned n)
{
	struct udp_port *p = (struct udp_port *)port;
	struct mmsghdr msgs[UDP_BUFS];
	struct iovec iov[UDP_BUFS];
	struct sockaddr_storage from[UDP_BUFS];
	char ctl[UDP_BUFS][128];	/* PKTINFO and TOS / TCLASS */
	unsigned idx[UDP_BUFS];
	unsigned m = n < p->rx_nfree ? n : p->rx_nfree;
	int got;

	if (!m)
		return 0;
	for (unsigned i = 0; i < m; i++) {
		idx[i] = p->rx_free[p->rx_nfree - 1 - i];
		iov[i].iov_base = rx_buf(p, idx[i]) + HDR_ROOM;
		iov[i].iov_len = UDP_FRAME_SIZE - HDR_ROOM;
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_name = &from[i];
		msgs[i].msg_hdr.msg_namelen = sizeof(from[i]);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		msgs[i].msg_hdr.msg_control = ctl[i];
		msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
	}
	got = recvmmsg(p->fd, msgs, m, MSG_DONTWAIT, NULL);
	if (got <= 0)
		return 0;
	p->rx_nfree -= got;
	for (int i = 0; i < got; i++) {
		const void *dst = NULL;
		struct cmsghdr *c;
		uint8_t *b = rx_buf(p, idx[i]), tos = 0;
		uint32_t off;
		int tc;

		for (c = CMSG_FIRSTHDR(&msgs[i].msg_hdr); c; c = CMSG_NXTHDR(&msgs[i].msg_hdr, c)) {
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
				dst = &((struct in_pktinfo *)CMSG_DATA(c))->ipi_addr;
			} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
				dst = &((struct in6_pktinfo *)CMSG_DATA(c))->ipi6_addr;
			} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
				   c->cmsg_len >= CMSG_LEN(1)) {
				tos = *CMSG_DATA(c);
			} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS &&
				   c->cmsg_len >= CMSG_LEN(sizeof(tc))) {
				memcpy(&tc, CMSG_DATA(c), sizeof(tc));
				tos = (uint8_t)tc;
			}
		}
		if (!dst)	/* no IP_PKTINFO: the bound address */
			dst = p->v6 ? (const void *)&((struct sockaddr_in6 *)&p->local)->sin6_addr
				    : (const void *)&((struct sockaddr_in *)&p->local)->sin_addr;
		off = synth_hdrs(p, b, msgs[i].msg_len, &from[i], dst, tos);
		bufs[i].data = b + off;
		bufs[i].len = HDR_ROOM - off + msgs[i].msg_len;
		bufs[i].cap = UDP_FRAME_SIZE - off;
		bufs[i].priv = idx[i];
		p->port.stats.rx_frames++;
		p->port.stats.rx_bytes += bufs[i].len;
	}
	return got;
}

static void udp_rx_release(struct roxe_port *port, const struct roxe_buf *bufs, unsigned n)
{
	struct udp_port *p = (struct udp_port *)port;

	for (unsigned i = 0; i < n; i++)
		p->rx_free[p->rx_nfree++] = bufs[i].priv;
}

static unsigned udp_tx_alloc(struct roxe_port *port, struct roxe_buf *bufs, unsigned n)
{
	struct udp_port *p = (struct udp_port *)port;
	unsigned i;

	for (i = 0; i < n && p->tx_nfree; i++) {
		unsigned b = p->tx_free[--p->tx_nfree];

		bufs[i].data = tx_buf(p, b);
		bufs[i].len = 0;
		bufs[i].cap = UDP_FRAME_SIZE;
		bufs[i].priv = b;
		bufs[i].tx.bth_off = 0;
	}
	return i;
}

static void udp_tx_free(struct roxe_port *port, const struct roxe_buf *bufs, unsigned n)
{
	struct udp_port *p = (struct udp_port *)port;

	for (unsigned i = 0; i < n; i++)
		p->tx_free[p->tx_nfree++] = bufs[i].priv;
}

static void udp_tx_flush(struct roxe_port *port)
{
	struct udp_port *p = (struct udp_port *)port;
	struct mmsghdr msgs[UDP_BUFS];
	struct iovec iov[UDP_BUFS];
	union {
		char		buf[CMSG_SPACE(sizeof(int)) * 2];
		struct cmsghdr	align;
	} ctl[UDP_BUFS];
	unsigned sent = 0;

	for (unsigned i = 0; i < p->npend; i++) {
		struct cmsghdr *c;
		int ttl = p->pend[i].ttl, tos = p->pend[i].tos;

		iov[i].iov_base = tx_buf(p, p->pend[i].buf) + p->pend[i].off;
		iov[i].iov_len = p->pend[i].len;
		memset(&msgs[i], 0, sizeof(msgs[i]));
		msgs[i].msg_hdr.msg_name = &p->pend[i].to;
		msgs[i].msg_hdr.msg_namelen = p->v6 ? sizeof(struct sockaddr_in6)
						    : sizeof(struct sockaddr_in);
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
		/* The frame's TTL (hop limit) and traffic class, as the AV set
		 * them: what rxe and the AF_XDP backend put on the wire, not the
		 * socket's defaults. */
		memset(&ctl[i], 0, sizeof(ctl[i]));
		msgs[i].msg_hdr.msg_control = ctl[i].buf;
		msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i].buf);
		c = CMSG_FIRSTHDR(&msgs[i].msg_hdr);
		c->cmsg_level = p->v6 ? IPPROTO_IPV6 : IPPROTO_IP;
		c->cmsg_type = p->v6 ? IPV6_HOPLIMIT : IP_TTL;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &ttl, sizeof(int));
		c = CMSG_NXTHDR(&msgs[i].msg_hdr, c);
		c->cmsg_level = p->v6 ? IPPROTO_IPV6 : IPPROTO_IP;
		c->cmsg_type = p->v6 ? IPV6_TCLASS : IP_TOS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &tos, sizeof(int));
	}
	while (sent < p->npend) {
		int r = sendmmsg(p->fd, msgs + sent, p->npend - sent, 0);

		p->port.stats.tx_kicks++;
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			/* EMSGSIZE, unreachable, ...: drop this one, go on. */
			p->port.stats.tx_dropped++;
			sent++;
			continue;
		}
		for (int i = 0; i < r; i++) {
			p->port.stats.tx_frames++;
			p->port.stats.tx_bytes += msgs[sent + i].msg_len;
		}
		sent += r;
	}
	for (unsigned i = 0; i < p->npend; i++)
		p->tx_free[p->tx_nfree++] = p->pend[i].buf;
	p->npend = 0;
}

/* A frame its builder did not describe (a caller of the port API, not an
 * engine): what sending it takes, read from its headers. false: not a
 * RoCE v2 frame. */
static bool tx_describe(const struct roxe_buf *b, struct roxe_tx_desc *d, uint32_t *len)
{
	struct roxe_frame_addr a;
	struct roxe_pkt pkt;

	if (roxe_parse(b->data, b->data + b->len, b->len, &pkt) != ROXE_PKT_OK)
		return false;
	roxe_frame_addr_get(b->data, &pkt, &a);
	memcpy(d->dgid, a.dgid, 16);
	d->bth_off = pkt.bth_off;
	d->ttl = a.hop_limit;
	d->tclass = a.tclass;
	*len = pkt.frame_len;	/* Ethernet padding stays behind */
	return true;
}

static void udp_tx_submit(struct roxe_port *port, struct roxe_buf *bufs, unsigned n)
{
	struct udp_port *p = (struct udp_port *)port;

	for (unsigned i = 0; i < n; i++) {
		struct roxe_tx_desc d = bufs[i].tx;
		uint32_t len = bufs[i].len;

		if ((!d.bth_off && !tx_describe(&bufs[i], &d, &len)) ||
		    roxe_gid_is_v4(d.dgid) == p->v6) {
			p->port.stats.tx_dropped++;
			p->tx_free[p->tx_nfree++] = bufs[i].priv;
			continue;
		}
		if (p->npend == UDP_BUFS)
			udp_tx_flush(port);
		struct sockaddr_storage *to = &p->pend[p->npend].to;

		memset(to, 0, sizeof(*to));
		if (p->v6) {
			struct sockaddr_in6 *s6 = (void *)to;

			s6->sin6_family = AF_INET6;
			s6->sin6_port = htons(ROXE_UDP_PORT);
			memcpy(&s6->sin6_addr, d.dgid, 16);
		} else {
			struct sockaddr_in *s4 = (void *)to;

			s4->sin_family = AF_INET;
			s4->sin_port = htons(ROXE_UDP_PORT);
			memcpy(&s4->sin_addr, d.dgid + 12, 4);
		}
		p->pend[p->npend].ttl = d.ttl;
		p->pend[p->npend].tos = d.tclass;
		p->pend[p->npend].buf = bufs[i].priv;
		p->pend[p->npend].off = d.bth_off;
		p->pend[p->npend].len = len - d.bth_off;
		p->npend++;
	}
}

static void udp_destroy(struct roxe_port *port)
{
	struct udp_port *p = (struct udp_port *)port;

	close(p->fd);
	free(p->rx_mem);
	free(p->tx_mem);
	free(p);
}

static const struct roxe_port_ops udp_ops = {
	.name		= "udp",
	.rx_burst	= udp_rx_burst,
	.rx_release	= udp_rx_release,
	.tx_alloc	= udp_tx_alloc,
	.tx_submit	= udp_tx_submit,
	.tx_free	= udp_tx_free,
	.tx_flush	= udp_tx_flush,
	.destroy	= udp_destroy,
};

static int sock_setup(struct udp_port *p)
{
	int one = 1, pmtu, buf = 4 << 20;

	p->fd = socket(p->v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return -errno;
	setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(p->fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (p->v6) {
		pmtu = IPV6_PMTUDISC_DO;
		if (setsockopt(p->fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) ||
		    setsockopt(p->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) ||
		    /* the traffic class: its ECN bits (CE) matter */
		    setsockopt(p->fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one)) ||
		    setsockopt(p->fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
		    /* RoCE v2 senders (rxe, AF_XDP) leave the UDP checksum 0
		     * over IPv6 too: accept it, as rxe's own socket does. */
		    setsockopt(p->fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, &one, sizeof(one)))
			return -errno;
	} else {
		/* DF on every datagram, and so IPv4 ID 0 (see the top). */
		pmtu = IP_PMTUDISC_DO;
		if (setsockopt(p->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one)) ||
		    setsockopt(p->fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) ||
		    setsockopt(p->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)))
			return -errno;
	}
	if (bind(p->fd, (struct sockaddr *)&p->local,
		 p->v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)))
		return -errno;
	return 0;
}

struct roxe_port *roxe_udp_port_open(const char *local_ip)
{
	struct udp_port *p = calloc(1, sizeof(*p));
	struct sockaddr_in6 *s6;
	struct sockaddr_in *s4;
	int err = -ENOMEM;

	if (!p)
		goto fail;
	p->fd = -1;
	s6 = (void *)&p->local;
	s4 = (void *)&p->local;
	if (inet_pton(AF_INET, local_ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(ROXE_UDP_PORT);
	} else if (inet_pton(AF_INET6, local_ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(ROXE_UDP_PORT);
		p->v6 = true;
	} else {
		err = -EINVAL;
		goto fail;
	}
	p->rx_mem = malloc((size_t)UDP_BUFS * UDP_FRAME_SIZE);
	p->tx_mem = malloc((size_t)UDP_BUFS * UDP_FRAME_SIZE);
	if (!p->rx_mem || !p->tx_mem)
		goto fail;
	for (unsigned i = 0; i < UDP_BUFS; i++) {
		p->rx_free[p->rx_nfree++] = i;
		p->tx_free[p->tx_nfree++] = i;
	}
	err = sock_setup(p);
	if (err)
		goto fail;
	p->port.ops = &udp_ops;
	p->port.frame_size = UDP_FRAME_SIZE - HDR_ROOM;
	p->port.fixed_sport = ROXE_UDP_PORT;
	p->port.wait_fd = p->fd;
	return &p->port;
fail:
	if (p) {
		if (p->fd >= 0)
			close(p->fd);
		free(p->rx_mem);
		free(p->tx_mem);
		free(p);
	}
	errno = -err;
	return NULL;
}
