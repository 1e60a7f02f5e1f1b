#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz the served-ring path (fuzz_served.c: WQE bytes, ring header values,
# doorbells, state changes, peer traffic) for a bounded time; any crash,
# sanitizer report, hang (-timeout) or broken property fails. The corpus
# and any crash input stay in build/.
here=$(dirname "$(readlink -f "$0")")
out=${OUTPUT:-$here/../../build/selftests/engine}
secs=${FUZZ_SECONDS:-30}
fuzzer=$out/fuzz_served
work=$out/fuzz_served.work
# kselftest runs a copy of this script from $OUTPUT, with $TOP set.
. "${TOP:-$here/../..}/selftests/fuzz_lib.sh"

fuzz_prepare "$fuzzer" "$work"
# Seeds: a plausible WQE, then turns; a header rewrite then ERR and RESET;
# peer traffic into receive slots.
printf '\001\002\000\000\000\000\000\000\000\000\006\007' >"$work/seeds/wqe"
printf '\004\000\002\377\377\377\377\007\010\006\003' >"$work/seeds/header"
printf '\002\000\000\000\000\011\000\006\005\011\002\006\005' >"$work/seeds/peer"
echo "# fuzzing for ${secs}s"
fuzz_run fuzz_served "$fuzzer" "$work" "$secs" 3 \
	-rss_limit_mb=2048 -timeout=20 -max_len=4096
