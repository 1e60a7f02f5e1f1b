/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The port layer: what one engine thread uses to receive and send whole
 * Ethernet frames. Three backends sit behind it:
 *   afxdp  AF_XDP socket fed by the XDP program (the fast path)
 *   udp    a plain UDP socket on port 4791 (runs anywhere; the baseline)
 *   loop   an in-memory wire between ports of one process, with fault
 *          injection (unit tests)
 *
 * A port belongs to exactly one thread: no call here takes a lock.
 * Frames are always contiguous in memory (a backend that receives a frame
 * in pieces joins it), and always start at the Ethernet header, whatever
 * the backend: the engine parses and builds full frames everywhere.
 *
 * roxe's own, not installed (include/private/): the functions of this
 * header that roxe's tools call are exported at ROXE_PRIVATE
 * (user/libroxe.map), with no promise to any other program; the rest are
 * libroxe's alone. Applications have the verbs API (roxe/verbs.h).
 */
#ifndef ROXE_PORT_H
#define ROXE_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct roxe_port;

/*
 * tx: where a frame goes, as its builder wrote it into the headers, so that
 * nothing on the way out reads them back. tx_alloc hands bth_off 0: not
 * described; a backend that needs the addressing (udp) parses such a frame.
 */
struct roxe_tx_desc {
	uint8_t		dgid[16];	/* IP destination; IPv4-mapped for IPv4 */
	uint32_t	dqpn;		/* the BTH's destination QP */
	uint16_t	bth_off;	/* the UDP payload's start; 0: not described */
	uint8_t		ttl;		/* IPv4 TTL / IPv6 hop limit */
	uint8_t		tclass;		/* IPv4 TOS / IPv6 traffic class */
};

/* One frame lent by a port: to the engine on receive, to be filled on send. */
struct roxe_buf {
	uint8_t		*data;
	uint32_t	len;		/* rx: frame length; tx: set by the caller */
	uint32_t	cap;		/* tx: bytes writable at data */
	uint64_t	priv;		/* the backend's handle (e.g. UMEM address) */
	struct roxe_tx_desc tx;		/* tx: set by the caller, or left undescribed */
	/*
	 * tx, ext_len nonzero: a frame whose payload stays where it is, in the
	 * port's in-place region (roxe_port.inplace_*): data holds the headers
	 * (hdr_len bytes), then the pad and ICRC (tail_len bytes) right behind
	 * them; the payload is ext_len bytes at ext_off into the region; len is
	 * the whole frame's. Only a port with inplace_len set gets such frames
	 * (roxe_buf_linearize makes an ordinary frame of one).
	 */
	uint64_t	ext_off;
	uint32_t	ext_len;
	uint16_t	hdr_len;
	uint8_t		tail_len;
};

struct roxe_port_stats {
	uint64_t	rx_frames, rx_bytes;
	uint64_t	tx_frames, tx_bytes;
	uint64_t	rx_dropped;	/* ring full, bad frame from below, ... */
	uint64_t	tx_dropped;	/* no buffer, send error */
	uint64_t	tx_kicks;	/* sendto()/wakeups issued */
	uint64_t	tx_comp_bogus;	/* completion ring addresses that were no
					 * descriptor of ours (ignored) */
};

struct roxe_port_ops {
	const char *name;
	/* Receive up to n frames; 0 if none now. Each must go back through
	 * rx_release (in any order, in batches). */
	unsigned (*rx_burst)(struct roxe_port *p, struct roxe_buf *bufs, unsigned n);
	void (*rx_release)(struct roxe_port *p, const struct roxe_buf *bufs, unsigned n);
	/* Borrow up to n empty frames of cap >= the port's frame size
	 * (tx.bth_off 0). */
	unsigned (*tx_alloc)(struct roxe_port *p, struct roxe_buf *bufs, unsigned n);
	/* Queue filled frames (len set); they are owned by the port again.
	 * Frames borrowed and not submitted go back through tx_free. */
	void (*tx_submit)(struct roxe_port *p, struct roxe_buf *bufs, unsigned n);
	void (*tx_free)(struct roxe_port *p, const struct roxe_buf *bufs, unsigned n);
	/* Make queued frames leave (a syscall on some backends). A backend
	 * whose kernel may take only some of them now (AF_XDP copy mode)
	 * leaves tx_pending set: the engine flushes again every turn, and
	 * sleeps only briefly, until it is clear. */
	void (*tx_flush)(struct roxe_port *p);
	/* Optional: look at what the kernel is done with (inplace_done). */
	void (*tx_reap)(struct roxe_port *p);
	/* Optional: nobody will read for a while (the engine sleeps); have
	 * every receive buffer ready for what comes meanwhile. */
	void (*idle)(struct roxe_port *p);
	void (*destroy)(struct roxe_port *p);
};

