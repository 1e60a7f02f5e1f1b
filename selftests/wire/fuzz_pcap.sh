#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz roxe-pcap's reader (fuzz_pcap.c: captures read from memory, each
# record in a copy of its exact length) for a bounded time, from the
# committed small captures (fuzz_pcap.regress/: every link type, pcapng,
# truncation, damage) and pcap_gen's; any crash, sanitizer report, hang or
# miscount fails. The corpus and any crash input stay in build/.
here=$(dirname "$(readlink -f "$0")")
out=${OUTPUT:-$here/../../build/selftests/wire}
secs=${FUZZ_SECONDS:-20}
fuzzer=$out/fuzz_pcap
work=$out/fuzz_pcap.work
top=${TOP:-$here/../..}
# kselftest runs a copy of this script from $OUTPUT, with $TOP set.
. "$top/selftests/fuzz_lib.sh"

fuzz_prepare "$fuzzer" "$work"
for kind in good mixed sll sll2 raw; do
	"$out/pcap_gen" "$kind" "$work/seeds/$kind.pcap" /dev/null ||
		{ echo "# pcap_gen $kind failed"; exit 1; }
done
for kind in good sll2; do
	python3 "$top/selftests/wire/pcap_to_pcapng.py" "$work/seeds/$kind.pcap" \
		"$work/seeds/$kind.pcapng" || { echo "# pcap_to_pcapng.py failed"; exit 1; }
done
fuzz_run fuzz_pcap "$fuzzer" "$work" "$secs" 0 \
	-rss_limit_mb=1024 -timeout=10 -max_len=16384
