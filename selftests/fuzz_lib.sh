# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The libFuzzer runs' common part, sourced by selftests/*/fuzz_*.sh: a
# fresh work directory, a bounded run, its statistics, and the verdict
# (a crash, a sanitizer report, a hang or too few inputs fails).

# fuzz_prepare FUZZER WORK: skip (exit 4) when FUZZER is not built; else an
# empty WORK with seeds/, corpus/ and crashes/. The inputs that once failed
# (selftests/*/NAME.regress/, each named for what it found) are seeds: the
# fuzzer runs every one of them first, every time.
fuzz_prepare()
{
	local regress

	if [ ! -x "$1" ]; then
		echo "# SKIP: $1 not built: clang's libFuzzer is missing" \
		     "(apt-get install libclang-rt-14-dev)"
		exit 4
	fi
	rm -rf "$2"
	mkdir -p "$2/seeds" "$2/corpus" "$2/crashes"
	for regress in "${TOP:-$(dirname "${BASH_SOURCE[0]}")/..}"/selftests/*/"$(basename "$1")".regress/*; do
		[ -f "$regress" ] && cp "$regress" "$2/seeds/regress-$(basename "$regress")"
	done
	return 0
}

# fuzz_run NAME FUZZER WORK SECS MIN_RUNS [libFuzzer options]: fuzz for SECS
# from WORK/seeds into WORK/corpus and exit: 0 when it ran more than
# MIN_RUNS inputs with no crash, 1 otherwise (with the end of its log).
fuzz_run()
{
	local name=$1 fuzzer=$2 work=$3 secs=$4 min=$5 rc runs

	shift 5
	"$fuzzer" -max_total_time="$secs" "$@" -print_final_stats=1 \
		-artifact_prefix="$work/crashes/" "$work/corpus" "$work/seeds" \
		>"$work/log" 2>&1
	rc=$?
	grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^Done|stat::number_of_executed_units|stat::peak_rss_mb" \
		"$work/log" | sed 's/^/# /'
	if [ $rc -ne 0 ] || [ -n "$(ls "$work/crashes")" ]; then
		echo "# $name failed (exit $rc); the end of its log:"
		tail -n 40 "$work/log" | sed 's/^/# /'
		echo "# inputs that crashed: $(ls "$work/crashes" | tr '\n' ' ')"
		exit 1
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	if [ -z "$runs" ] || [ "$runs" -le "$min" ]; then
		echo "# the fuzzer ran only ${runs:-no} inputs"
		exit 1
	fi
	echo "# $runs inputs, no crash"
	exit 0
}
