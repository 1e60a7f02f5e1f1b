#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz what a peer can put on the wire into an RC QP (fuzz_wire.c: forged
# requests and responses around the expected PSNs, the out-of-sequence
# stash, real traffic, state changes) for a bounded time; any crash,
# sanitizer report, hang (-timeout) or broken property fails. The corpus
# and any crash input stay in build/.
here=$(dirname "$(readlink -f "$0")")
out=${OUTPUT:-$here/../../build/selftests/engine}
secs=${FUZZ_SECONDS:-30}
fuzzer=$out/fuzz_wire
work=$out/fuzz_wire.work
# kselftest runs a copy of this script from $OUTPUT, with $TOP set.
. "${TOP:-$here/../..}/selftests/fuzz_lib.sh"

fuzz_prepare "$fuzzer" "$work"
# Seeds: requests ahead of the expected PSN then the missing one; real
# traffic with a forged NAK; a reset among stashed frames.
printf '\000\004\001\005\000\000\000\000\000\002\000\012\003\000\000\000\000\007\004' >"$work/seeds/ahead"
printf '\004\001\010\000\000\003\000\000\014\000\007\002' >"$work/seeds/nak"
printf '\000\014\001\040\000\000\010\002\010\000\000\000\000\007\010' >"$work/seeds/reset"
echo "# fuzzing for ${secs}s"
fuzz_run fuzz_wire "$fuzzer" "$work" "$secs" 3 \
	-rss_limit_mb=2048 -timeout=20 -max_len=4096
