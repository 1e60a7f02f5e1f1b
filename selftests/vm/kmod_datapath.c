// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod_datapath: roxe.ko's data path (control ABI v3) between a fake roxed
 * and an application on the stock libibverbs rxe provider, run in the VM
 * guest by kmod_datapath.sh.
 *
 *   kmod_datapath IFNAME
 *
 * Three processes. The daemon (D) opens /dev/roxe, attaches IFNAME (roxe0
 * appears), SERVEs two engines with eventfds, maps the shared area, and
 * answers every command with status 0 from a thread, mapping each CQ, SQ
 * and MR by its token; its main thread runs the daemon-side checks the
 * application asks for over a socket. The application (A) uses roxe0. The
 * parent forks both and collects their statuses.
 *
 *   SERVE/CQ_EVENT/EVENT refuse what they must (EINVAL, EBUSY, EBADF,
 *   ENOENT, ENOTCONN); mmap of the shared area and of MR tokens checks
 *   size, offset and MAP_SHARED;
 *   (a) ibv_post_send on an RTS QP puts its QPN on ring qpn % 2, sets its
 *       bit in db_queued and makes that engine's eventfd readable; D takes
 *       it as roxed does (cons past it, then the bit cleared); 1024 more
 *       doorbells of the QP take one slot (each signals the eventfd); on a
 *       ring D makes look full, a doorbell sets overflow instead and keeps
 *       no bit; a QP before RTS gets EINVAL;
 *   (b) D's mapping of an MR shows what A wrote at page_off, A sees what
 *       D wrote; after ibv_dereg_mr every page of D's mapping reads and
 *       writes without a fault (the device's scrap page), whether D had
 *       touched it or not, shows none of A's bytes, D's writes there do
 *       not reach A's buffer, and the token no longer maps;
 *   (c) ibv_req_notify_cq sets cq_armed (NEXT_COMP over SOLICITED),
 *       CQ_EVENT wakes ibv_get_cq_event and disarms; an unarmed CQ_EVENT
 *       raises nothing;
 *   (d) a CQE D writes into the mapped CQ (completing the SEND it read
 *       from the mapped SQ) is what ibv_poll_cq returns;
 *   (f) EVENT QP_FATAL reaches ibv_get_async_event and query_qp says ERR;
 *       SQ_DRAINED leaves the QP in RTS; CQ_ERR reaches the CQ;
 *   (e) SIGKILL to D with sends and receives posted: the armed CQ fires
 *       once, ibv_poll_cq returns IBV_WC_WR_FLUSH_ERR for every WR in
 *       order with its wr_id, the next ibv_get_cq_event fails instead of
 *       hanging, roxe0 goes away and the device's fatal event arrives; a
 *       CQ too small for its flush completions gets what fits (the module
 *       logs how many did not: kmod_datapath.sh checks dmesg).
 *
 * Every check prints "ok: ..." or "FAIL: ..."; exit 0 when all passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <roxe/kabi.h>
#include "verbs_util.h"

#define PAGE		4096UL
#define ENGINES		2
#define MR_ID_SHIFT	36	/* the module's token spacing */
#define ARM_SOLICITED	1	/* cq_armed values (kabi.h) */
#define ARM_NEXT_COMP	2

static const char *who = "";

static void check(int cond, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = snprintf(line, sizeof(line), "%s: %s", cond ? "ok" : "FAIL", who);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* one write per line: two processes share stdout */
	if (write(STDOUT_FILENO, line, strlen(line)) < 0)
		failed = 1;
	if (!cond)
		failed = 1;
}

static uint8_t pattern(uint64_t seed, size_t i)
{
	return (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

/* A <-> D requests */
enum {
	REQ_DOORBELL = 1,	/* a: qpn */
	REQ_RING_ONE,		/* a: qpn; 1024 more doorbells were rung */
	REQ_RING_OVERFLOW,	/* a: qpn; one more */
	REQ_ARMED,		/* a: qpn (its CQ), b: expected arming */
	REQ_CQ_EVENT,		/* a: qpn (its CQ) */
	REQ_COMPLETE_SEND,	/* a: qpn, b: wr_id expected at SQ's head */
	REQ_MR,			/* a: key, b: page_off, c: length, d: touch */
	REQ_MR_REVOKED,		/* a: key */
	REQ_EVENT,		/* a: type, b: qpn (or its CQ) */
	REQ_BYE,
};

struct msg {
	uint32_t	op;
	uint32_t	failed;		/* reply: D's failures so far */
	uint64_t	a, b, c, d;
};

/* ============================ the daemon ================================ */

static int dfd;				/* /dev/roxe */
static struct roxe_kabi_shared *sh;
static int efd[ENGINES];
static uint32_t seen_prod[ENGINES];

struct dqueue {
	struct rxe_queue_buf	*buf;
	uint32_t		mask, log2;
};

static struct {
	pthread_mutex_t lock;
	struct { uint32_t cqn; struct dqueue q; } cq[8];
	struct { uint32_t qpn, send_cqn; struct dqueue sq; } qp[8];
	struct {
		struct roxe_kabi_mr k;
		uint8_t *map;
		int dereged;
	} mr[8];
	int ncq, nqp, nmr;
	int commands;
} st = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int map_queue(const struct roxe_kabi_queue *k, struct dqueue *q)
{
	void *p = mmap(NULL, k->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, k->token);

	if (p == MAP_FAILED)
		return -1;
	q->buf = p;
	q->mask = k->slots - 1;
	q->log2 = k->log2_elem;
	return 0;
}

static void note_command(struct roxe_kabi_cmd *c)
{
	pthread_mutex_lock(&st.lock);
	st.commands++;
	switch (c->op) {
	case ROXE_KOP_CREATE_CQ:
		if (st.ncq < 8 && !map_queue(&c->cq.q, &st.cq[st.ncq].q))
			st.cq[st.ncq++].cqn = c->cq.cqn;
		break;
	case ROXE_KOP_CREATE_QP:
		if (st.nqp < 8 && !map_queue(&c->qp.sq, &st.qp[st.nqp].sq)) {
			st.qp[st.nqp].qpn = c->qp.qpn;
			st.qp[st.nqp++].send_cqn = c->qp.send_cqn;
		}
		break;
	case ROXE_KOP_REG_MR:
		if (st.nmr < 8) {
			void *p = mmap(NULL, c->mr.map_bytes, PROT_READ | PROT_WRITE,
				       MAP_SHARED, dfd, c->mr.token);

			if (p == MAP_FAILED)
				check(0, "mmap of MR 0x%x at 0x%llx: %s", c->mr.key,
				      (unsigned long long)c->mr.token, strerror(errno));
			st.mr[st.nmr].k = c->mr;
			st.mr[st.nmr++].map = p == MAP_FAILED ? NULL : p;
		}
		break;
	case ROXE_KOP_DEREG_MR:
		for (int i = 0; i < st.nmr; i++)
			if (st.mr[i].k.key == c->id)
				st.mr[i].dereged = 1;
		break;
	}
	pthread_mutex_unlock(&st.lock);
}

/* The command thread: every command answered with 0. */
static void *serve_commands(void *arg)
{
	struct roxe_kabi_cmd c;
	struct roxe_kabi_reply r;

	(void)arg;
	for (;;) {
		ssize_t n = read(dfd, &c, sizeof(c));

		if (n < 0 && errno == EINTR)
			continue;
		if (n != sizeof(c))
			return NULL;
		note_command(&c);
		if (!c.seq)
			continue;
		r.seq = c.seq;
		r.status = 0;
		if (write(dfd, &r, sizeof(r)) != sizeof(r))
			return NULL;
	}
}

static int find_qp(uint32_t qpn)
{
	for (int i = 0; i < st.nqp; i++)
		if (st.qp[i].qpn == qpn)
			return i;
	return -1;
}

static int find_cq(uint32_t cqn)
{
	for (int i = 0; i < st.ncq; i++)
		if (st.cq[i].cqn == cqn)
			return i;
	return -1;
}

static int find_mr(uint32_t key)
{
	for (int i = 0; i < st.nmr; i++)
		if (st.mr[i].k.key == key)
			return i;
	return -1;
}

static uint32_t cq_of(uint32_t qpn)
{
	int i = find_qp(qpn);

	return i < 0 ? ~0U : st.qp[i].send_cqn;
}

/* eventfd readable within ms; its count */
static uint64_t efd_wait(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	uint64_t v = 0;

	if (poll(&p, 1, ms) != 1 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* QPN qpn's doorbell bit (kabi.h): set while its QPN is on its ring. */
static int d_bit(uint32_t qpn)
{
	return (int)(__atomic_load_n(&sh->db_queued[qpn / 64], __ATOMIC_ACQUIRE) >> (qpn % 64) & 1);
}

/* As roxed takes the QPN in the slot before prod: the slot goes back to
 * the module, then the QP's bit. */
static void d_take(int r, uint32_t prod, uint32_t qpn)
{
	seen_prod[r] = prod;
	__atomic_store_n(&sh->db[r].cons, prod, __ATOMIC_RELEASE);
	__atomic_fetch_and(&sh->db_queued[qpn / 64], ~(1ull << (qpn % 64)), __ATOMIC_ACQ_REL);
}

static void d_doorbell(uint32_t qpn)
{
	int r = qpn % ENGINES, o = !r;
	struct roxe_kabi_db_ring *ring = &sh->db[r];
	uint32_t prod = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE);
	uint64_t v = efd_wait(efd[r], 2000);

	check(prod == seen_prod[r] + 1 &&
	      ring->qpn[(prod - 1) % ROXE_KABI_DB_SLOTS] == qpn && d_bit(qpn),
	      "(a) doorbell: qpn %u on ring %d (prod %u -> %u), its bit set %d", qpn, r,
	      seen_prod[r], prod, d_bit(qpn));
	check(v == 1, "(a) doorbell: engine %d's eventfd readable (count %llu)", r,
	      (unsigned long long)v);
	check(efd_wait(efd[o], 0) == 0 && sh->db[o].prod == seen_prod[o],
	      "(a) doorbell: engine %d's ring and eventfd untouched", o);
	d_take(r, prod, qpn);
}

static void d_ring_one(uint32_t qpn)
{
	int r = qpn % ENGINES;
	struct roxe_kabi_db_ring *ring = &sh->db[r];
	uint32_t prod = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE);
	uint64_t v = efd_wait(efd[r], 2000);

	check(prod == seen_prod[r] + 1 && ring->qpn[(prod - 1) % ROXE_KABI_DB_SLOTS] == qpn &&
	      d_bit(qpn) && !ring->overflow,
	      "(a) %u doorbells of qpn %u take one slot of ring %d: prod %u -> %u, bit %d, "
	      "overflow %u", ROXE_KABI_DB_SLOTS, qpn, r, seen_prod[r], prod, d_bit(qpn),
	      ring->overflow);
	check(v == ROXE_KABI_DB_SLOTS, "(a) eventfd count %llu", (unsigned long long)v);
	d_take(r, prod, qpn);
	/* as a roxed that took none of the last ring's worth: it looks full */
	__atomic_store_n(&ring->cons, prod - ROXE_KABI_DB_SLOTS, __ATOMIC_RELEASE);
}

static void d_ring_overflow(uint32_t qpn)
{
	int r = qpn % ENGINES;
	struct roxe_kabi_db_ring *ring = &sh->db[r];
	uint32_t prod = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE);
	uint64_t v = efd_wait(efd[r], 2000);

	check(ring->overflow == 1 && prod == seen_prod[r] && !d_bit(qpn) && v == 1,
	      "(a) a doorbell on a full ring sets overflow (prod stays %u, bit %d), eventfd "
	      "signalled", prod, d_bit(qpn));
	/* as roxed would: clear, consume, look at every QP */
	__atomic_store_n(&ring->overflow, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&ring->cons, prod, __ATOMIC_RELEASE);
}

static void d_armed(uint32_t qpn, uint32_t want)
{
	uint32_t cqn = cq_of(qpn);
	uint8_t got = 0xff;

	if (cqn < ROXE_KABI_MAX_CQ)
		got = __atomic_load_n(&sh->cq_armed[cqn], __ATOMIC_SEQ_CST);
	check(got == want, "(c) cq_armed[%u] = %u (want %u)", cqn, got, want);
}

static void d_cq_event(uint32_t qpn)
{
	uint32_t cqn = cq_of(qpn);
	int err = ioctl(dfd, ROXE_IOC_CQ_EVENT, &cqn);

	check(!err && sh->cq_armed[cqn] == 0, "(c) CQ_EVENT %u: %s, disarmed", cqn,
	      err ? strerror(errno) : "0");
}

/* As roxed's engine would: take the SEND at the SQ's head, complete it
 * into the send CQ, raise the event if armed.
 */
static void d_complete_send(uint32_t qpn, uint64_t wr_id)
{
	int qi = find_qp(qpn), ci = find_cq(cq_of(qpn));
	struct dqueue *sq, *cq;
	struct rxe_send_wqe *wqe;
	struct ib_uverbs_wc *wc;
	uint32_t cons, prod, cprod, cqn = cq_of(qpn);

	if (qi < 0 || ci < 0) {
		check(0, "(d) qp %u or its cq not mapped", qpn);
		return;
	}
	sq = &st.qp[qi].sq;
	cq = &st.cq[ci].q;
	cons = sq->buf->consumer_index & sq->mask;
	prod = __atomic_load_n(&sq->buf->producer_index, __ATOMIC_ACQUIRE) & sq->mask;
	wqe = (void *)(sq->buf->data + ((size_t)cons << sq->log2));
	check(prod == ((cons + 1) & sq->mask) && wqe->wr.wr_id == wr_id &&
	      wqe->wr.opcode == IB_UVERBS_WR_SEND,
	      "(d) SQ of qp %u holds the SEND (wr_id 0x%llx, %u bytes)", qpn,
	      (unsigned long long)wqe->wr.wr_id, wqe->dma.length);
	cprod = cq->buf->producer_index & cq->mask;
	wc = (void *)(cq->buf->data + ((size_t)cprod << cq->log2));
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = wqe->wr.wr_id;
	wc->status = IBV_WC_SUCCESS;
	wc->opcode = IBV_WC_SEND;
	wc->byte_len = wqe->dma.length;
	wc->qp_num = qpn;
	__atomic_store_n(&cq->buf->producer_index, (cprod + 1) & cq->mask, __ATOMIC_RELEASE);
	__atomic_store_n(&sq->buf->consumer_index, (cons + 1) & sq->mask, __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (sh->cq_armed[cqn]) {
		int err = ioctl(dfd, ROXE_IOC_CQ_EVENT, &cqn);

		check(!err && !sh->cq_armed[cqn], "(d) CQE written, cq %u was armed: CQ_EVENT", cqn);
	} else {
		check(0, "(d) cq %u not armed after the CQE", cqn);
	}
}

static sigjmp_buf fault_env;

static void on_fault(int sig)
{
	siglongjmp(fault_env, sig);
}

/* The signal reading *p raises, 0 if none. */
static int faults(volatile uint8_t *p)
{
	int sig = sigsetjmp(fault_env, 1);

	if (sig)
		return sig;
	(void)*p;
	return 0;
}

static void d_mr(uint32_t key, uint32_t page_off, uint64_t len, int touch)
{
	int i = find_mr(key);
	struct roxe_kabi_mr *k;
	uint8_t *m;
	size_t bad = 0;
	void *p;

	if (i < 0 || !st.mr[i].map) {
		check(0, "(b) mr 0x%x: no REG_MR or its mmap failed", key);
		return;
	}
	k = &st.mr[i].k;
	m = st.mr[i].map;
	check(k->token >= ROXE_KABI_MR_TOKEN_BASE &&
	      !((k->token - ROXE_KABI_MR_TOKEN_BASE) & ((1ULL << MR_ID_SHIFT) - 1)) &&
	      k->page_off == page_off && k->length == len &&
	      k->map_bytes == ((page_off + len + PAGE - 1) & ~(PAGE - 1)),
	      "(b) REG_MR 0x%x: token 0x%llx, page_off %u, map_bytes %llu", key,
	      (unsigned long long)k->token, k->page_off, (unsigned long long)k->map_bytes);
	p = mmap(NULL, k->map_bytes + PAGE, PROT_READ, MAP_SHARED, dfd, k->token);
	check(p == MAP_FAILED && errno == EINVAL, "(b) mmap of the MR with a wrong size: EINVAL");
	p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, dfd, k->token + PAGE);
	check(p == MAP_FAILED && errno == EINVAL, "(b) mmap inside the token: EINVAL");
	p = mmap(NULL, k->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, dfd, k->token);
	check(p == MAP_FAILED && errno == EINVAL, "(b) MAP_PRIVATE mmap of the MR: EINVAL");
	if (!touch)
		return;
	for (size_t j = 0; j < len; j++)
		bad += m[page_off + j] != pattern(key, j);
	check(!bad, "(b) daemon's mapping shows the application's %llu bytes (%zu differ)",
	      (unsigned long long)len, bad);
	for (size_t j = 0; j < 64; j++)
		m[page_off + len - 64 + j] = pattern(~key, j);
}

static void d_mr_revoked(uint32_t key)
{
	int i = find_mr(key), sigs = 0, same = 0, pages;
	struct roxe_kabi_mr *k;
	void *p;

	if (i < 0 || !st.mr[i].map) {
		check(0, "(b) mr 0x%x unknown", key);
		return;
	}
	k = &st.mr[i].k;
	pages = k->map_bytes / PAGE;
	check(st.mr[i].dereged, "(b) DEREG_MR 0x%x reached the daemon", key);
	for (int j = 0; j < pages; j++)
		sigs += faults(st.mr[i].map + j * PAGE) != 0;
	check(!sigs, "(b) after dereg every page of mr 0x%x is still mapped, to scrap (%d of %d fault)",
	      key, sigs, pages);
	if (sigs)
		return;
	for (size_t j = 0; j < 64; j++)
		same += st.mr[i].map[k->page_off + j] == pattern(key, j);
	check(same < 64, "(b) ... and shows none of the application's bytes");
	/* the application checks that these do not reach its buffer */
	memset(st.mr[i].map, 0xa5, k->map_bytes);
	p = mmap(NULL, k->map_bytes, PROT_READ, MAP_SHARED, dfd, k->token);
	check(p == MAP_FAILED && errno == EINVAL, "(b) its token maps no more");
}

static void d_event(uint32_t type, uint32_t qpn)
{
	struct roxe_kabi_event e = { .type = type, .id = qpn };
	int err;

	if (type == IBV_EVENT_CQ_ERR)
		e.id = cq_of(qpn);
	err = ioctl(dfd, ROXE_IOC_EVENT, &e);
	check(!err, "(f) EVENT %u on %u: %s", type, e.id, err ? strerror(errno) : "0");
}

/* What the ioctls and the shared mapping must refuse. */
static void d_refusals(void)
{
	struct roxe_kabi_serve s = { .nengines = 1 };
	struct roxe_kabi_event e = { .type = IBV_EVENT_QP_FATAL, .id = 30000 };
	uint32_t cqn = ROXE_KABI_MAX_CQ - 1;
	size_t len = (sizeof(*sh) + PAGE - 1) & ~(PAGE - 1);
	int fd2;
	void *p;

	check(ioctl(dfd, ROXE_IOC_CQ_EVENT, &cqn) && errno == ENOENT, "CQ_EVENT unknown cqn: ENOENT");
	check(ioctl(dfd, ROXE_IOC_EVENT, &e) && errno == ENOENT, "EVENT QP_FATAL unknown qpn: ENOENT");
	e.type = IBV_EVENT_DEVICE_FATAL;
	check(ioctl(dfd, ROXE_IOC_EVENT, &e) && errno == EINVAL, "EVENT DEVICE_FATAL: EINVAL");
	e.type = 99;
	check(ioctl(dfd, ROXE_IOC_EVENT, &e) && errno == EINVAL, "EVENT type 99: EINVAL");
	s.efd[0] = efd[0];
	check(ioctl(dfd, ROXE_IOC_SERVE, &s) && errno == EBUSY, "second SERVE: EBUSY");
	fd2 = open("/dev/roxe", O_RDWR);
	check(ioctl(fd2, ROXE_IOC_SERVE, &s) && errno == ENOTCONN, "SERVE before ATTACH: ENOTCONN");
	close(fd2);
	p = mmap(NULL, len + PAGE, PROT_READ, MAP_SHARED, dfd, ROXE_KABI_SHARED_TOKEN);
	check(p == MAP_FAILED && errno == EINVAL, "shared area with a wrong size: EINVAL");
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, dfd, ROXE_KABI_SHARED_TOKEN);
	check(p == MAP_FAILED && errno == EINVAL, "shared area MAP_PRIVATE: EINVAL");
}

/* Attach and SERVE, with the refusals SERVE owes first. */
static int d_setup(const char *ifname)
{
	struct roxe_kabi_attach a = { .abi_version = ROXE_KABI_VERSION };
	struct roxe_kabi_serve s = { 0 };
	size_t len = (sizeof(*sh) + PAGE - 1) & ~(PAGE - 1);
	int pfd[2];

	dfd = open("/dev/roxe", O_RDWR | O_CLOEXEC);
	a.ifindex = if_nametoindex(ifname);
	if (dfd < 0 || !a.ifindex || ioctl(dfd, ROXE_IOC_ATTACH, &a)) {
		check(0, "attach to %s: %s", ifname, strerror(errno));
		return -1;
	}
	check(1, "attached %s: %s", ifname, a.ibdev);
	for (int i = 0; i < ENGINES; i++)
		efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s.nengines = 0;
	check(ioctl(dfd, ROXE_IOC_SERVE, &s) && errno == EINVAL, "SERVE 0 engines: EINVAL");
	s.nengines = ROXE_KABI_MAX_ENGINES + 1;
	check(ioctl(dfd, ROXE_IOC_SERVE, &s) && errno == EINVAL, "SERVE %u engines: EINVAL",
	      s.nengines);
	s.nengines = ENGINES;
	s.efd[0] = efd[0];
	s.efd[1] = 1000;
	check(ioctl(dfd, ROXE_IOC_SERVE, &s) && errno == EBADF, "SERVE with a closed fd: EBADF");
	if (pipe(pfd) == 0) {
		s.efd[1] = pfd[0];
		check(ioctl(dfd, ROXE_IOC_SERVE, &s) && errno == EBADF,
		      "SERVE with a pipe for an eventfd: EBADF");
		close(pfd[0]);
		close(pfd[1]);
	}
	s.efd[1] = efd[1];
	if (ioctl(dfd, ROXE_IOC_SERVE, &s)) {
		check(0, "SERVE %d engines: %s", ENGINES, strerror(errno));
		return -1;
	}
	check(1, "SERVE %d engines", ENGINES);
	sh = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, dfd, ROXE_KABI_SHARED_TOKEN);
	if (sh == MAP_FAILED) {
		check(0, "mmap of the shared area: %s", strerror(errno));
		return -1;
	}
	check(1, "shared area mapped (%zu bytes)", len);
	return 0;
}

