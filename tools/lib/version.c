// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* --version for roxed and the tools (include/private/roxe/version.h). */
#include <stdio.h>
#include <stdlib.h>
#include "roxe/version.h"

#ifndef ROXE_VERSION
#error "ROXE_VERSION: the top Makefile gives it (-DROXE_VERSION=\"$(VERSION)\")"
#endif

_Noreturn void tool_version_exit(const char *prog)
{
	printf("%s %s\n", prog, ROXE_VERSION);
	exit(fflush(stdout) || ferror(stdout) ? EXIT_FAILURE : EXIT_SUCCESS);
}
