#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz the served-ring path (fuzz_served.c: WQE bytes, ring header values,
# doorbells, state changes, peer traffic) for a bounded time; any crash,
# sanitizer report, hang (-timeout) or broken property fails. The corpus
# and any crash input stay in build/.
here=$(cd "$(dirname "$0")" && pwd -P)
out=${OUTPUT:-$here/../../build/selftests/engine}
secs=${FUZZ_SECONDS:-30}
fuzzer=$out/fuzz_served
work=$out/fuzz_served.work

if [ ! -x "$fuzzer" ]; then
	echo "# SKIP: $fuzzer not built: clang's libFuzzer is missing" \
	     "(apt-get install libclang-rt-14-dev)"
	exit 4
fi
rm -rf "$work"
mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
# Seeds: a plausible WQE, then turns; a header rewrite then ERR and RESET;
# peer traffic into receive slots.
printf '\001\002\000\000\000\000\000\000\000\000\006\007' >"$work/seeds/wqe"
printf '\004\000\002\377\377\377\377\007\010\006\003' >"$work/seeds/header"
printf '\002\000\000\000\000\011\000\006\005\011\002\006\005' >"$work/seeds/peer"
echo "# fuzzing for ${secs}s"
"$fuzzer" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 -max_len=4096 \
	-print_final_stats=1 -artifact_prefix="$work/crashes/" "$work/corpus" "$work/seeds" \
	>"$work/log" 2>&1
rc=$?
grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^Done|stat::number_of_executed_units|stat::peak_rss_mb" \
	"$work/log" | sed 's/^/# /'
if [ $rc -ne 0 ] || [ -n "$(ls "$work/crashes")" ]; then
	echo "# fuzz_served failed (exit $rc); the end of its log:"
	tail -n 40 "$work/log" | sed 's/^/# /'
	echo "# inputs that crashed: $(ls "$work/crashes" | tr '\n' ' ')"
	exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ -z "$runs" ] || [ "$runs" -le 3 ]; then
	echo "# the fuzzer ran only ${runs:-no} inputs"
	exit 1
fi
echo "# $runs inputs, no crash"
exit 0