static int daemon_main(const char *ifname, int sock, int ready)
{
	struct sigaction sa = { .sa_handler = on_fault };
	pthread_t t;
	struct msg m;

	who = "daemon: ";
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	if (d_setup(ifname))
		return 1;
	d_refusals();
	if (pthread_create(&t, NULL, serve_commands, NULL)) {
		check(0, "command thread");
		return 1;
	}
	if (write(ready, "r", 1) != 1)
		return 1;
	close(ready);
	while (recv(sock, &m, sizeof(m), 0) == sizeof(m)) {
		pthread_mutex_lock(&st.lock);
		switch (m.op) {
		case REQ_DOORBELL:
			d_doorbell(m.a);
			break;
		case REQ_RING_ONE:
			d_ring_one(m.a);
			break;
		case REQ_RING_OVERFLOW:
			d_ring_overflow(m.a);
			break;
		case REQ_ARMED:
			d_armed(m.a, m.b);
			break;
		case REQ_CQ_EVENT:
			d_cq_event(m.a);
			break;
		case REQ_COMPLETE_SEND:
			d_complete_send(m.a, m.b);
			break;
		case REQ_MR:
			d_mr(m.a, m.b, m.c, m.d);
			break;
		case REQ_MR_REVOKED:
			d_mr_revoked(m.a);
			break;
		case REQ_EVENT:
			d_event(m.a, m.b);
			break;
		}
		pthread_mutex_unlock(&st.lock);
		m.failed = failed;
		if (send(sock, &m, sizeof(m), 0) != sizeof(m) || m.op == REQ_BYE)
			break;
	}
	/* killed before this, normally */
	return failed;
}

