# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The libFuzzer runs' common part, sourced by selftests/*/fuzz_*.sh: the
# work directory, the replay of the committed regression inputs, a bounded
# run that must do a least amount of work, its statistics, and the verdict
# (a crash, a sanitizer report, a hang, a regression input that fails or
# too little fuzzing fails).
#
# WORK (in build/, never committed) keeps corpus/, what earlier runs found,
# so that each run starts where the last one stopped; seeds/ and crashes/
# are made afresh. Delete WORK to start over.

# The least number of new inputs (past the seeds and the kept corpus) a
# run must execute. Measured on a loaded 2-core machine, a default-length
# run executes 4,000 (fuzz_kserve, about 140 inputs/s) to 9,500,000
# (fuzz_parse) inputs; 1,000 is under a quarter of the slowest, and not a
# speed limit: a run that falls short within its time goes on fuzzing until
# it has them (fuzz_run), so a slow machine runs longer but does not fail.
FUZZ_MIN_NEW=${FUZZ_MIN_NEW:-1000}
# The kept corpus is minimised (libFuzzer's -merge) past this many files,
# then, if still larger, cut down to it (the files are named by hash: an
# arbitrary sample), so that replaying it stays a small part of a run: 1,000
# take fuzz_kserve about 10 s, the others well under one.
FUZZ_CORPUS_MAX=${FUZZ_CORPUS_MAX:-1000}

# fuzz_prepare FUZZER WORK: fail (exit 1) when FUZZER is not built; else
# WORK with an empty seeds/ and crashes/ and the corpus/ of earlier runs.
# The inputs that once failed or that reach what matters
# (selftests/*/NAME.regress/, each named for what it is) go into seeds/ as
# regress-*: fuzz_run replays each of them alone first, then fuzzes from
# them.
fuzz_prepare()
{
	local regress

	if [ ! -x "$1" ]; then
		echo "# FAIL: missing: $1 not built: clang's libFuzzer" \
		     "(tools/scripts/install-deps.sh installs libclang-rt-14-dev)"
		exit 1
	fi
	rm -rf "$2/seeds" "$2/crashes" "$2/log" "$2/log.more" "$2/replay.log" "$2/corpus.merge"
	mkdir -p "$2/seeds" "$2/corpus" "$2/crashes"
	for regress in "${TOP:-$(dirname "${BASH_SOURCE[0]}")/..}"/selftests/*/"$(basename "$1")".regress/*; do
		[ -f "$regress" ] && cp "$regress" "$2/seeds/regress-$(basename "$regress")"
	done
	return 0
}

# fuzz_files DIR...: how many files the directories hold.
fuzz_files()
{
	find "$@" -maxdepth 1 -type f | wc -l
}

# fuzz_stat LOG: the run's numbers, "INITED TOTAL": the inputs it executed
# replaying its corpora (the seeds, the kept corpus, one empty input), and
# all it executed.
fuzz_stat()
{
	local inited total

	inited=$(sed -n 's/^#\([0-9][0-9]*\)[[:space:]][[:space:]]*INITED.*/\1/p' "$1" | tail -n 1)
	total=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -n 1)
	echo "${inited:-0} ${total:-0}"
}

# fuzz_fail NAME WORK LOG WHY: the end of LOG and the inputs that failed; exit 1.
fuzz_fail()
{
	echo "# $1 failed: $4; the end of its log:"
	tail -n 40 "$3" | sed 's/^/# /'
	[ -z "$(ls "$2/crashes")" ] ||
		echo "# inputs that failed (in $2/crashes): $(ls "$2/crashes" | tr '\n' ' ')"
	exit 1
}

# fuzz_pass LOG OPTIONS...: one run of $fuzzer over $work's corpus and seeds
# (fuzz_run's variables), its summary shown; fails the test on a crash.
fuzz_pass()
{
	local log=$1 rc
	shift
	"$fuzzer" "$@" -print_final_stats=1 -artifact_prefix="$work/crashes/" \
		"$work/corpus" "$work/seeds" >"$log" 2>&1
	rc=$?
	grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^Done|stat::number_of_executed_units|stat::peak_rss_mb" \
		"$log" | sed 's/^/# /'
	if [ $rc -ne 0 ] || [ -n "$(ls "$work/crashes")" ]; then
		fuzz_fail "$name" "$work" "$log" "exit $rc"
	fi
}

