// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod_odp_block: a page fault an application blocks holds up nobody else
 * (issue #39), run in the VM guest by kmod_odp.sh.
 *
 *   kmod_odp_block OWNER PEER
 *
 * OWNER registers an ODP MR over a file of a FUSE file system this program
 * serves itself (/dev/fuse, no library), and holds every READ the kernel
 * asks of it: a fault on those pages cannot finish, as with a FUSE server
 * that hangs or a disk that does not answer. PEER READs from the MR. Then
 * a second process, another tenant with QPs of its own between the same
 * two devices, moves 100 x 64 KiB each way, every byte checked: it must
 * finish while the fault stays blocked (on roxe0, in the same roxed
 * engine). Then the FUSE READs are answered, and PEER's READ must bring
 * the file's bytes. Exit 0 when every check passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "verbs_util.h"

#define PG		4096u
#define FLEN		(16 * PG)		/* the FUSE file, mapped whole */
#define TLEN		(64 * 1024u)		/* the other tenant's messages */
#define TROUNDS		100
#define TENANT_SECS	30			/* while the fault is blocked */
#define DIR		"/tmp/roxe-odp-fuse"
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/* --- the FUSE server: one file, "f", whose READs wait for release ------ */
static int fuse_fd = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool released;
static unsigned reads_held;
struct held { uint64_t unique, offset; uint32_t size; };
static struct held held[64];

static uint8_t file_byte(uint64_t off)
{
	return (uint8_t)((off * 2654435761u) >> 13);
}

static void reply(uint64_t unique, int error, const void *arg, size_t len)
{
	struct fuse_out_header h = { .len = sizeof(h) + (error ? 0 : len), .error = error,
				     .unique = unique };
	uint8_t buf[sizeof(h) + 8192];

	if (error)
		len = 0;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), arg, len);
	if (write(fuse_fd, buf, sizeof(h) + len) < 0 && errno != ENOENT)
		perror("kmod_odp_block: reply to /dev/fuse");
}

static void file_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0644;
	a->nlink = 1;
	a->size = ino == FUSE_ROOT_ID ? 0 : FLEN;
	a->blocks = a->size / 512;
	a->blksize = PG;
}

static void read_reply(const struct held *r)
{
	static uint8_t data[8192];
	uint32_t n = r->size;

	if (r->offset >= FLEN)
		n = 0;
	else if (n > FLEN - r->offset)
		n = FLEN - r->offset;
	if (n > sizeof(data))
		n = sizeof(data);
	for (uint32_t i = 0; i < n; i++)
		data[i] = file_byte(r->offset + i);
	reply(r->unique, 0, data, n);
}