/* ========================== the application ============================= */

static int sock;

static void ask(uint32_t op, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	struct msg m = { .op = op, .a = a, .b = b, .c = c, .d = d };

	if (send(sock, &m, sizeof(m), 0) != sizeof(m) ||
	    recv(sock, &m, sizeof(m), 0) != sizeof(m)) {
		check(0, "the daemon does not answer request %u", op);
		return;
	}
	if (m.failed)
		failed = 1;
}

static int raw_doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req = { 0 };
	struct ib_uverbs_post_send_resp resp;

	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = qp->handle;
	req.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return write(qp->context->cmd_fd, &req, sizeof(req)) == sizeof(req) ? 0 : errno;
}

static int post_send(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint64_t wr_id,
		     int signaled)
{
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = signaled ? IBV_SEND_SIGNALED : 0 }, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int readable(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	return poll(&p, 1, ms) == 1;
}

/* A completion event within ms on cq; 0 if none came. */
static int cq_event(struct ibv_comp_channel *ch, struct ibv_cq *want, int ms)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	if (!readable(ch->fd, ms) || ibv_get_cq_event(ch, &cq, &cq_ctx))
		return 0;
	ibv_ack_cq_events(cq, 1);
	return cq == want;
}

/* The next asynchronous event within ms, its type; -1 if none. Port
 * events are skipped: the port may turn ACTIVE while we run (link watch).
 */
