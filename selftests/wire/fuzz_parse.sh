#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz roxe_parse, the header readers and the ICRC for a bounded time from
# a corpus of valid frames of every opcode; any crash, sanitizer report or
# broken property fails. The corpus and any crash input stay in build/.
here=$(dirname "$(readlink -f "$0")")
out=${OUTPUT:-$here/../../build/selftests/wire}
secs=${FUZZ_SECONDS:-20}
fuzzer=$out/fuzz_parse
work=$out/fuzz_parse.work
# kselftest runs a copy of this script from $OUTPUT, with $TOP set.
. "${TOP:-$here/../..}/selftests/fuzz_lib.sh"

fuzz_prepare "$fuzzer" "$work"
"$out/frame_dump" seeds "$work/seeds" || { echo "# frame_dump seeds failed"; exit 1; }
nseeds=$(ls "$work/seeds" | wc -l)
echo "# $nseeds seed frames, fuzzing for ${secs}s"
fuzz_run fuzz_parse "$fuzzer" "$work" "$secs" "$nseeds" \
	-rss_limit_mb=1024 -timeout=10 -max_len=9100
