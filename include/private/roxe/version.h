/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The answer of roxe's programs (roxed and the tools) to --version, as GNU
 * programs answer it. tools/lib/version.c, in libroxe-tools.a and linked
 * into roxed, is the one object built with the version (the top Makefile's
 * VERSION, as -DROXE_VERSION). Declared here rather than in tools/lib/tool.h
 * because roxed includes only include/'s headers (selftests/docs/api_test.sh);
 * named tool_, not roxe_, as it is no function of libroxe.
 */
#ifndef ROXE_VERSION_H
#define ROXE_VERSION_H

/* "PROG VERSION" on a line of stdout (e.g. "roxe-perf X.Y.Z"), then exit:
 * status 0, or 1 when stdout could not be written. */
_Noreturn void tool_version_exit(const char *prog);

#endif /* ROXE_VERSION_H */
