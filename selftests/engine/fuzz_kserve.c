// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target for roxed's command handler (daemon/kserve.c): the
 * commands roxe.ko queues on /dev/roxe, many of whose fields an
 * application chose (numbers, sizes, keys, access bits, queue shapes,
 * addresses, multicast GIDs). roxed runs over a polled device here; the
 * device file is played by this program: the link wraps read(), write(),
 * ioctl() and mmap() (-Wl,--wrap), and on the played file
 *   read()  hands out the input's next command, then EAGAIN;
 *   write() takes a reply, which must carry the command's seq;
 *   ioctl() answers SERVE, CQ_EVENT, EVENT and MR_WINDOW;
 *   mmap()  gives zeroed anonymous memory of the length asked (queues,
 *           MRs and the shared area), or ENOMEM past 16 MiB.
 * Each input is batches of commands (most built field by field with
 * plausible values, some raw) with engine turns between them, and ends
 * with roxe_kserve_free(). ASan, UBSan and LeakSanitizer report any fault
 * or leak; the engine's credit count must hold; a command with no reply
 * wanted must get none.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include "pair.h"
#include "fuzz_input.h"
#include "transport/transport.h"
#include "transport/credit.h"
#include "transport/engine.h"
#include "roxe/kabi.h"
#include "kserve.h"

#define BUF		(64u << 10)
#define BATCH		16
#define MAX_CMDS	96
#define MAP_MAX		(16u << 20)

static struct {
	struct pair		p;
	int			fd;		/* the played device file */
	struct roxe_kabi_cmd	cmd[BATCH];	/* this batch */
	unsigned		ncmd, next;
	uint32_t		last_seq;	/* of the command read last */
	unsigned		replies;
} g = { .fd = -1 };

/* --- the device file, played ---------------------------------------------- */
ssize_t __real_read(int fd, void *buf, size_t n);
ssize_t __real_write(int fd, const void *buf, size_t n);
int __real_ioctl(int fd, unsigned long req, ...);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

ssize_t __wrap_read(int fd, void *buf, size_t n)
{
	if (fd != g.fd)
		return __real_read(fd, buf, n);
	if (g.next == g.ncmd) {
		errno = EAGAIN;
		return -1;
	}
	CHECK(n == sizeof(struct roxe_kabi_cmd));
	memcpy(buf, &g.cmd[g.next], n);
	g.last_seq = g.cmd[g.next++].seq;
	return (ssize_t)n;
}

ssize_t __wrap_write(int fd, const void *buf, size_t n)
{
	const struct roxe_kabi_reply *r = buf;

	if (fd != g.fd)
		return __real_write(fd, buf, n);
	/* a reply, to the command just read, which wanted one */
	CHECK(n == sizeof(*r));
	CHECK(g.last_seq != 0 && r->seq == g.last_seq);
	CHECK(r->status <= 0);
	g.replies++;
	return (ssize_t)n;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != g.fd)
		return __real_ioctl(fd, req, arg);
	return 0;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (fd != g.fd)
		return __real_mmap(addr, len, prot, flags, fd, off);
	if (!len || len > MAP_MAX) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return __real_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

/* --- commands ------------------------------------------------------------- */
static uint64_t page_up(uint64_t b)
{
	return (b + 4095) & ~4095ull;
}

/* A queue of 2..128 slots of 2^log2 bytes, mostly sized right. */
static void queue(struct input *in, struct roxe_kabi_queue *q, uint32_t log2)
{
	uint8_t v = u8(in);

	q->slots = 1u << (1 + v % 7);
	q->log2_elem = v & 0x80 ? u8(in) % 12 : log2;
	q->bytes = page_up(roxe_queue_bytes(__builtin_ctz(q->slots), q->log2_elem));
	if (v & 0x40)
		q->bytes = (uint64_t)u32(in) << (u8(in) % 16);
	q->token = (uint64_t)(1 + u8(in)) << 12;
}

static void gid(struct input *in, uint8_t g16[16])
{
	uint8_t v = u8(in);

	memset(g16, 0, 16);
	if (v & 1) {			/* IPv4-mapped */
		g16[10] = g16[11] = 0xff;
		g16[12] = v & 2 ? 224 : 10;
		g16[15] = u8(in);
	} else {
		g16[0] = v & 2 ? 0xff : 0xfd;
		g16[15] = u8(in);
	}
}

