#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz the XDP program as the kernel runs it (fuzz_xdp.c: the verdict,
# an untouched frame, the counters, against a model of the program's
# contract) for a bounded time, from the committed inputs that take every
# way through it (fuzz_xdp.regress/) and frames of every opcode; any crash,
# sanitizer report, hang or broken property fails. Root (BPF, AF_XDP).
# The corpus and any crash input stay in build/.
here=$(dirname "$(readlink -f "$0")")
out=${OUTPUT:-$here/../../build/selftests/xdp}
secs=${FUZZ_SECONDS:-20}
fuzzer=$out/fuzz_xdp
work=$out/fuzz_xdp.work
# kselftest runs a copy of this script from $OUTPUT, with $TOP set.
top=${TOP:-$here/../..}
. "$top/selftests/fuzz_lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "# FAIL: missing: root (loading the XDP program needs it)"
	exit 1
fi
fuzz_prepare "$fuzzer" "$work"
frame_dump=$top/build/selftests/wire/frame_dump
if [ -x "$frame_dump" ]; then
	"$frame_dump" seeds "$work/seeds" || { echo "# frame_dump seeds failed"; exit 1; }
fi
fuzz_run fuzz_xdp "$fuzzer" "$work" "$secs" 0 \
	-rss_limit_mb=1024 -timeout=10 -max_len=9100

# The replay alone must have taken every way through the program (its
# counters, summed over the regression inputs); a ...=0 is a way the
# committed inputs lost.
outcomes=$(grep -o 'fuzz_xdp: outcomes:.*' "$work/replay.log")
echo "# replay: ${outcomes#fuzz_xdp: }"
missing=$(echo "$outcomes" | tr ' ' '\n' | grep '=0$' | grep -v '^bad_icrc=')
if [ -z "$outcomes" ] || [ -n "$missing" ]; then
	echo "# the regression inputs no longer reach: ${missing:-(no outcomes line)}"
	exit 1
fi
exit 0
