// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lat: ping-pong of one frame (or -k frames each way, sent in one kick and
 * answered once all arrived), both sides spinning on their RX ring; the
 * client times the round trips and prints their percentiles.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rawperf.h"
#include "json.h"

#define LAT_TIMEOUT_NS	100000000ull	/* a ping-pong frame counts as lost */
#define LAT_MAX_LOST	50		/* in a row: the peer is gone */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted v[0..n), p in per mille. */
static uint64_t pct(const uint64_t *v, uint64_t n, uint64_t permille)
{
	uint64_t k = (permille * n + 999) / 1000;

	return v[k ? k - 1 : 0];
}

struct lat_stats {
	double	min, median, p99, p999, max, mean;
};

int lat_client(const struct opts *o, struct side *s, const struct peer *peer,
		      struct tmpl *t, int cfd, uint64_t *rtt, uint64_t *lost_out)
{
	struct roxe_port *p = s->port;
	uint64_t lost = 0, in_a_row = 0;
	char line[MSG_MAX];
	int64_t i = -(int64_t)o->warmup;

	while (i < (int64_t)o->iters && !interrupted) {
		struct roxe_buf b[8];
		uint64_t t0, t1 = 0;
		unsigned spins = 0, have = 0;

		t0 = now_ns();
		if (!send_copies(p, t, o->frames)) {
			err_msg("no transmit buffer");
			return -1;
		}
		while (!interrupted) {
			unsigned n = roxe_port_rx(p, b, 8);
			bool got = false;

			if (n) {
				t1 = now_ns();
				for (unsigned k = 0; k < n; k++) {
					uint32_t psn;

					if (frame_ok(&b[k], s->qpn, o->size, &psn) && psn == t->psn &&
					    ++have == o->frames)
						got = true;
				}
				roxe_port_rx_release(p, b, n);
				if (got)
					break;
			}
			if (++spins % 256 == 0 && now_ns() - t0 > LAT_TIMEOUT_NS) {
				t1 = 0;
				break;
			}
		}
		if (interrupted)
			return -1;
		if (!t1) {
			/* Lost: a new PSN, so a late answer to this one is not
			 * taken for the next. */
			lost++;
			if (++in_a_row == LAT_MAX_LOST) {
				err_msg("no answer from the server for %d frames in a row",
					LAT_MAX_LOST);
				return -1;
			}
			if (tmpl_build(t, s, peer, o->size, t->psn + 1))
				return -1;
			continue;
		}
		in_a_row = 0;
		if (i >= 0)
			rtt[i] = t1 - t0;
		i++;
	}
	if (interrupted)
		return -1;
	*lost_out = lost;
	if (ctrl_send(cfd, "DONE iters=%" PRIu64, o->iters) ||
	    ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS) || strncmp(line, "RESULT", 6)) {
		err_msg("no result from the server");
		return -1;
	}
	return 0;
}

/* Answers each PSN once `frames` copies of it arrived, with as many. */
int lat_server(struct side *s, const struct peer *peer, uint32_t size, unsigned frames,
	       int cfd, uint64_t *served)
{
	struct roxe_port *p = s->port;
	struct tmpl *t = malloc(sizeof(*t));
	char line[MSG_MAX];
	uint64_t idle = 0;
	unsigned have = 0;
	int ret = -1;

	if (!t || tmpl_build(t, s, peer, size, 0))
		goto out;
	while (!interrupted) {
		struct roxe_buf b[8];
		unsigned n = roxe_port_rx(p, b, 8);

		if (n) {
			for (unsigned k = 0; k < n; k++) {
				uint32_t psn;

				if (!frame_ok(&b[k], s->qpn, size, &psn))
					continue;
				/* Echo the PSN; rebuilding (ICRC) only when it
				 * changes (a lost copy: the client's next PSN). */
				if (psn != t->psn) {
					if (tmpl_build(t, s, peer, size, psn))
						goto out;
					have = 0;
				}
				if (++have < frames)
					continue;
				have = 0;
				if (!send_copies(p, t, frames)) {
					err_msg("no transmit buffer");
					goto out;
				}
				*served += frames;
			}
			roxe_port_rx_release(p, b, n);
			continue;
		}
		int c = ctrl_poll(cfd, &idle, line, sizeof(line));

		if (c < 0)
			goto out;
		if (c > 0) {
			if (strncmp(line, "DONE", 4)) {
				err_msg("bad message from the client: %s", line);
				goto out;
			}
			ret = ctrl_send(cfd, "RESULT served=%" PRIu64, *served) ? -1 : 0;
			break;
		}
	}
out:
	free(t);
	return ret;
}