struct roxe_port {
	const struct roxe_port_ops *ops;
	uint32_t	frame_size;	/* largest frame a buffer holds */
	uint16_t	fixed_sport;	/* nonzero: the UDP source port on the wire
					 * is this, whatever the frame says (udp) */
	int		wait_fd;	/* poll() for POLLIN when idle; -1: none */
	uint32_t	rx_frames;	/* frames its receive ring holds; 0: not known
					 * (the engine's PSN credit, credit.c) */
	bool		tx_pending;	/* frames submitted that have not left yet */
	/* In-place transmit (AF_XDP with multi-buffer, a UMEM reserve): the
	 * region payloads may stay in (roxe_buf.ext_*), where this process
	 * sees it; inplace_len 0: none. inplace_done counts the in-place frames
	 * the port is done with (the kernel gave every descriptor back, or the
	 * frame was dropped), in the order they were submitted. */
	uint8_t		*inplace_base;
	uint64_t	inplace_len;
	uint64_t	inplace_done;
	struct roxe_port_stats stats;
};

/* b (an in-place frame) as an ordinary one: payload and tail copied into
 * data behind the headers; false when it does not fit cap. */
static inline bool roxe_buf_linearize(const struct roxe_port *p, struct roxe_buf *b)
{
	uint8_t tail[8];

	if (!b->ext_len)
		return true;
	if (b->tail_len > sizeof(tail) || b->len > b->cap ||
	    b->ext_off > p->inplace_len || b->ext_len > p->inplace_len - b->ext_off)
		return false;
	__builtin_memcpy(tail, b->data + b->hdr_len, b->tail_len);
	__builtin_memcpy(b->data + b->hdr_len, p->inplace_base + b->ext_off, b->ext_len);
	__builtin_memcpy(b->data + b->hdr_len + b->ext_len, tail, b->tail_len);
	b->ext_len = 0;
	return true;
}

static inline unsigned roxe_port_rx(struct roxe_port *p, struct roxe_buf *b, unsigned n)
{
	return p->ops->rx_burst(p, b, n);
}

static inline void roxe_port_rx_release(struct roxe_port *p, const struct roxe_buf *b, unsigned n)
{
	p->ops->rx_release(p, b, n);
}

static inline unsigned roxe_port_tx_alloc(struct roxe_port *p, struct roxe_buf *b, unsigned n)
{
	return p->ops->tx_alloc(p, b, n);
}

static inline void roxe_port_tx(struct roxe_port *p, struct roxe_buf *b, unsigned n)
{
	p->ops->tx_submit(p, b, n);
}

static inline void roxe_port_tx_free(struct roxe_port *p, const struct roxe_buf *b, unsigned n)
{
	p->ops->tx_free(p, b, n);
}

static inline void roxe_port_flush(struct roxe_port *p)
{
	p->ops->tx_flush(p);
}

static inline void roxe_port_idle(struct roxe_port *p)
{
	if (p->ops->idle)
		p->ops->idle(p);
}

static inline void roxe_port_destroy(struct roxe_port *p)
{
	if (p)
		p->ops->destroy(p);
}

/* --- loop backend (user/port/loop.c) ---------------------------------------- */
/* Faults applied to frames crossing a loop wire, each a probability in
 * parts per million, drawn from a seeded generator (runs are repeatable). */