static int async_event(struct ibv_context *ctx, int ms, struct ibv_async_event *out)
{
	struct ibv_async_event ev;

	do {
		if (!readable(ctx->async_fd, ms) || ibv_get_async_event(ctx, &ev))
			return -1;
		ibv_ack_async_event(&ev);
	} while (ev.event_type == IBV_EVENT_PORT_ACTIVE ||
		 ev.event_type == IBV_EVENT_PORT_ERR ||
		 ev.event_type == IBV_EVENT_GID_CHANGE);
	if (out)
		*out = ev;
	return ev.event_type;
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr i;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &i) ? (enum ibv_qp_state)-1 : a.qp_state;
}

struct waiter {
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	pid_t tid;
	int ret, err;
};

static void *wait_cq_event(void *arg)
{
	struct waiter *w = arg;
	void *ctx;

	w->tid = gettid();
	w->ret = ibv_get_cq_event(w->ch, &w->cq, &ctx);
	w->err = errno;
	return NULL;
}

/* Until thread tid sleeps (in ibv_get_cq_event's read). */
static int sleeping(pid_t tid)
{
	char path[64], buf[256], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	for (int tries = 0; tries < 200; tries++, usleep(10000)) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'S')
			return 1;
	}
	return 0;
}

static int no_device(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", name);
	for (int tries = 0; tries < 100; tries++, usleep(100000))
		if (access(path, F_OK))
			return 1;
	return 0;
}

