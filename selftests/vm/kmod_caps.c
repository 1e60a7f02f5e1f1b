// SPDX-License-Identifier: GPL-2.0-only
/*
 * kmod_caps: who may drive /dev/roxe. Run in the VM guest by kmod_races.sh
 * under setpriv (an unprivileged user; root without CAP_NET_ADMIN) and
 * unshare (root of a user namespace that owns its network namespace).
 *
 *   kmod_caps IFINDEX denied|allowed
 *
 * denied:  ROXE_IOC_ATTACH and ROXE_IOC_SERVE fail with EPERM.
 * allowed: they get past the capability check: ATTACH of IFINDEX (a
 *          loopback device) fails with EINVAL, SERVE with ENOTCONN.
 * Either way a file that is not attached gets ENOTCONN from the ioctls,
 * read, write and mmap that only roxed's attached file may use.
 * Prints one "ok:" line per check; exits 0 when all pass.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <roxe/kabi.h>

static int failed;

static void expect(const char *what, int ret, int want)
{
	int got = ret < 0 ? errno : 0;

	if (got == want) {
		printf("ok: %s: %s\n", what, want ? strerror(want) : "allowed");
	} else {
		printf("FAIL: %s: %s, not %s\n", what, got ? strerror(got) : "succeeded",
		       want ? strerror(want) : "success");
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	struct roxe_kabi_attach a = { .abi_version = ROXE_KABI_VERSION };
	struct roxe_kabi_serve s = { .nengines = 1 };
	struct roxe_kabi_mr_window w = { .key = 0x100, .map = 0 };
	struct roxe_kabi_event e = { .type = 1, .id = 16 };
	struct roxe_kabi_info i;
	int fd, denied;
	__u32 cqn = 0;
	char buf[256];
	void *p;

	if (argc != 3 || (strcmp(argv[2], "denied") && strcmp(argv[2], "allowed"))) {
		fprintf(stderr, "usage: kmod_caps IFINDEX denied|allowed\n");
		return 2;
	}
	denied = !strcmp(argv[2], "denied");
	a.ifindex = (__u32)atoi(argv[1]);
	printf("uid %d euid %d\n", (int)getuid(), (int)geteuid());
	fd = open("/dev/" ROXE_KABI_DEVNAME, O_RDWR);
	if (fd < 0) {
		printf("FAIL: open /dev/roxe: %s\n", strerror(errno));
		return 1;
	}
	s.efd[0] = eventfd(0, 0);
	expect("ROXE_IOC_ATTACH", ioctl(fd, ROXE_IOC_ATTACH, &a), denied ? EPERM : EINVAL);
	expect("ROXE_IOC_SERVE", ioctl(fd, ROXE_IOC_SERVE, &s), denied ? EPERM : ENOTCONN);
	expect("ROXE_IOC_INFO (not attached)", ioctl(fd, ROXE_IOC_INFO, &i), ENOTCONN);
	expect("ROXE_IOC_CQ_EVENT (not attached)", ioctl(fd, ROXE_IOC_CQ_EVENT, &cqn), ENOTCONN);
	expect("ROXE_IOC_EVENT (not attached)", ioctl(fd, ROXE_IOC_EVENT, &e), ENOTCONN);
	expect("ROXE_IOC_MR_WINDOW (not attached)", ioctl(fd, ROXE_IOC_MR_WINDOW, &w), ENOTCONN);
	expect("read (not attached)", (int)read(fd, buf, sizeof(buf)), ENOTCONN);
	expect("write (not attached)", (int)write(fd, buf, 16), ENOTCONN);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, ROXE_KABI_SHARED_TOKEN);
	expect("mmap of the shared area (not attached)", p == MAP_FAILED ? -1 : 0, ENOTCONN);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 4096);
	expect("mmap of a queue token (not attached)", p == MAP_FAILED ? -1 : 0, ENOTCONN);
	close(fd);
	return failed;
}