struct roxe_loop_faults {
	uint32_t	drop_ppm;
	uint32_t	dup_ppm;
	uint32_t	reorder_ppm;	/* hold a frame back behind the next few */
	uint32_t	corrupt_ppm;	/* flip one random bit */
	uint64_t	seed;
};

struct roxe_loop_wire;	/* joins two loop ports, one per direction */
struct roxe_loop_wire *roxe_loop_wire_new(uint32_t frame_size, unsigned depth);
void roxe_loop_wire_free(struct roxe_loop_wire *w);
/* Ports for end 0 and end 1; each belongs to one thread. */
struct roxe_port *roxe_loop_port(struct roxe_loop_wire *w, int end);
/* Faults on frames sent from end `from`; safe only while no thread sends. */
void roxe_loop_set_faults(struct roxe_loop_wire *w, int from, const struct roxe_loop_faults *f);

/* --- AF_XDP backend ---------------------------------------------------------- */
/*
 * The AF_XDP port backend (user/port/afxdp.c): one roxe_port per engine on
 * one interface, fed by roxe's XDP program (roxe/xdp.h). Created and
 * closed by one thread; each port is then used by its engine's thread only.
 */


struct roxe_afxdp;
struct ethtool_channels;

/* An interface's queues as the kernel tells them (user/port/ifqueues.c):
 * its ethtool channels (ETHTOOL_GCHANNELS), else the queues sysfs lists
 * (drivers without channels: tun/tap), else nothing (1 is assumed). */
enum roxe_queues_from {
	ROXE_QUEUES_UNKNOWN,
	ROXE_QUEUES_ETHTOOL,
	ROXE_QUEUES_SYSFS,
};

struct roxe_if_queues {
	unsigned	rx, tx;		/* queues that receive, that transmit (>= 1) */
	enum roxe_queues_from from;
	/* ROXE_QUEUES_ETHTOOL: the channels, in use and the driver's most
	 * (0: the driver did not say) */
	unsigned	combined, rx_only, tx_only;
	unsigned	max_combined, max_rx, max_tx;
};

/* q from ifname's channels, or its sysfs queues (only where sysfs shows
 * this namespace's interface); never fails: q says where it came from. */
void roxe_if_queues(const char *ifname, struct roxe_if_queues *q);
/* q from channels the driver reported: 0, or -ERANGE when they name no
 * receive queue (q then unchanged). */
int roxe_if_queues_from_channels(const struct ethtool_channels *ch, struct roxe_if_queues *q);
/* CPUs this process may run on (its affinity), at least 1. */
unsigned roxe_cpus_usable(void);

/* What an AF_XDP group of engines on an interface takes (roxe_afxdp_plan):
 * a socket per engine on every receive queue (a frame of any QP may arrive
 * on any of them), and a UMEM of receive buffers per queue and transmit
 * buffers per engine. */
enum roxe_plan_limit {
	ROXE_PLAN_ASKED,	/* the engines asked for */
	ROXE_PLAN_CORES,	/* one per usable CPU */
	ROXE_PLAN_QUEUES,	/* one per queue (engine e transmits on queue e) */
	ROXE_PLAN_MAX,		/* the caller's most (max_engines) */
	ROXE_PLAN_SLOTS,	/* the sockets the XDP map holds, over the queues */
};

struct roxe_afxdp_plan {
	unsigned	engines;	/* 0: refused */
	unsigned	queues;		/* sockets on queues 0 .. queues-1 */
	unsigned	fit;		/* the most engines that fit (0: none) */
	enum roxe_plan_limit limit;	/* what set engines; refused: what fit */
	unsigned	cpus, slots;	/* as given */
	unsigned	rx_bufs;	/* receive buffers (chunks) a queue */
	unsigned	tx_bufs;	/* transmit buffers an engine */
	unsigned	chunk, tx_buf;	/* their bytes */
	uint64_t	umem_bytes;
};

/* engines asked (0: the default, min(cpus, queues, max_engines, what the
 * slots allow)) on the queues q, with an XDP map of slots sockets: 0, or
 * -EINVAL when they do not fit (p says why: p->fit, p->limit). */