/* (e): the daemon dies with work outstanding. */
static void a_death(struct ibv_context *ctx, struct ibv_comp_channel *ch, struct ibv_cq *cq,
		    struct ibv_qp *qp, struct ibv_cq *cq2, struct ibv_qp *qp2,
		    struct ibv_mr *mr, uint8_t *buf, pid_t dpid)
{
	static const uint64_t want_id[] = { 0xe0, 0xe1, 0xe2, 0xf0, 0xf1 };
	static const int want_op[] = { IBV_WC_SEND, IBV_WC_SEND, IBV_WC_SEND,
				       IBV_WC_RECV, IBV_WC_RECV };
	struct waiter w = { .ch = ch };
	struct ibv_wc wc[8];
	struct ibv_async_event ev;
	struct timespec ts;
	pthread_t t;
	int n, ok, fatal = 0, qp_fatal = 0, type;

	check(!post_send(qp, mr, buf, 0xe0, 1) && !post_send(qp, mr, buf, 0xe1, 1) &&
	      !post_send(qp, mr, buf, 0xe2, 0), "(e) three sends posted (one unsignaled)");
	check(!post_recv(qp, mr, buf, 0xf0) && !post_recv(qp, mr, buf, 0xf1),
	      "(e) two receives posted");
	check(!post_recv(qp2, mr, buf, 0xc0) && !post_recv(qp2, mr, buf, 0xc1) &&
	      !post_recv(qp2, mr, buf, 0xc2),
	      "(e) three receives posted to qp %u, whose CQ holds one", qp2->qp_num);
	check(!ibv_req_notify_cq(cq, 0), "(e) CQ armed");
	pthread_create(&t, NULL, wait_cq_event, &w);
	while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	check(sleeping(w.tid), "(e) a thread sleeps in ibv_get_cq_event");
	usleep(100000);
	check(!kill(dpid, SIGKILL), "(e) SIGKILL to the daemon");
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 15;
	if (pthread_timedjoin_np(t, NULL, &ts)) {
		check(0, "(e) ibv_get_cq_event still waits 15 s after the daemon died");
		pthread_cancel(t);
		return;
	}
	check(w.ret == 0 && w.cq == cq, "(e) the armed CQ fired: ibv_get_cq_event returned %d (%s)",
	      w.ret, w.ret ? strerror(w.err) : "the CQ");
	if (!w.ret)
		ibv_ack_cq_events(w.cq, 1);
	n = ibv_poll_cq(cq, 8, wc);
	ok = n == 5;
	for (int i = 0; ok && i < n; i++)
		ok = wc[i].status == IBV_WC_WR_FLUSH_ERR && wc[i].wr_id == want_id[i] &&
		     (int)wc[i].opcode == want_op[i] && wc[i].qp_num == qp->qp_num;
	check(ok, "(e) ibv_poll_cq: %d flush completions (IBV_WC_WR_FLUSH_ERR, wr_ids "
	      "0xe0 0xe1 0xe2, 0xf0 0xf1 in order)", n);
	for (int i = 0; !ok && i < n; i++)
		printf("    wc %d: wr_id 0x%llx status %d opcode %d qp %u\n", i,
		       (unsigned long long)wc[i].wr_id, wc[i].status, wc[i].opcode, wc[i].qp_num);
	check(ibv_poll_cq(cq, 8, wc) == 0, "(e) nothing more in the CQ");
	n = ibv_poll_cq(cq2, 8, wc);
	check(n == 1 && wc[0].status == IBV_WC_WR_FLUSH_ERR && wc[0].wr_id == 0xc0 &&
	      wc[0].opcode == IBV_WC_RECV && wc[0].qp_num == qp2->qp_num,
	      "(e) the full CQ got the first flush completion only (%d)", n);
	/* the device goes: the channel reports it instead of blocking */
	n = readable(ch->fd, 15000);
	check(n, "(e) the completion channel wakes (device gone)");
	if (n) {
		struct ibv_cq *c;
		void *cctx;

		errno = 0;
		n = ibv_get_cq_event(ch, &c, &cctx);
		check(n != 0, "(e) the next ibv_get_cq_event fails: %s", strerror(errno));
	}
	check(no_device("roxe0"), "(e) roxe0 went away");
	while ((type = async_event(ctx, 5000, &ev)) >= 0) {
		if (type == IBV_EVENT_QP_FATAL && ev.element.qp == qp)
			qp_fatal = 1;
		if (type == IBV_EVENT_DEVICE_FATAL) {
			fatal = 1;
			break;
		}
	}
	check(fatal, "(e) IBV_EVENT_DEVICE_FATAL arrives%s",
	      qp_fatal ? " (after the QP's QP_FATAL)" : "");
	check(qp_state(qp) == (enum ibv_qp_state)-1 || qp_state(qp) == IBV_QPS_ERR,
	      "(e) query_qp: fails or says ERR, does not hang");
}

