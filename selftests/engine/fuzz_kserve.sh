#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz roxed's command handler (fuzz_kserve.c: the module's commands, most
# built field by field, some raw, in batches between engine turns) for a
# bounded time; any crash, sanitizer report, leak, hang (-timeout) or
# broken property fails. The corpus and any crash input stay in build/.
here=$(dirname "$(readlink -f "$0")")
out=${OUTPUT:-$here/../../build/selftests/engine}
secs=${FUZZ_SECONDS:-30}
fuzzer=$out/fuzz_kserve
work=$out/fuzz_kserve.work
# kselftest runs a copy of this script from $OUTPUT, with $TOP set.
. "${TOP:-$here/../..}/selftests/fuzz_lib.sh"

fuzz_prepare "$fuzzer" "$work"
# Seeds: a CQ, a QP on it, to RTS-ish, destroyed; an MR registered and
# deregistered; a window, an AH and a multicast attach.
printf '\004\001\000\001\002\000\002\000\001\002\000\001\000\003\001\000\000\000\000\000\001\002\000\011' >"$work/seeds/cq_qp"
printf '\002\004\000\003\000\001\000\000\000\001\000\000\004\000\001\000\013\003\003' >"$work/seeds/mr"
printf '\003\007\002\005\003\001\005\001\002\006\001\021\003\002' >"$work/seeds/mw_ah_mcast"
echo "# fuzzing for ${secs}s"
fuzz_run fuzz_kserve "$fuzzer" "$work" "$secs" 3 \
	-rss_limit_mb=2048 -timeout=20 -max_len=2048 -len_control=0
