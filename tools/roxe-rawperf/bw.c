// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * bw: the client sends copies of the template in batches, spinning, for
 * -D seconds or -n frames; the server counts what arrives and how much
 * was lost where (loss.c); both print the server's figures.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "rawperf.h"
#include "json.h"

#define RX_BURST	64
#define DRAIN_IDLE_NS	50000000ull	/* quiet time after DONE */

int bw_client(const struct opts *o, struct side *s, const struct tmpl *t, int cfd,
		     struct bw_result *r)
{
	struct roxe_port *p = s->port;
	uint64_t t0, deadline, kicks0 = p->stats.tx_kicks, sent0 = p->stats.tx_frames;
	char line[MSG_MAX];

	t0 = now_ns();
	deadline = t0 + (uint64_t)(o->seconds * 1e9);
	while (!interrupted) {
		struct roxe_buf b[MAX_BATCH];
		uint64_t queued = p->stats.tx_frames - sent0;
		unsigned want = o->batch, n;

		if (o->iters) {
			if (queued >= o->iters)
				break;
			if (o->iters - queued < want)
				want = (unsigned)(o->iters - queued);
		} else if (now_ns() >= deadline) {
			break;
		}
		n = roxe_port_tx_alloc(p, b, want);
		for (unsigned i = 0; i < n; i++) {
			memcpy(b[i].data, t->buf, t->len);
			b[i].len = t->len;
		}
		if (n)
			roxe_port_tx(p, b, n);
		roxe_port_flush(p);
	}
	/* Copy-mode AF_XDP sends inside sendto(): kick until the ring is empty. */
	for (int i = 0; i < 64; i++)
		roxe_port_flush(p);
	r->sent_ns = now_ns() - t0;
	r->sent = p->stats.tx_frames - sent0;
	r->tx_kicks = p->stats.tx_kicks - kicks0;
	if (interrupted)
		return -1;
	if (ctrl_send(cfd, "DONE frames=%" PRIu64 " ns=%" PRIu64, r->sent, r->sent_ns) ||
	    ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS) || strncmp(line, "RESULT ", 7) ||
	    !kv_u64(line, "frames", &r->rx_frames) || !kv_u64(line, "bytes", &r->rx_bytes) ||
	    !kv_u64(line, "ns", &r->rx_ns) || !kv_u64(line, "bad", &r->bad) ||
	    !kv_i64(line, "steered", &r->xdp_steered) || !kv_i64(line, "udp_errors", &r->udp_errors) ||
	    !kv_i64(line, "ring_full", &r->xsk_ring_full) ||
	    !kv_i64(line, "fill_empty", &r->xsk_fill_empty) ||
	    !kv_i64(line, "other", &r->xsk_other)) {
		err_msg("no result from the server");
		return -1;
	}
	return 0;
}

int bw_server(const struct opts *o, struct side *s, uint32_t size, int cfd,
		     struct bw_result *r)
{
	struct roxe_port *p = s->port;
	uint64_t first = 0, last = 0, idle_since = 0, idle = 0;
	int64_t steered0 = rx_drop_counter(o, s);
	struct xdp_statistics x0, x1;
	bool have_x = o->backend == BACKEND_AFXDP && xsk_stats(&x0);
	char line[MSG_MAX];
	bool done = false;