static int app_main(const char *dev, pid_t dpid)
{
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qp, *qp2;
	struct ibv_mr *mr, *mr2, *mr3;
	union ibv_gid gid;
	uint8_t *buf, *buf2, *buf3;
	size_t len1 = 2 * PAGE + 50;
	struct ibv_async_event ev;
	int gidx, err, n, bad;
	struct ibv_wc wc;

	who = "app: ";
	ctx = open_dev(dev);
	if (!ctx) {
		check(0, "open %s", dev);
		return 1;
	}
	gidx = find_gid(ctx, &gid);
	check(gidx >= 0, "RoCE v2 IPv4 GID at index %d", gidx);
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	cq = ch ? ibv_create_cq(ctx, 32, NULL, ch, 0) : NULL;
	cq2 = ibv_create_cq(ctx, 1, NULL, NULL, 0);	/* the flush overfills it */
	buf = aligned_alloc(PAGE, 4 * PAGE);
	buf2 = aligned_alloc(PAGE, PAGE);
	buf3 = aligned_alloc(PAGE, PAGE);
	memset(buf3, 0, PAGE);
	mr3 = pd ? ibv_reg_mr(pd, buf3, PAGE, IBV_ACCESS_LOCAL_WRITE) : NULL;
	{
		struct ibv_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
				 .max_recv_sge = 1 } };
		qp = cq && pd ? ibv_create_qp(pd, &qa) : NULL;
		qa.send_cq = qa.recv_cq = cq2;
		qp2 = cq2 && pd ? ibv_create_qp(pd, &qa) : NULL;
	}
	if (gidx < 0 || !pd || !cq || !cq2 || !mr3 || !qp || !qp2) {
		check(0, "objects: pd %p cq %p cq2 %p mr %p qp %p qp2 %p", (void *)pd,
		      (void *)cq, (void *)cq2, (void *)mr3, (void *)qp, (void *)qp2);
		return 1;
	}
	err = rc_connect(qp, IBV_ACCESS_REMOTE_WRITE, qp->qp_num, &gid, gidx);
	check(!err, "qp %u: RESET -> INIT -> RTR -> RTS (%s)", qp->qp_num, strerror(err));
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

		err = ibv_modify_qp(qp2, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				    IBV_QP_ACCESS_FLAGS);
		check(!err, "qp %u: INIT (%s)", qp2->qp_num, strerror(err));
	}

	/* (a) doorbells */
	err = post_send(qp, mr3, buf3, 0xa1, 1);
	check(!err, "(a) ibv_post_send on RTS qp %u: %s", qp->qp_num, strerror(err));
	ask(REQ_DOORBELL, qp->qp_num, 0, 0, 0);
	err = raw_doorbell(qp2);
	check(err == EINVAL, "(a) doorbell of a QP in INIT: %s", strerror(err));
	for (n = 0, bad = 0; n < ROXE_KABI_DB_SLOTS; n++)
		bad += raw_doorbell(qp) != 0;
	check(!bad, "(a) %d more doorbells (%d failed)", n, bad);
	ask(REQ_RING_ONE, qp->qp_num, 0, 0, 0);
	check(raw_doorbell(qp) == 0, "(a) a doorbell on a full ring succeeds");
	ask(REQ_RING_OVERFLOW, qp->qp_num, 0, 0, 0);

	/* (c), (d) arming, events, a CQE from the daemon */
	check(!ibv_req_notify_cq(cq, 0), "(c) req_notify_cq NEXT_COMP");
	ask(REQ_ARMED, qp->qp_num, ARM_NEXT_COMP, 0, 0);
	check(!ibv_req_notify_cq(cq, 1), "(c) req_notify_cq SOLICITED");
	ask(REQ_ARMED, qp->qp_num, ARM_NEXT_COMP, 0, 0);
	ask(REQ_COMPLETE_SEND, qp->qp_num, 0xa1, 0, 0);
	check(cq_event(ch, cq, 5000), "(c) ibv_get_cq_event returns the CQ");
	ask(REQ_ARMED, qp->qp_num, 0, 0, 0);
	n = ibv_poll_cq(cq, 1, &wc);
	check(n == 1 && wc.wr_id == 0xa1 && wc.status == IBV_WC_SUCCESS &&
	      wc.opcode == IBV_WC_SEND && wc.qp_num == qp->qp_num && wc.byte_len == 64,
	      "(d) ibv_poll_cq returns the daemon's CQE: wr_id 0x%llx, %s, qp %u, %u bytes",
	      (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status), wc.qp_num, wc.byte_len);
	check(ibv_poll_cq(cq, 1, &wc) == 0, "(d) and nothing else");
	ask(REQ_CQ_EVENT, qp->qp_num, 0, 0, 0);
	check(!readable(ch->fd, 300), "(c) CQ_EVENT on a disarmed CQ raises nothing");
	check(!ibv_req_notify_cq(cq, 1), "(c) req_notify_cq SOLICITED");
	ask(REQ_ARMED, qp->qp_num, ARM_SOLICITED, 0, 0);
	ask(REQ_CQ_EVENT, qp->qp_num, 0, 0, 0);
	check(cq_event(ch, cq, 5000), "(c) CQ_EVENT on the SOLICITED arming: the event comes");

	/* (b) MRs mapped into the daemon, and revoked */
	for (size_t i = 0; i < len1; i++)
		buf[100 + i] = 0;
	mr = ibv_reg_mr(pd, buf + 100, len1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	mr2 = ibv_reg_mr(pd, buf2, PAGE, IBV_ACCESS_LOCAL_WRITE);
	check(mr && mr2, "(b) reg_mr %zu bytes at page offset 100, and one page", len1);
	if (mr && mr2) {
		for (size_t i = 0; i < len1; i++)
			buf[100 + i] = pattern(mr->lkey, i);
		ask(REQ_MR, mr->lkey, 100, len1, 1);
		for (n = 0, bad = 0; n < 64; n++)
			bad += buf[100 + len1 - 64 + n] != pattern(~mr->lkey, n);
		check(!bad, "(b) the application sees the daemon's 64 bytes (%d differ)", bad);
		ask(REQ_MR, mr2->lkey, 0, PAGE, 0);
		uint32_t k1 = mr->lkey, k2 = mr2->lkey;

		check(!ibv_dereg_mr(mr), "(b) dereg_mr (daemon touched it)");
		ask(REQ_MR_REVOKED, k1, 0, 0, 0);
		for (n = 0, bad = 0; n < (int)len1 - 64; n++)
			bad += buf[100 + n] != pattern(k1, n);
		check(!bad, "(b) the daemon's writes after the dereg do not reach the application (%d differ)",
		      bad);
		check(!ibv_dereg_mr(mr2), "(b) dereg_mr (daemon never touched it)");
		ask(REQ_MR_REVOKED, k2, 0, 0, 0);
		buf[100] = 1;
		check(buf[100] == 1, "(b) the application's memory is still its own");
	}

	/* (f) asynchronous events */
	ask(REQ_EVENT, IBV_EVENT_SQ_DRAINED, qp->qp_num, 0, 0);
	n = async_event(ctx, 5000, &ev);
	check(n == IBV_EVENT_SQ_DRAINED && ev.element.qp == qp && qp_state(qp) == IBV_QPS_RTS,
	      "(f) SQ_DRAINED reaches the QP (%d), which stays RTS", n);
	ask(REQ_EVENT, IBV_EVENT_CQ_ERR, qp->qp_num, 0, 0);
	n = async_event(ctx, 5000, &ev);
	check(n == IBV_EVENT_CQ_ERR && ev.element.cq == cq, "(f) CQ_ERR reaches the CQ (%d)", n);
	ask(REQ_EVENT, IBV_EVENT_QP_FATAL, qp2->qp_num, 0, 0);
	n = async_event(ctx, 5000, &ev);
	check(n == IBV_EVENT_QP_FATAL && ev.element.qp == qp2,
	      "(f) QP_FATAL reaches ibv_get_async_event (%d)", n);
	check(qp_state(qp2) == IBV_QPS_ERR, "(f) query_qp: qp %u is in ERR", qp2->qp_num);

	/* (e) the daemon dies */
	a_death(ctx, ch, cq, qp, cq2, qp2, mr3, buf3, dpid);

	ibv_destroy_qp(qp);
	ibv_destroy_qp(qp2);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(cq2);
	ibv_dereg_mr(mr3);
	ibv_destroy_comp_channel(ch);
	ibv_dealloc_pd(pd);
	check(!ibv_close_device(ctx), "close_device after the device went");
	return failed;
}

