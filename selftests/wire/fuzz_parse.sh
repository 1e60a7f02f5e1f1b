#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz roxe_parse, the header readers and the ICRC for a bounded time from
# a corpus of valid frames of every opcode; any crash, sanitizer report or
# broken property fails. The corpus and any crash input stay in build/.
here=$(cd "$(dirname "$0")" && pwd -P)
out=${OUTPUT:-$here/../../build/selftests/wire}
secs=${FUZZ_SECONDS:-20}
fuzzer=$out/fuzz_parse
work=$out/fuzz_parse.work

if [ ! -x "$fuzzer" ]; then
	echo "# SKIP: $fuzzer not built: clang's libFuzzer is missing" \
	     "(apt-get install libclang-rt-14-dev)"
	exit 4
fi
rm -rf "$work"
mkdir -p "$work/seeds" "$work/corpus" "$work/crashes"
"$out/frame_dump" seeds "$work/seeds" || { echo "# frame_dump seeds failed"; exit 1; }
nseeds=$(ls "$work/seeds" | wc -l)
echo "# $nseeds seed frames, fuzzing for ${secs}s"

"$fuzzer" -max_total_time="$secs" -rss_limit_mb=1024 -timeout=10 \
	-max_len=9100 -print_final_stats=1 \
	-artifact_prefix="$work/crashes/" "$work/corpus" "$work/seeds" \
	>"$work/log" 2>&1
rc=$?
grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^Done|stat::number_of_executed_units|stat::peak_rss_mb" \
	"$work/log" | sed 's/^/# /'
if [ $rc -ne 0 ] || [ -n "$(ls "$work/crashes")" ]; then
	echo "# fuzz_parse failed (exit $rc); the end of its log:"
	tail -n 40 "$work/log" | sed 's/^/# /'
	echo "# inputs that crashed: $(ls "$work/crashes" | tr '\n' ' ')"
	exit 1
fi
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
if [ -z "$runs" ] || [ "$runs" -le "$nseeds" ]; then
	echo "# the fuzzer ran only ${runs:-no} inputs"
	exit 1
fi
echo "# $runs inputs, no crash"
exit 0
