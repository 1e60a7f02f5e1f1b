// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The command-line convention of roxed and the tools (include/private/roxe/cli.h). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include "roxe/cli.h"

static const char *cli_prog = "roxe";
static const char *cli_usage = "";

void tool_cli_init(const char *prog, const char *usage)
{
	cli_prog = prog;
	cli_usage = usage;
}

int tool_usage_error(const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fprintf(stderr, "%s: ", cli_prog);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	fprintf(stderr, "%s%sTry '%s --help' for more.\n", cli_usage,
		*cli_usage && cli_usage[strlen(cli_usage) - 1] != '\n' ? "\n" : "", cli_prog);
	return TOOL_USAGE_EXIT;
}

/* strtoull() alone takes a sign (and negates), blanks and octal: only
 * digits, or 0x and hex digits, get this far. */
static int num_digits(const char *s, const char **digits, int *base)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
		*digits = s + 2;
		*base = 16;
		return 0;
	}
	*digits = s;
	*base = 10;
	return isdigit((unsigned char)*s) ? 0 : -1;
}

static int num_error(const char *opt, const char *arg, uint64_t min, uint64_t max,
		     unsigned flags)
{
	return tool_usage_error("%s: '%s' is not a whole number from %llu to %llu%s", opt, arg,
				(unsigned long long)min, (unsigned long long)max,
				flags & TOOL_NUM_SUFFIX ? " (K, M, G: times 2^10, 2^20, 2^30)" : "");
}

int tool_num(const char *opt, const char *arg, uint64_t min, uint64_t max, unsigned flags,
	     uint64_t *v)
{
	const char *digits;
	unsigned long long n;
	char *end;
	int base, shift = 0;

	if (num_digits(arg, &digits, &base))
		return num_error(opt, arg, min, max, flags);
	errno = 0;
	n = strtoull(digits, &end, base);
	if (errno)
		return num_error(opt, arg, min, max, flags);
	if ((flags & TOOL_NUM_SUFFIX) && *end && !end[1] && strchr("kKmMgG", *end)) {
		shift = 10 * (int)(1 + (strchr("kKmMgG", *end) - "kKmMgG") / 2);
		end++;
	}
	if (*end || (shift && n > ULLONG_MAX >> shift))
		return num_error(opt, arg, min, max, flags);
	n <<= shift;
	if (n < min || n > max)
		return num_error(opt, arg, min, max, flags);
	*v = n;
	return 0;
}

int tool_uint(const char *opt, const char *arg, unsigned min, unsigned max, unsigned *v)
{
	uint64_t n;
	int err = tool_num(opt, arg, min, max, 0, &n);

	if (!err)
		*v = (unsigned)n;
	return err;
}

int tool_int(const char *opt, const char *arg, int min, int max, int *v)
{
	uint64_t n;
	int err = tool_num(opt, arg, (uint64_t)min, (uint64_t)max, 0, &n);

	if (!err)
		*v = (int)n;
	return err;
}

int tool_real(const char *opt, const char *arg, double min, double max, double *v)
{
	char *end;
	double d;

	/* strtod() would take a sign, blanks, hex, "inf" and "nan" */
	if (!isdigit((unsigned char)*arg) || strspn(arg, "0123456789.") != strlen(arg))
		goto bad;
	errno = 0;
	d = strtod(arg, &end);
	if (errno || *end || !isfinite(d) || d < min || d > max)
		goto bad;
	*v = d;
	return 0;
bad:
	return tool_usage_error("%s: '%s' is not a number from %g to %g", opt, arg, min, max);
}

int tool_backend(const char *arg, enum roxe_backend *b)
{
	if (!strcmp(arg, "afxdp"))
		*b = ROXE_BACKEND_AFXDP;
	else if (!strcmp(arg, "udp"))
		*b = ROXE_BACKEND_UDP;
	else
		return tool_usage_error("-B/--backend: afxdp or udp, not '%s'", arg);
	return 0;
}

int tool_ib_dev_refused(const char *name)
{
	if (if_nametoindex(name))
		return tool_usage_error("-d names an RDMA device (as in perftest and "
					"ibv_rc_pingpong); %s is a network interface: --netdev %s",
					name, name);
	return tool_usage_error("-d %s: %s runs its own roxe engine on a network interface "
				"(--netdev IFACE), not on an RDMA device", name, cli_prog);
}