/* ============================== parent ================================== */

static pid_t dpid, apid;

/* A hang is a failure, not a stuck VM. */
static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: hung: killed after 100 s\n";

	(void)sig;
	if (apid > 0)
		kill(apid, SIGKILL);
	if (dpid > 0)
		kill(dpid, SIGKILL);
	if (write(STDOUT_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

int main(int argc, char **argv)
{
	int sv[2], rd[2], st_d = 0, st_a = 0;
	char c;

	if (argc != 2) {
		fprintf(stderr, "usage: kmod_datapath IFNAME\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) || pipe(rd))
		return 1;
	dpid = fork();
	if (dpid == 0) {
		close(sv[0]);
		close(rd[0]);
		_exit(daemon_main(argv[1], sv[1], rd[1]));
	}
	close(sv[1]);
	close(rd[1]);
	if (read(rd[0], &c, 1) != 1) {
		waitpid(dpid, &st_d, 0);
		check(0, "the daemon did not get ready");
		return 1;
	}
	apid = fork();
	if (apid == 0) {
		sock = sv[0];
		_exit(app_main("roxe0", dpid));
	}
	close(sv[0]);
	signal(SIGALRM, on_alarm);
	alarm(100);
	waitpid(apid, &st_a, 0);
	kill(dpid, SIGKILL);
	waitpid(dpid, &st_d, 0);
	check(WIFSIGNALED(st_d) && WTERMSIG(st_d) == SIGKILL, "the daemon was killed (status 0x%x)",
	      st_d);
	check(WIFEXITED(st_a) && WEXITSTATUS(st_a) == 0, "the application exited %d",
	      WIFEXITED(st_a) ? WEXITSTATUS(st_a) : -1);
	return failed;
}