int roxe_afxdp_plan(unsigned engines, unsigned cpus, unsigned max_engines,
		    const struct roxe_if_queues *q, unsigned slots, struct roxe_afxdp_plan *p);

/* Where roxe_afxdp_open stopped, or what it made. */
enum roxe_afxdp_step {
	ROXE_AFXDP_OK,
	ROXE_AFXDP_PLAN,	/* the engines do not fit the queues */
	ROXE_AFXDP_AREA,	/* the UMEM's memory */
	ROXE_AFXDP_UMEM,	/* registering it (pinned: CAP_IPC_LOCK or RLIMIT_MEMLOCK) */
	ROXE_AFXDP_SOCKET,	/* an AF_XDP socket on queue .queue */
	ROXE_AFXDP_MAP,		/* a socket into the XDP map, or an epoll set */
};

struct roxe_afxdp_report {
	enum roxe_afxdp_step step;
	struct roxe_if_queues q;
	struct roxe_afxdp_plan plan;
	unsigned	queue;
	bool		zerocopy, multibuf;
};

struct roxe_afxdp_config {
	const char	*ifname;
	unsigned	engines;	/* ports, = the program's roxe_config.engines */
	unsigned	queues;		/* 0: all the interface's rx queues */
	int		xsks_map_fd;	/* roxe_xsks of the attached program */
	bool		force_copy;	/* do not try zero-copy */
	bool		no_multibuf;	/* frames up to one buffer (3840 B) only */
	/* bytes of the UMEM set aside for in-place MRs (roxe_afxdp_reserve_*),
	 * on top of the receive and transmit buffers; rounded up to chunks */
	uint64_t	reserve_bytes;
	struct roxe_afxdp_report *report;	/* NULL, or filled either way */
};

/* Sockets on every queue for every engine; returns NULL and sets errno
 * (EINVAL: the engines do not fit the queues, see roxe_afxdp_plan). */
struct roxe_afxdp *roxe_afxdp_open(const struct roxe_afxdp_config *cfg);
/* Engine e's port; the port's destroy drops it (the group lives on). */
struct roxe_port *roxe_afxdp_port(struct roxe_afxdp *x, unsigned engine);
/* Frees the group once every port obtained from it is destroyed. */
void roxe_afxdp_close(struct roxe_afxdp *x);

bool roxe_afxdp_zerocopy(const struct roxe_afxdp *x);

/* The UMEM reserve (roxe_afxdp_config.reserve_bytes): len bytes of it,
 * whole chunks, none of them with a transmit descriptor still out: their
 * address in this process; NULL with errno ENOSPC (no such run free),
 * EOPNOTSUPP (no reserve), EINVAL (len 0). Any thread. */
void *roxe_afxdp_reserve_alloc(struct roxe_afxdp *x, uint64_t len);
/* Back into the reserve (p, len as allocated). */
void roxe_afxdp_reserve_free(struct roxe_afxdp *x, void *p, uint64_t len);
/* The reserve's size and what of it is free, in bytes. */
void roxe_afxdp_reserve_query(struct roxe_afxdp *x, uint64_t *total, uint64_t *avail);
/* Frames may leave in place: multi-buffer sockets and a reserve. */
bool roxe_afxdp_inplace(const struct roxe_afxdp *x);
/* One address as port's completion ring gives it, read once: a transmit
 * buffer's descriptor, an in-place payload's, or counted in
 * stats.tx_comp_bogus and ignored. The port's thread only (tests feed it
 * hostile values). */
void roxe_afxdp_comp_addr(struct roxe_port *port, uint64_t addr);

/* --- UDP backend -------------------------------------------------------------- */
/*
 * The UDP port backend (user/port/udp.c): RoCE v2 over a plain UDP socket
 * bound to <local ip>:4791. Runs where XDP does not; the baseline.
 */


/* local_ip: IPv4 or IPv6 text. Returns NULL and sets errno on failure. */
struct roxe_port *roxe_udp_port_open(const char *local_ip);

#endif /* ROXE_PORT_H */