	while (!interrupted) {
		struct roxe_buf b[RX_BURST];
		unsigned n = roxe_port_rx(p, b, RX_BURST);

		if (n) {
			last = now_ns();
			if (!first)
				first = last;
			for (unsigned i = 0; i < n; i++) {
				if (frame_ok(&b[i], s->qpn, size, NULL)) {
					r->rx_frames++;
					r->rx_bytes += size;
				} else {
					r->bad++;
				}
			}
			roxe_port_rx_release(p, b, n);
			idle_since = 0;
			continue;
		}
		if (done) {
			/* Frames may still be in flight behind DONE. */
			uint64_t now = now_ns();

			if (!idle_since)
				idle_since = now;
			else if (now - idle_since > DRAIN_IDLE_NS)
				break;
			continue;
		}
		int c = ctrl_poll(cfd, &idle, line, sizeof(line));

		if (c < 0)
			return -1;
		if (c > 0) {
			if (strncmp(line, "DONE ", 5) || !kv_u64(line, "frames", &r->sent) ||
			    !kv_u64(line, "ns", &r->sent_ns)) {
				err_msg("bad message from the client: %s", line);
				return -1;
			}
			done = true;
		}
	}
	if (interrupted)
		return -1;
	r->rx_ns = last - first;
	if (o->backend == BACKEND_AFXDP) {
		int64_t steered1 = rx_drop_counter(o, s);

		r->xdp_steered = steered0 >= 0 && steered1 >= 0 ? steered1 - steered0 : -1;
		r->udp_errors = -1;
		have_x = have_x && xsk_stats(&x1);
	} else {
		int64_t e1 = rx_drop_counter(o, s);

		r->udp_errors = steered0 >= 0 && e1 >= 0 ? e1 - steered0 : -1;
		r->xdp_steered = -1;
	}
	r->xsk_ring_full = have_x ? (int64_t)(x1.rx_ring_full - x0.rx_ring_full) : -1;
	r->xsk_fill_empty = have_x ? (int64_t)(x1.rx_fill_ring_empty_descs -
					       x0.rx_fill_ring_empty_descs) : -1;
	/* rx_dropped counts the fill-ring misses too: keep the rest. */
	r->xsk_other = have_x ? (int64_t)(x1.rx_dropped - x0.rx_dropped) - r->xsk_fill_empty : -1;
	if (have_x && r->xsk_other < 0)
		r->xsk_other = 0;
	if (ctrl_send(cfd, "RESULT frames=%" PRIu64 " bytes=%" PRIu64 " ns=%" PRIu64 " bad=%" PRIu64
		      " steered=%" PRId64 " udp_errors=%" PRId64 " ring_full=%" PRId64
		      " fill_empty=%" PRId64 " other=%" PRId64, r->rx_frames, r->rx_bytes,
		      r->rx_ns, r->bad, r->xdp_steered, r->udp_errors, r->xsk_ring_full,
		      r->xsk_fill_empty, r->xsk_other)) {
		err_msg("cannot send the result to the client");
		return -1;
	}
	return 0;
}

static double rate(uint64_t n, uint64_t ns)
{
	return ns ? (double)n / ((double)ns / 1e9) : 0;
}

