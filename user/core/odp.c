// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Touching roxe.ko's on-demand paging MRs (served MRs registered with
 * IBV_ACCESS_ON_DEMAND). The module never lets roxed's fault on one wait
 * for the application's memory, which the application controls (a FUSE
 * file mapped into the MR can block a fault for good) while one engine
 * thread serves every tenant on it: a page the application has present is
 * mapped; one it has not raises SIGBUS while the module faults it in, in
 * the background, for the next touch; one it does not map raises SIGSEGV
 * (kmod/mr.c, include/uapi/roxe/kabi.h). So every touch of such an MR
 * runs here, under a guard that turns those signals into errors:
 * -EAGAIN (not present yet: the responder answers RNR NAK, the requester
 * and completer try again later) and -EFAULT (an access error, as rxe's
 * answer to an address the application does not map).
 *
 * The guard is a sigsetjmp() point per touch, in the touching thread;
 * the handlers are process-wide, installed once, with SA_NODEFER so that
 * leaving one by siglongjmp() leaves the signal unblocked. A signal that
 * is not a guarded touch's fault (no guard on that thread, or an address
 * outside the guarded range) is not ours: the handler puts back the
 * action that was there before and returns, and the faulting instruction
 * runs again into it (a crash stays a crash, a sanitizer's report a
 * report); one sent by kill() is raised again into it.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include "core/core.h"

static struct sigaction before[2];	/* SIGBUS's, SIGSEGV's */
static int init_err;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* the touch in progress on this thread: where to go back to, and the
 * bytes it may fault on */
static __thread sigjmp_buf *guard_env __attribute__((tls_model("initial-exec")));
static __thread uintptr_t guard_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t guard_hi __attribute__((tls_model("initial-exec")));

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *env = guard_env;
	uintptr_t a = (uintptr_t)si->si_addr;

	(void)uc;
	if (env && si->si_code > 0 && a >= guard_lo && a < guard_hi) {
		guard_env = NULL;
		siglongjmp(*env, sig);
	}
	sigaction(sig, &before[sig == SIGSEGV], NULL);
	if (si->si_code <= 0)	/* sent, not a fault: nothing runs again */
		raise(sig);
}

static void install(void)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO | SA_NODEFER };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &before[0]) || sigaction(SIGSEGV, &sa, &before[1]))
		init_err = -errno;
}

int roxe_odp_init(void)
{
	pthread_once(&init_once, install);
	return init_err;
}

int roxe_odp_touch(const void *p, size_t len, roxe_odp_fn *fn, void *arg)
{
	sigjmp_buf env;
	int sig;

	sig = sigsetjmp(env, 0);
	if (sig) {
		/* the touch faulted: nothing after the faulting instruction ran */
		atomic_signal_fence(memory_order_seq_cst);
		return sig == SIGBUS ? -EAGAIN : -EFAULT;
	}
	guard_lo = (uintptr_t)p;
	guard_hi = (uintptr_t)p + len;
	atomic_signal_fence(memory_order_seq_cst);	/* the range before the guard */
	guard_env = &env;
	atomic_signal_fence(memory_order_seq_cst);
	fn(arg);
	atomic_signal_fence(memory_order_seq_cst);
	guard_env = NULL;
	return 0;
}