/* The tenant the module names for object n's creator: taken from its
 * number, so the inputs (regression ones too) read as before; a few users
 * and the kernel, so events are shared among tenants. */
static uint64_t tenant_of(uint32_t n)
{
	return n % 4 == 3 ? ROXE_KABI_TENANT_KERNEL : 1000 + n % 4;
}

static void command(struct input *in, struct roxe_kabi_cmd *c, uint32_t seq)
{
	uint8_t kind = u8(in);

	memset(c, 0, sizeof(*c));
	c->seq = kind & 0x80 ? 0 : seq;
	switch (kind % 12) {
	case 0:		/* raw */
		c->op = u8(in) % (ROXE_KOP_DEALLOC_PD + 2);
		for (unsigned i = 0; i < 48; i++)
			c->raw[i] = u8(in);
		break;
	case 1:
		c->op = u8(in) & 1 ? ROXE_KOP_RESIZE_CQ : ROXE_KOP_CREATE_CQ;
		c->cq.cqn = u8(in) % 8;
		c->cq.tenant = tenant_of(c->cq.cqn);
		queue(in, &c->cq.q, 6);
		break;
	case 2:
		c->op = ROXE_KOP_CREATE_QP;
		c->qp.qpn = 16 + u8(in) % 16;
		c->qp.type = 2 + u8(in) % 3;
		c->qp.pdn = u8(in) % 4;
		c->qp.send_cqn = u8(in) % 8;
		c->qp.recv_cqn = u8(in) % 8;
		c->qp.srqn = u8(in) & 1 ? ~0u : u8(in) % 4;
		c->qp.max_send_sge = u8(in) % 8;
		c->qp.max_recv_sge = u8(in) % 8;
		c->qp.max_inline = u8(in) * 4u;
		c->qp.sq_sig_all = u8(in) & 1;
		queue(in, &c->qp.sq, 9);
		queue(in, &c->qp.rq, 7);
		c->qp.flags = u8(in) & 1;
		c->qp.tenant = tenant_of(c->qp.qpn);
		break;
	case 3:
		c->op = ROXE_KOP_MODIFY_QP;
		c->modify.qpn = 16 + u8(in) % 16;
		c->modify.mask = u32(in);
		c->modify.state = u8(in) % 7;
		c->modify.access = u8(in);
		c->modify.qkey = u32(in);
		c->modify.path_mtu = u8(in) % 7;
		c->modify.dest_qpn = 16 + u8(in) % 16;
		c->modify.rq_psn = u32(in);
		c->modify.sq_psn = u32(in);
		c->modify.timeout = u8(in);
		c->modify.retry_cnt = u8(in);
		c->modify.rnr_retry = u8(in);
		c->modify.min_rnr_timer = u8(in);
		c->modify.max_rd_atomic = u8(in);
		c->modify.max_dest_rd_atomic = u8(in);
		c->modify.hop_limit = u8(in);
		c->modify.sgid_type = u8(in) % 3;
		gid(in, c->modify.dgid);
		gid(in, c->modify.sgid);
		break;
	case 4:
		c->op = u8(in) & 1 ? ROXE_KOP_ALLOC_MR : ROXE_KOP_REG_MR;
		c->mr.key = (1u + u8(in) % 32) << 8 | u8(in);
		c->mr.pdn = u8(in) % 4;
		c->mr.access = u8(in) | (u8(in) & 1 ? 0x100000 : 0);
		c->mr.page_off = u8(in) & 1 ? u32(in) : u8(in) * 16u;
		c->mr.iova = (uint64_t)u32(in) << (u8(in) % 40);
		c->mr.length = u32(in) % (2u << 20);
		c->mr.token = (uint64_t)(1 + u8(in)) << 20;
		c->mr.map_bytes = page_up(c->mr.page_off + c->mr.length);
		if (u8(in) & 1)
			c->mr.map_bytes = (uint64_t)u32(in) << 4;
		break;
	case 5:
		c->op = ROXE_KOP_CREATE_AH;
		c->ah.ah_num = u8(in) % 8;
		c->ah.pdn = u8(in) % 4;
		gid(in, c->ah.sgid);
		gid(in, c->ah.dgid);
		c->ah.dmac[0] = u8(in);
		c->ah.hop_limit = u8(in);
		c->ah.flow_label = u32(in);
		break;
	case 6:
		c->op = u8(in) & 1 ? ROXE_KOP_ATTACH_MCAST : ROXE_KOP_DETACH_MCAST;
		c->mcast.qpn = 16 + u8(in) % 16;
		gid(in, c->mcast.mgid);
		break;
	case 7:
		c->op = ROXE_KOP_ALLOC_MW;
		c->mw.key = (ROXE_MW_INDEX_BASE + u8(in) % 8u) << 8 | u8(in);
		c->mw.pdn = u8(in) % 4;
		c->mw.type = u8(in) % 4;
		break;
	case 8:
		c->op = u8(in) & 1 ? ROXE_KOP_MODIFY_SRQ : ROXE_KOP_CREATE_SRQ;
		c->srq.srqn = u8(in) % 4;
		c->srq.pdn = u8(in) % 4;
		c->srq.max_sge = u8(in) % 8;
		c->srq.limit = u8(in);
		c->srq.tenant = tenant_of(c->srq.srqn);
		queue(in, &c->srq.q, 7);
		break;
	default: {	/* a destroy of something that may be there */
		static const uint32_t ops[] = {
			ROXE_KOP_DESTROY_CQ, ROXE_KOP_DESTROY_SRQ, ROXE_KOP_DESTROY_QP,
			ROXE_KOP_DEREG_MR, ROXE_KOP_DESTROY_AH, ROXE_KOP_DEALLOC_MW,
			ROXE_KOP_DEALLOC_PD,
		};
		uint8_t v = u8(in);

		c->op = ops[v % 7];
		switch (c->op) {
		case ROXE_KOP_DEREG_MR:
			c->id = (1u + u8(in) % 32) << 8 | u8(in);
			break;
		case ROXE_KOP_DEALLOC_MW:
			c->id = (ROXE_MW_INDEX_BASE + u8(in) % 8u) << 8 | u8(in);
			break;
		case ROXE_KOP_DESTROY_QP:
			c->id = 16 + u8(in) % 16;
			break;
		default:
			c->id = v & 0x80 ? u32(in) : u8(in) % 8;
			break;
		}
	}
	}
}

