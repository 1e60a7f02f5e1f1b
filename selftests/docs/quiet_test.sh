#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# libroxe neither reads the environment nor prints: its configuration is
# struct roxe_device_attr (and roxe_icrc_select), its errors are return
# values and counters; the tools and roxed read the variables and print.
# Checked twice: libroxe's sources (user/) call no getenv or printing
# function, and the built libroxe.so.0 imports none (what a macro or a
# fortified variant would hide from the first).
#
# Exit: 0 pass, 1 fail (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
lib=$top/build/lib/libroxe.so.0
log() { echo "# $*"; }
fails=0 n=0
ok() { n=$((n + 1)); log "ok: $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); log "FAIL: $*"; }

# Environment readers and everything that writes to a stream or a log of
# its own accord (snprintf into a buffer is fine).
funcs='getenv|secure_getenv|__secure_getenv|__libc_secure_getenv|perror|printf|fprintf|vprintf|vfprintf|dprintf|vdprintf|puts|fputs|putchar|fputc|putc|fwrite|syslog|vsyslog|err|errx|verr|verrx|warn|warnx|vwarn|vwarnx|error|error_at_line|psignal|psiginfo'

# Sources: a call, or a mention of stdout/stderr, outside comments (lines
# that start a comment or continue one are skipped).
hits=$(grep -rnE --include='*.[ch]' "(^|[^A-Za-z0-9_.>])($funcs)[[:space:]]*\(|\bstd(err|out)\b" \
	"$top/user" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)')
if [ -z "$hits" ]; then
	ok "user/ calls no getenv and no printing function"
else
	bad "user/ reads the environment or prints:"
	while IFS= read -r l; do log "  ${l#"$top"/}"; done <<<"$hits"
fi

if [ ! -f "$lib" ]; then
	bad "$lib is not built"
else
	syms=$(nm -D -u "$lib" | awk '{ sub(/@.*/, "", $2); print $2 }' |
		grep -xE "($funcs|__(v?f?|v?d)printf_chk|__v?syslog_chk|stdout|stderr)")
	if [ -z "$syms" ]; then
		ok "libroxe.so.0 imports no getenv, printing function or standard stream"
	else
		bad "libroxe.so.0 imports: ${syms//$'\n'/ }"
	fi
fi

echo "# $((n - fails))/$n passed"
[ "$fails" -eq 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