# fuzz_run NAME FUZZER WORK SECS MIN [libFuzzer options]: replay each
# regression input alone (any failure fails, naming it), then fuzz for SECS
# from WORK/seeds and WORK/corpus into WORK/corpus; past SECS, go on until
# at least MIN (or FUZZ_MIN_NEW, whichever is more) new inputs ran.
# Returns 0 when every seed and corpus input ran and enough new ones ran,
# none failing; exits 1 otherwise (with the end of its log).
fuzz_run()
{
	local name=$1 fuzzer=$2 work=$3 secs=$4 min=$5 rc files stat inited total new
	local -a regress

	shift 5
	[ "$min" -ge "$FUZZ_MIN_NEW" ] 2>/dev/null || min=$FUZZ_MIN_NEW
	regress=("$work"/seeds/regress-*)
	if [ -f "${regress[0]}" ]; then
		"$fuzzer" "$@" -artifact_prefix="$work/crashes/" "${regress[@]}" \
			>"$work/replay.log" 2>&1
		rc=$?
		if [ $rc -ne 0 ] || [ -n "$(ls "$work/crashes")" ]; then
			fuzz_fail "$name" "$work" "$work/replay.log" \
				"a regression input failed (exit $rc): $(grep -o 'Running: .*' \
				"$work/replay.log" | tail -n 1 | sed 's/^Running: //')"
		fi
		echo "# ${#regress[@]} regression inputs replayed, none failed"
	fi

	if [ "$(fuzz_files "$work/corpus")" -gt "$FUZZ_CORPUS_MAX" ]; then
		rm -rf "$work/corpus.merge" && mkdir "$work/corpus.merge"
		if "$fuzzer" "$@" -merge=1 "$work/corpus.merge" "$work/corpus" \
			>"$work/merge.log" 2>&1; then
			echo "# corpus minimised: $(fuzz_files "$work/corpus") files to" \
			     "$(fuzz_files "$work/corpus.merge")"
			rm -rf "$work/corpus" && mv "$work/corpus.merge" "$work/corpus"
		else
			fuzz_fail "$name" "$work" "$work/merge.log" "minimising the corpus failed"
		fi
		find "$work/corpus" -maxdepth 1 -type f | sort | tail -n +$((FUZZ_CORPUS_MAX + 1)) |
			xargs -r rm -f
	fi

	files=$(fuzz_files "$work/seeds" "$work/corpus")
	echo "# $(fuzz_files "$work/seeds") seeds, $(fuzz_files "$work/corpus") kept" \
	     "corpus inputs; fuzzing for ${secs}s, then to $min new inputs"
	fuzz_pass "$work/log" -max_total_time="$secs" "$@"
	stat=$(fuzz_stat "$work/log")
	inited=${stat% *} total=${stat#* }
	# INITED counts each seed and corpus input, and one empty input first.
	if [ "$inited" -lt "$files" ]; then
		fuzz_fail "$name" "$work" "$work/log" \
			"it replayed $inited of the $files seed and corpus inputs"
	fi
	new=$((total - inited))

	# Short of inputs (a slow or loaded machine): more, by count. -runs
	# counts the replay of the seeds and corpus too, which is not one run
	# a file: libFuzzer ran 871 to replay 386 files here (the files, and
	# again what it keeps). The last pass's replay count, an eighth more
	# for what the corpus gained since, stands for it; a pass that still
	# ends short leaves the next what is missing, three passes at most.
	# (It was files + 1: below the replay, such a pass ran no new input.)
	local pass
	for pass in 1 2 3; do
		[ "$new" -lt "$min" ] || break
		echo "# $new new inputs so far: fuzzing on to $min"
		fuzz_pass "$work/log.more" -runs=$((inited + inited / 8 + 16 + min - new)) "$@"
		stat=$(fuzz_stat "$work/log.more")
		inited=${stat% *}
		new=$((new + ${stat#* } - inited))
		total=$((total + ${stat#* }))
	done
	if [ "$new" -lt "$min" ]; then
		echo "# the fuzzer ran only $new new inputs, fewer than $min"
		exit 1
	fi
	echo "# $total inputs ($new new), no failure"
	return 0
}