static void *serve(void *arg)
{
	static uint8_t buf[FUSE_MIN_READ_BUFFER + 128 * 1024];

	(void)arg;
	for (;;) {
		ssize_t n = read(fuse_fd, buf, sizeof(buf));
		struct fuse_in_header *in = (void *)buf;
		void *body = buf + sizeof(*in);

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*in))
			return NULL;	/* unmounted */
		switch (in->opcode) {
		case FUSE_INIT: {
			struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
						   .minor = FUSE_KERNEL_MINOR_VERSION,
						   .max_write = 4096, .max_pages = 1 };

			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o = { .nodeid = 2 };

			if (strcmp(body, "f")) {
				reply(in->unique, -ENOENT, NULL, 0);
				break;
			}
			file_attr(&o.attr, 2);
			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o = { 0 };

			file_attr(&o.attr, in->nodeid);
			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN: {
			struct fuse_open_out o = { .fh = 1 };

			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_READ: {
			const struct fuse_read_in *r = body;
			struct held h = { in->unique, r->offset, r->size };

			pthread_mutex_lock(&lock);
			if (released || reads_held == sizeof(held) / sizeof(held[0])) {
				pthread_mutex_unlock(&lock);
				read_reply(&h);
				break;
			}
			held[reads_held++] = h;	/* answered at release */
			pthread_cond_broadcast(&cond);
			pthread_mutex_unlock(&lock);
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
			reply(in->unique, 0, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;	/* no reply */
		default:
			reply(in->unique, -ENOSYS, NULL, 0);
		}
	}
}

/* The held READs answered, and every later one at once. */
static void release_reads(void)
{
	pthread_mutex_lock(&lock);
	released = true;
	for (unsigned i = 0; i < reads_held; i++)
		read_reply(&held[i]);
	pthread_mutex_unlock(&lock);
}

/* Until a READ is held, at most secs seconds; whether one is. */
static bool read_held_within(int secs)
{
	struct timespec until;
	bool got;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += secs;
	pthread_mutex_lock(&lock);
	while (!reads_held && pthread_cond_timedwait(&cond, &lock, &until) != ETIMEDOUT)
		;
	got = reads_held > 0;
	pthread_mutex_unlock(&lock);
	return got;
}

/* --- an RC QP pair between the two devices -------------------------------- */
struct end {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	struct ibv_cq		*cq;
	struct ibv_qp		*qp;
	union ibv_gid		gid;
	int			gidx;
};

static int end_open(struct end *e, const char *name)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 },
	};

	e->ctx = open_dev(name);
	if (!e->ctx)
		return -1;
	e->gidx = find_gid(e->ctx, &e->gid);
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	if (e->gidx < 0 || !e->pd || !e->cq)
		return -1;
	ia.send_cq = ia.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &ia);
	return e->qp ? 0 : -1;
}

/* a and b connected; timeout: a's retransmit timeout field */
static int pair_open(struct end *a, const char *an, struct end *b, const char *bn,
		     uint8_t timeout)
{
	if (end_open(a, an) || end_open(b, bn))
		return -1;
	return rc_connect_timeout(a->qp, ACCESS, b->qp->qp_num, &b->gid, a->gidx, timeout) ||
	       rc_connect(b->qp, ACCESS, a->qp->qp_num, &a->gid, b->gidx);
}

static int post(struct end *e, enum ibv_wr_opcode op, void *laddr, uint32_t lkey, uint32_t len,
		uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)laddr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

/* The other tenant: its own QPs and MRs between OWNER and PEER; PEER
 * WRITEs 64 KiB and READs it back, TROUNDS times, each byte checked.
 * Exit 0: all done. */
