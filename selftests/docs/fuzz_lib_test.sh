#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# selftests/fuzz_lib.sh's count of new inputs, against a stand-in for a
# libFuzzer target that behaves as fuzz_kserve did on a loaded machine:
# it replays each seed and corpus file twice (871 runs for 386 files),
# and its timed pass falls short of FUZZ_MIN_NEW new inputs. fuzz_run
# must then fuzz on by count until the minimum is reached; with -runs
# taken as one run a file, every further pass ended inside the replay
# and the test failed ("the fuzzer ran only 999 new inputs").
# Exit: 0 pass, 1 fail (kselftest).
set -euo pipefail

top=$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The stand-in: -max_total_time=S gives 300 new inputs, -runs=N runs up to
# N counting the replay; the replay is 2 runs a file plus the empty input.
cat >"$tmp/fuzzer" <<'FAKE'
#!/usr/bin/env bash
runs= timed=
files=0
for a in "$@"; do
	case $a in
	-runs=*) runs=${a#-runs=} ;;
	-max_total_time=*) timed=1 ;;
	-*) ;;
	*) [ -d "$a" ] && files=$((files + $(find "$a" -maxdepth 1 -type f | wc -l))) ;;
	esac
done
inited=$((2 * files + 1))
if [ -n "$timed" ]; then
	total=$((inited + 300))
else
	total=$runs
	[ "$total" -ge "$inited" ] || total=$inited
fi
echo "#$inited	INITED cov: 1 ft: 1 corp: $files/1Kb exec/s: 1 rss: 1Mb"
echo "#$total	DONE   cov: 1 ft: 1 corp: $files/1Kb exec/s: 1 rss: 1Mb"
echo "Done $total runs in 1 second(s)"
echo "stat::number_of_executed_units: $total"
FAKE
chmod +x "$tmp/fuzzer"

fail=0
out=$(
	. "$top/selftests/fuzz_lib.sh"
	fuzz_prepare "$tmp/fuzzer" "$tmp/work" >/dev/null
	for i in $(seq 1 400); do echo "$i" >"$tmp/work/corpus/c$i"; done
	echo seed >"$tmp/work/seeds/s1"
	FUZZ_MIN_NEW=1000 fuzz_run fake "$tmp/fuzzer" "$tmp/work" 1 3 2>&1
) || fail=1
echo "$out" | grep -v '^# #' | sed 's/^/# /'
if [ $fail = 0 ] && grep -q '^# [0-9]* inputs ([0-9]* new), no failure$' <<<"$out"; then
	new=$(echo "$out" | sed -n 's/^# [0-9]* inputs (\([0-9]*\) new), no failure$/\1/p')
	if [ "$new" -ge 1000 ]; then
		echo "ok 1 fuzz_run reaches FUZZ_MIN_NEW by count after a short timed pass ($new new)"
		exit 0
	fi
fi
echo "not ok 1 fuzz_run did not reach FUZZ_MIN_NEW after a short timed pass"
exit 1