void bw_print(const struct opts *o, const struct side *s, bool server, uint32_t size,
		     uint32_t frame_bytes, unsigned batch, bool v4, const struct bw_result *r)
{
	double s_pps = rate(r->sent, r->sent_ns), r_pps = rate(r->rx_frames, r->rx_ns);
	int64_t lost = (int64_t)r->sent - (int64_t)r->rx_frames;
	double loss_pct = r->sent ? 100.0 * (double)lost / (double)r->sent : 0;
	int64_t before = -1, at_sock = -1;

	if (r->xdp_steered >= 0) {
		before = (int64_t)r->sent - r->xdp_steered;
		at_sock = r->xdp_steered - (int64_t)r->rx_frames;
	}
	if (o->json) {
		printf("{\"tool\":\"roxe-rawperf\",\"mode\":\"bw\",\"role\":\"%s\","
		       "\"backend\":\"%s\",\"iface\":", server ? "server" : "client",
		       backend_names[o->backend]);
		tool_json_str(stdout, o->ifname);
		printf(",\"zerocopy\":%s,\"family\":%d,"
		       "\"size\":%u,\"frame_bytes\":%u,\"batch\":%u,"
		       "\"sent\":{\"frames\":%" PRIu64 ",\"seconds\":%.6f,\"mpps\":%.4f,"
		       "\"gbps\":%.4f,\"frame_gbps\":%.4f},"
		       "\"received\":{\"frames\":%" PRIu64 ",\"seconds\":%.6f,\"mpps\":%.4f,"
		       "\"gbps\":%.4f,\"frame_gbps\":%.4f,\"bad\":%" PRIu64 "},"
		       "\"lost\":%" PRId64 ",\"loss_pct\":%.4f,",
		       s->afxdp && roxe_afxdp_zerocopy(s->afxdp) ? "true" : "false", v4 ? 4 : 6,
		       size, frame_bytes, batch,
		       r->sent, r->sent_ns / 1e9, s_pps / 1e6, s_pps * size * 8 / 1e9,
		       s_pps * frame_bytes * 8 / 1e9,
		       r->rx_frames, r->rx_ns / 1e9, r_pps / 1e6, r_pps * size * 8 / 1e9,
		       r_pps * frame_bytes * 8 / 1e9, r->bad, lost, loss_pct);
		if (o->backend == BACKEND_AFXDP)
			printf("\"lost_before_xdp\":%" PRId64 ",\"dropped_at_socket\":%" PRId64 ","
			       "\"xsk_rx_ring_full\":%" PRId64 ",\"xsk_fill_ring_empty\":%" PRId64
			       ",\"xsk_rx_dropped_other\":%" PRId64 ",", before, at_sock, r->xsk_ring_full,
			       r->xsk_fill_empty, r->xsk_other);
		else
			printf("\"udp_rcvbuf_errors\":%" PRId64 ",", r->udp_errors);
		if (!server)
			printf("\"tx_kicks\":%" PRIu64 ",", r->tx_kicks);
		printf("\"gbps\":%.4f,\"mpps\":%.4f}\n", r_pps * size * 8 / 1e9, r_pps / 1e6);
		return;
	}
	printf("raw %s frame path, bw: %u B payload in %u B frames (IPv%d), batch %u\n",
	       o->backend == BACKEND_AFXDP ? "AF_XDP" : "UDP-socket", size, frame_bytes,
	       v4 ? 4 : 6, batch);
	printf("  %-9s %12s %9s %9s %10s %12s\n", "", "frames", "seconds", "Mpps", "Gb/s",
	       "frame Gb/s");
	printf("  %-9s %12" PRIu64 " %9.3f %9.3f %10.3f %12.3f\n", "sent", r->sent,
	       r->sent_ns / 1e9, s_pps / 1e6, s_pps * size * 8 / 1e9, s_pps * frame_bytes * 8 / 1e9);
	printf("  %-9s %12" PRIu64 " %9.3f %9.3f %10.3f %12.3f\n", "received", r->rx_frames,
	       r->rx_ns / 1e9, r_pps / 1e6, r_pps * size * 8 / 1e9, r_pps * frame_bytes * 8 / 1e9);
	printf("  lost %" PRId64 " (%.2f%%)", lost, loss_pct);
	if (o->backend == BACKEND_AFXDP && before >= 0) {
		printf(": %" PRId64 " before the XDP program, %" PRId64 " at the socket",
		       before, at_sock);
		if (r->xsk_ring_full >= 0)
			printf(" (kernel: RX ring full %" PRId64 ", fill ring empty %" PRId64
			       ", other %" PRId64 ")", r->xsk_ring_full, r->xsk_fill_empty,
			       r->xsk_other);
	} else if (o->backend == BACKEND_UDP && r->udp_errors >= 0)
		printf("; UDP receive-buffer errors %" PRId64, r->udp_errors);
	if (r->bad)
		printf("; %" PRIu64 " unexpected frames", r->bad);
	printf("\n");
	if (!server)
		printf("  %.2f frames per transmit syscall\n",
		       r->tx_kicks ? (double)r->sent / (double)r->tx_kicks : 0);
	printf("  result: %.3f Gb/s payload, %.3f Mpps (received)\n", r_pps * size * 8 / 1e9,
	       r_pps / 1e6);
}