static int tenant(const char *owner, const char *peer)
{
	struct end o, p;
	uint8_t *ob = calloc(1, TLEN), *pb = malloc(2 * TLEN);
	struct ibv_mr *om, *pm;
	struct ibv_wc wc;

	if (!ob || !pb || pair_open(&p, peer, &o, owner, 14))
		return 2;
	om = ibv_reg_mr(o.pd, ob, TLEN, ACCESS);
	pm = ibv_reg_mr(p.pd, pb, 2 * TLEN, ACCESS);
	if (!om || !pm)
		return 2;
	for (int i = 0; i < TROUNDS; i++) {
		for (uint32_t k = 0; k < TLEN; k++)
			pb[k] = (uint8_t)(k * 7 + i);
		memset(pb + TLEN, 0, TLEN);
		if (post(&p, IBV_WR_RDMA_WRITE, pb, pm->lkey, TLEN, (uintptr_t)ob, om->rkey) ||
		    wc_within(p.cq, &wc, 10) != IBV_WC_SUCCESS ||
		    post(&p, IBV_WR_RDMA_READ, pb + TLEN, pm->lkey, TLEN, (uintptr_t)ob, om->rkey) ||
		    wc_within(p.cq, &wc, 10) != IBV_WC_SUCCESS || memcmp(pb, pb + TLEN, TLEN))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct end o, p;
	pthread_t server;
	uint8_t *fb, *pb;
	struct ibv_mr *om, *pm;
	struct ibv_wc wc;
	char opts[128];
	int go[2], ffd, st, s, bad = -1;
	pid_t child;
	struct timespec t0, t;

	if (argc != 3) {
		fprintf(stderr, "usage: %s OWNER PEER\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* the other tenant: forked before any verbs, started by a byte */
	if (pipe(go))
		return 1;
	child = fork();
	if (child == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		_exit(tenant(argv[1], argv[2]));
	}
	close(go[0]);

	mkdir(DIR, 0755);
	fuse_fd = open("/dev/fuse", O_RDWR);
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
	if (fuse_fd < 0 || mount("roxe-odp", DIR, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		printf("FAIL: a FUSE mount at %s: %s\n", DIR, strerror(errno));
		return 1;
	}
	pthread_create(&server, NULL, serve, NULL);
	ffd = open(DIR "/f", O_RDWR);
	fb = ffd < 0 ? MAP_FAILED : mmap(NULL, FLEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, ffd, 0);
	CHECK(fb != MAP_FAILED, "the FUSE file mapped%s%s", fb == MAP_FAILED ? ": " : "",
	      fb == MAP_FAILED ? strerror(errno) : "");
	/* PEER's READs may wait long: timeout 20 (4.3 s), 7 retries */
	s = pair_open(&p, argv[2], &o, argv[1], 20);
	CHECK(s == 0, "RC QPs %s - %s connected", argv[2], argv[1]);
	if (fb == MAP_FAILED || s)
		return 1;
	om = ibv_reg_mr(o.pd, fb, FLEN, ACCESS | IBV_ACCESS_ON_DEMAND);
	pb = calloc(1, FLEN);
	pm = pb ? ibv_reg_mr(p.pd, pb, FLEN, ACCESS) : NULL;
	CHECK(om && pm, "an ODP MR of %s over the FUSE file (%s)", argv[1],
	      om ? "registered" : strerror(errno));
	if (!om || !pm)
		return 1;

	/* PEER's READ: the fault on OWNER's side waits in the FUSE READ */
	s = post(&p, IBV_WR_RDMA_READ, pb, pm->lkey, 2 * PG, (uintptr_t)fb + PG, om->rkey);
	CHECK(s == 0 && read_held_within(10),
	      "PEER's READ of the mapped file: the page fault waits in the FUSE server's READ");

	/* the other tenant, while that fault stays blocked */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (write(go[1], "g", 1) != 1)
		return 1;
	for (;;) {
		pid_t w = waitpid(child, &st, WNOHANG);

		clock_gettime(CLOCK_MONOTONIC, &t);
		if (w == child) {
			bad = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			break;
		}
		if (t.tv_sec - t0.tv_sec >= TENANT_SECS)
			break;
		usleep(10000);
	}
	CHECK(bad == 0, "another tenant moved %d x %u KiB each way, every byte checked, while "
	      "the fault was blocked: %s after %.1f s", TROUNDS, TLEN / 1024,
	      bad < 0 ? "still not done" : bad == 0 ? "done" : "failed",
	      (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
	pthread_mutex_lock(&lock);
	printf("note: %u FUSE READs held\n", reads_held);
	pthread_mutex_unlock(&lock);

	/* the READs answered: PEER's READ brings the file's bytes */
	release_reads();
	s = wc_within(p.cq, &wc, 30);
	st = -1;
	for (uint32_t i = 0; s == IBV_WC_SUCCESS && i < 2 * PG && st < 0; i++)
		if (pb[i] != file_byte(PG + i))
			st = (int)i;
	CHECK(s == IBV_WC_SUCCESS && st < 0, "once the FUSE READs are answered, PEER's READ: %s%s",
	      s < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)s),
	      st >= 0 ? ", wrong bytes" : ", the file's bytes");
	if (bad < 0) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
	}
	ibv_dereg_mr(om);
	munmap(fb, FLEN);
	close(ffd);
	umount2(DIR, MNT_DETACH);
	return failed;
}