static void turns(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		roxe_engine_poll(&g.p.s[1].dev->engines[0]);
}

static void quiet_log(int prio, const char *fmt, ...)
{
	(void)prio;
	(void)fmt;
}

static int setup(void)
{
	CHECK(pair_open_polled(&g.p, 1024, BUF, 3) == 0);
	g.fd = open("/dev/null", O_RDWR);
	CHECK(g.fd >= 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct input in = { data, size };
	struct roxe_engine *e;
	struct roxe_kserve *ks;
	uint32_t seq = 1;
	unsigned cmds = 0;

	if (!ready)
		ready = !setup();
	e = &g.p.s[1].dev->engines[0];
	g.ncmd = g.next = 0;
	CHECK(roxe_kserve_new(g.fd, g.p.s[1].dev, quiet_log, 0, &ks) == 0);
	while (in.left && cmds < MAX_CMDS) {
		unsigned n = 1 + u8(&in) % BATCH, want = 0;

		for (g.ncmd = 0, g.next = 0; g.ncmd < n && in.left; g.ncmd++, cmds++) {
			command(&in, &g.cmd[g.ncmd], seq++);
			want += g.cmd[g.ncmd].seq != 0;
		}
		g.replies = 0;
		/* a run reads a bounded number of commands: as roxed's poll
		 * loop, call it while some wait (each run reads one
		 * at least) */
		for (unsigned k = 0; k <= n && g.next < g.ncmd; k++)
			CHECK(roxe_kserve_run(ks) == 0);
		CHECK(g.next == g.ncmd);	/* every command read */
		CHECK(g.replies == want);	/* and answered, when it asked */
		turns(u8(&in) % 4);
		CHECK(roxe_credit_check(e) == 0);
	}
	g.ncmd = g.next = 0;
	roxe_kserve_free(ks);
	turns(2);
	CHECK(roxe_credit_check(e) == 0);
	return 0;
}