static void lat_stats(const uint64_t *sorted, uint64_t n, double div, struct lat_stats *st)
{
	long double sum = 0;

	for (uint64_t i = 0; i < n; i++)
		sum += sorted[i];
	st->min = sorted[0] / div / 1e3;
	st->median = pct(sorted, n, 500) / div / 1e3;
	st->p99 = pct(sorted, n, 990) / div / 1e3;
	st->p999 = pct(sorted, n, 999) / div / 1e3;
	st->max = sorted[n - 1] / div / 1e3;
	st->mean = (double)(sum / n) / div / 1e3;
}

static void lat_print_json_stats(const char *name, const struct lat_stats *st)
{
	const double v[] = { st->min, st->median, st->p99, st->p999, st->max, st->mean };
	static const char *const keys[] = { "min", "median", "p99", "p999", "max", "mean" };

	printf("\"%s\":{", name);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		printf("%s\"%s\":", i ? "," : "", keys[i]);
		tool_json_num(stdout, "%.3f", v[i]);
	}
	printf("}");
}

void lat_print(const struct opts *o, const struct side *s, uint32_t frame_bytes,
		      bool v4, uint64_t *rtt, uint64_t lost)
{
	struct lat_stats full, half;

	qsort(rtt, o->iters, sizeof(*rtt), cmp_u64);
	lat_stats(rtt, o->iters, 1, &full);
	lat_stats(rtt, o->iters, 2, &half);
	if (o->json) {
		printf("{\"tool\":\"roxe-rawperf\",\"mode\":\"lat\",\"role\":\"client\","
		       "\"backend\":\"%s\",\"iface\":", backend_names[o->backend]);
		tool_json_str(stdout, o->ifname);
		printf(",\"zerocopy\":%s,\"family\":%d,"
		       "\"size\":%u,\"frame_bytes\":%u,\"iters\":%" PRIu64 ",\"warmup\":%" PRIu64
		       ",\"frames\":%u,\"lost\":%" PRIu64 ",",
		       s->afxdp && roxe_afxdp_zerocopy(s->afxdp) ? "true" : "false", v4 ? 4 : 6,
		       o->size, frame_bytes, o->iters, o->warmup, o->frames, lost);
		lat_print_json_stats("rtt_us", &full);
		putchar(',');
		lat_print_json_stats("half_rtt_us", &half);
		printf("}\n");
		return;
	}
	printf("raw %s frame path, lat: %u B payload in %u B frames (IPv%d), %u each way, "
	       "spinning\n", o->backend == BACKEND_AFXDP ? "AF_XDP" : "UDP-socket", o->size,
	       frame_bytes, v4 ? 4 : 6, o->frames);
	printf("  %" PRIu64 " round trips after %" PRIu64 " warm-up ones, %" PRIu64 " lost\n",
	       o->iters, o->warmup, lost);
	printf("  %-22s %8s %8s %8s %8s %8s %8s\n", "usec", "min", "median", "p99", "p99.9",
	       "max", "mean");
	printf("  %-22s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", "round trip", full.min,
	       full.median, full.p99, full.p999, full.max, full.mean);
	printf("  %-22s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f\n", "half (perftest t_typ)",
	       half.min, half.median, half.p99, half.p999, half.max, half.mean);
}
