// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The two roles. The client says hello with its mode, parameters and
 * address; the server checks them against its own, answers with its
 * address, and both run bw or lat and print the result.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "rawperf.h"
#include "json.h"

static int check_size(const struct opts *o, const struct side *s, uint32_t size, char *why,
		      size_t len)
{
	bool v4 = roxe_gid_is_v4(s->gid);
	unsigned hdrs = ip_bytes(v4, 0);

	if (ip_bytes(v4, size) > s->mtu) {
		snprintf(why, len, "%u payload bytes do not fit the MTU of %s (%u): at most %u",
			 size, o->ifname, s->mtu, (s->mtu - hdrs) & ~3u);
		return -1;
	}
	unsigned cap = s->port->frame_size < MAX_FRAME ? s->port->frame_size : MAX_FRAME;

	if (14 + ip_bytes(v4, size) > cap) {
		snprintf(why, len, "%u payload bytes do not fit a %s buffer (%u B frames)", size,
			 backend_names[o->backend], cap);
		return -1;
	}
	return 0;
}

int run_client(const struct opts *o, struct side *s)
{
	char words[256], line[MSG_MAX], why[160];
	struct peer peer = { 0 };
	struct tmpl *t = NULL;
	uint64_t *rtt = NULL, lost = 0;
	int cfd, ret = 1;

	if (check_size(o, s, o->size, why, sizeof(why))) {
		err_msg("%s", why);
		return 2;
	}
	cfd = ctrl_connect(o->server, o->port);
	if (cfd < 0)
		return 1;
	side_words(s, words, sizeof(words));
	if (ctrl_send(cfd, "RAWPERF1 mode=%s backend=%s size=%u batch=%u frames=%u %s",
		      mode_names[o->mode], backend_names[o->backend], o->size, o->batch, o->frames,
		      words) ||
	    ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS)) {
		err_msg("no answer from the server at %s port %d", o->server, o->port);
		goto out;
	}
	if (!strncmp(line, "ERR ", 4)) {
		err_msg("server: %s", line + 4);
		goto out;
	}
	if (strncmp(line, "OK ", 3) || peer_parse(line, &peer)) {
		err_msg("bad answer from the server: %s", line);
		goto out;
	}
	if (roxe_gid_is_v4(peer.gid) != roxe_gid_is_v4(s->gid)) {
		err_msg("the server's GID and ours are not the same IP family");
		goto out;
	}
	t = malloc(sizeof(*t));
	if (!t || tmpl_build(t, s, &peer, o->size, 0)) {
		err_msg("cannot build the frame");
		goto out;
	}
	if (o->mode == MODE_BW) {
		struct bw_result r = { 0 };

		if (bw_client(o, s, t, cfd, &r))
			goto out;
		bw_print(o, s, false, o->size, t->len, o->batch, roxe_gid_is_v4(s->gid), &r);
		ret = r.rx_frames ? 0 : 1;
		if (!r.rx_frames)
			err_msg("the server received nothing");
	} else {
		rtt = malloc(o->iters * sizeof(*rtt));
		if (!rtt) {
			err_msg("out of memory for %" PRIu64 " samples", o->iters);
			goto out;
		}
		if (lat_client(o, s, &peer, t, cfd, rtt, &lost))
			goto out;
		lat_print(o, s, t->len, roxe_gid_is_v4(s->gid), rtt, lost);
		ret = 0;
	}
out:
	free(rtt);
	free(t);
	close(cfd);
	return ret;
}

int run_server(const struct opts *o, struct side *s, int lfd)
{
	char line[MSG_MAX], words[256], mode[8], backend[8], why[160];
	struct peer peer = { 0 };
	uint64_t size, batch = 0, frames;
	int cfd, ret = 1;

	if (!o->json)
		fprintf(stderr, "roxe-rawperf: %s server on %s (%s%s), QPN %u, TCP port %d: "
			"waiting for a client\n", mode_names[o->mode], o->ifname,
			backend_names[o->backend],
			s->afxdp ? (roxe_afxdp_zerocopy(s->afxdp) ? ", zero-copy" : ", copy mode") : "",
			s->qpn, o->port);
	cfd = ctrl_accept(lfd);
	if (cfd < 0)
		return 1;
	if (ctrl_recv(cfd, line, sizeof(line), CTRL_TIMEOUT_MS) || strncmp(line, "RAWPERF1 ", 9) ||
	    !kv(line, "mode", mode, sizeof(mode)) || !kv(line, "backend", backend, sizeof(backend)) ||
	    !kv_u64(line, "size", &size) || size > MAX_FRAME || !kv_u64(line, "frames", &frames) ||
	    !frames || frames > MAX_LAT_FRAMES || peer_parse(line, &peer)) {
		err_msg("bad hello from the client");
		goto out;
	}
	why[0] = 0;
	if (strcmp(mode, mode_names[o->mode]))
		snprintf(why, sizeof(why), "client asks for %s, this server runs %s", mode,
			 mode_names[o->mode]);
	else if (strcmp(backend, backend_names[o->backend]))
		snprintf(why, sizeof(why), "client uses backend %s, this server %s", backend,
			 backend_names[o->backend]);
	else if (roxe_gid_is_v4(peer.gid) != roxe_gid_is_v4(s->gid))
		snprintf(why, sizeof(why), "the client's GID and ours are not the same IP family");
	else
		check_size(o, s, (uint32_t)size, why, sizeof(why));
	if (why[0]) {
		err_msg("%s", why);
		ctrl_send(cfd, "ERR %s", why);
		goto out;
	}
	side_words(s, words, sizeof(words));
	if (ctrl_send(cfd, "OK %s", words)) {
		err_msg("cannot answer the client");
		goto out;
	}
	if (o->mode == MODE_BW) {
		struct bw_result r = { 0 };
		struct tmpl *t = malloc(sizeof(*t));
		uint32_t fb = 0;

		/* The frame length, for the report: as the client builds it. */
		if (t && tmpl_build(t, s, &peer, (uint32_t)size, 0) == 0)
			fb = t->len;
		free(t);
		if (bw_server(o, s, (uint32_t)size, cfd, &r))
			goto out;
		kv_u64(line, "batch", &batch);	/* for the report only */
		bw_print(o, s, true, (uint32_t)size, fb, (unsigned)batch, roxe_gid_is_v4(s->gid), &r);
		ret = r.rx_frames ? 0 : 1;
	} else {
		uint64_t served = 0;

		if (lat_server(s, &peer, (uint32_t)size, (unsigned)frames, cfd, &served))
			goto out;
		if (o->json) {
			printf("{\"tool\":\"roxe-rawperf\",\"mode\":\"lat\",\"role\":\"server\","
			       "\"backend\":\"%s\",\"iface\":", backend_names[o->backend]);
			tool_json_str(stdout, o->ifname);
			printf(",\"size\":%" PRIu64 ",\"frames\":%" PRIu64 ",\"served\":%" PRIu64
			       "}\n", size, frames, served);
		} else
			printf("raw %s frame path, lat server: answered %" PRIu64 " frames of %"
			       PRIu64 " B payload, %" PRIu64 " each way\n",
			       o->backend == BACKEND_AFXDP ? "AF_XDP" : "UDP-socket", served, size,
			       frames);
		ret = 0;
	}
out:
	close(cfd);
	return ret;
}
