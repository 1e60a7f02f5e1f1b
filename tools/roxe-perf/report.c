// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Output in perftest's shape (banner, address lines, one row per size), with
 * bandwidth always in Gb/s (perftest's --report_gbits); or, with --json, one
 * JSON object on stdout, printed whatever happens once the options are
 * good ("ok": false when the run failed), and the human text on stderr.
 */
#include <stdio.h>
#include <time.h>
#include <arpa/inet.h>
#include "json.h"
#include "perf.h"

#define RULE "---------------------------------------------------------------------------------------\n"

double perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *perf_test_name(enum perf_test t)
{
	switch (t) {
	case TEST_WRITE: return "write";
	case TEST_READ: return "read";
	case TEST_SEND: return "send";
	default: return "atomic";
	}
}

static const char *title(const struct perf_opts *o)
{
	static const char *const names[2][4] = {
		{ "RDMA_Write BW Test", "RDMA_Read BW Test", "Send BW Test", "Atomic BW Test" },
		{ "RDMA_Write Latency Test", "RDMA_Read Latency Test", "Send Latency Test",
		  "Atomic Latency Test" },
	};

	return names[o->mode][o->test];
}

/* Human text goes to stderr when stdout carries JSON. */
static FILE *out(const struct perf_ctx *c)
{
	return c->o->json ? stderr : stdout;
}

void perf_report_header(const struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;
	FILE *f = out(c);

	fprintf(f, RULE "                    %s%s\n", title(o),
		o->test == TEST_ATOMIC ? (o->cmp_swap ? " (CMP_AND_SWAP)" : " (FETCH_AND_ADD)") : "");
	fprintf(f, " Device          : roxe on %s\tBackend        : %s%s\n", o->ifname,
		o->backend == ROXE_BACKEND_UDP ? "udp" : "afxdp",
		o->polled ? ", polled" : o->events ? ", events" : "");
	fprintf(f, " Number of qps   : %u\t\tTransport type : IB\n", c->nqps);
	fprintf(f, " Connection type : RC\t\tUsing SRQ      : OFF\n");
	fprintf(f, " TX depth        : %u\n", o->tx_depth);
	if (o->test == TEST_SEND || o->mode == MODE_LAT)
		fprintf(f, " RX depth        : %u\n", o->rx_depth);
	if (o->mode == MODE_BW)
		fprintf(f, " CQ Moderation   : %u\n", o->cq_mod);
	fprintf(f, " Mtu             : %u[B]\n", 128u << c->mtu);
	fprintf(f, " Link type       : Ethernet\n GID index       : %d\n", c->qp[0].local.gid_index);
	if (o->test == TEST_READ || o->test == TEST_ATOMIC)
		fprintf(f, " Outstand reads  : %u\n", c->out_reads);
	else
		fprintf(f, " Max inline data : %u[B]\n", o->inline_size);
	fprintf(f, " Data ex. method : Ethernet%s\n", o->perftest ? " (perftest 4.5)" : "");
	fprintf(f, " Verify          : %s\n", o->verify ? "ON" : "OFF");
	fprintf(f, RULE);
}

static void addr_line(FILE *f, const char *what, const struct perf_dest *d)
{
	char gid[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, d->gid.raw, gid, sizeof(gid));
	fprintf(f, " %s address: LID %#04x QPN %#06x PSN %#06x RKey %#08x VAddr %#016llx\n"
		" GID: %s\n", what, d->lid, d->qpn, d->psn, d->rkey,
		(unsigned long long)d->vaddr, gid);
}

void perf_report_addresses(const struct perf_ctx *c)
{
	FILE *f = out(c);

	for (unsigned i = 0; i < c->nqps; i++)
		addr_line(f, "local", &c->qp[i].local);
	for (unsigned i = 0; i < c->nqps; i++)
		addr_line(f, "remote", &c->qp[i].remote);
	fprintf(f, RULE);
}

void perf_report_table_head(const struct perf_ctx *c)
{
	if (c->o->mode == MODE_BW)
		fprintf(out(c), " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   "
			"MsgRate[Mpps]\n");
	else
		fprintf(out(c), " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
			"t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   "
			"99.9%% percentile[usec]\n");
}

void perf_report_row(const struct perf_ctx *c, const struct perf_result *r)
{
	if (c->o->mode == MODE_BW)
		fprintf(out(c), " %-7u    %-10llu       %-7.2f            %-7.2f\t\t   %-7.6f\n",
			r->size, (unsigned long long)r->iters, r->gbps_peak, r->gbps_avg, r->mpps);
	else
		fprintf(out(c), " %-7u %-10llu   %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     "
			"\t%-7.2f\t\t%-7.2f \t\t%-7.2f\n", r->size, (unsigned long long)r->iters,
			r->lat_min, r->lat_max, r->lat_typical, r->lat_avg, r->lat_stdev, r->lat_p99,
			r->lat_p999);
	fflush(out(c));
}

void perf_report_end(const struct perf_ctx *c)
{
	fprintf(out(c), RULE);
	if (c->o->mode == MODE_LAT)
		fprintf(out(c), " latency: %s\n", c->o->test == TEST_SEND || c->o->test == TEST_WRITE ?
			"one way (half the round trip), as perftest" : "round trip");
	if (c->o->verify)
		fprintf(out(c), " verify: %llu error%s\n", (unsigned long long)c->verify_errors,
			c->verify_errors == 1 ? "" : "s");
}

/* The document's head: what ran, then the results array. */
static void json_head(const struct perf_ctx *c)
{
	const struct perf_opts *o = c->o;

	printf("{\"test\": \"%s\", \"mode\": \"%s\", \"role\": \"%s\", \"interface\": ",
	       perf_test_name(o->test), o->mode == MODE_BW ? "bw" : "lat",
	       o->server ? "client" : "server");
	tool_json_str(stdout, o->ifname);
	printf(", \"backend\": \"%s\", \"polled\": %s, \"qps\": %u, \"mtu\": ",
	       o->backend == ROXE_BACKEND_UDP ? "udp" : "afxdp", o->polled ? "true" : "false",
	       c->nqps);
	if (c->mtu)	/* 0 until both ends agreed on one */
		printf("%u", 128u << c->mtu);
	else
		printf("null");
	printf(", \"tx_depth\": %u, \"verify\": %s, \"results\": [", o->tx_depth,
	       o->verify ? "true" : "false");
}

static void json_kv(const char *sep, const char *key, const char *fmt, double v)
{
	printf("%s\"%s\": ", sep, key);
	tool_json_num(stdout, fmt, v);
}

void perf_json_row(const struct perf_ctx *c, const struct perf_result *r, bool first)
{
	if (first)
		json_head(c);
	printf("%s\n  {\"bytes\": %u, \"iterations\": %llu", first ? "" : ",", r->size,
	       (unsigned long long)r->iters);
	if (c->o->mode == MODE_BW) {
		json_kv(", ", "seconds", "%.6f", r->seconds);
		json_kv(", ", "bw_peak_gbps", "%.4f", r->gbps_peak);
		json_kv(", ", "bw_avg_gbps", "%.4f", r->gbps_avg);
		json_kv(", ", "mpps", "%.6f", r->mpps);
	} else {
		printf(", \"usec\": {");
		json_kv("", "min", "%.3f", r->lat_min);
		json_kv(", ", "typical", "%.3f", r->lat_typical);
		json_kv(", ", "avg", "%.3f", r->lat_avg);
		json_kv(", ", "stdev", "%.3f", r->lat_stdev);
		json_kv(", ", "p99", "%.3f", r->lat_p99);
		json_kv(", ", "p99_9", "%.3f", r->lat_p999);
		json_kv(", ", "max", "%.3f", r->lat_max);
		printf("}, \"what\": ");
		tool_json_str(stdout, r->lat_what);
		printf(", \"minor_faults\": %llu, \"major_faults\": %llu",
		       (unsigned long long)r->minor_faults, (unsigned long long)r->major_faults);
	}
	printf("}");
	fflush(stdout);		/* a sweep's rows as they come */
}

void perf_json_end(const struct perf_ctx *c, bool first, bool ok)
{
	if (first)
		json_head(c);
	printf("%s], \"verify_errors\": %llu, \"ok\": %s}\n", first ? "" : "\n",
	       (unsigned long long)c->verify_errors, ok ? "true" : "false");
	fflush(stdout);
}

/* Once a second on a long run: where it is, so nobody wonders. */
void perf_progress(const struct perf_ctx *c, double elapsed, uint64_t msgs, uint32_t size,
		   bool final)
{
	(void)c;
	fprintf(stderr, "\r  %6.1f s  %12llu messages of %u B  %8.3f Gb/s%s", elapsed,
		(unsigned long long)msgs, size,
		elapsed > 0 ? (double)msgs * size * 8 / elapsed / 1e9 : 0.0, final ? "\n" : "");
}
