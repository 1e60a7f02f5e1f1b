#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Frames sent by the Linux kernel's own RoCE v2 (rxe), captured by the VM
# harness (tools/vm) as build/vm/rxe-*.pcap: the judge of roxe's parser and
# ICRC. Every RoCE v2 frame in them must parse and carry the ICRC roxe
# computes. Fails when there are no captures (make check runs the vm target,
# whose rxe_capture.sh makes them, before this one), or no RoCE frames in
# them.
# ROXE_RXE_CAPTURES (a list of files) overrides where to look.
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
pcap=$top/build/bin/roxe-pcap

shopt -s nullglob
if [ -n "${ROXE_RXE_CAPTURES:-}" ]; then
	read -r -a caps <<<"$ROXE_RXE_CAPTURES"
else
	caps=("$top"/build/vm/rxe-*.pcap)
fi
if [ ${#caps[@]} -eq 0 ]; then
	echo "# FAIL: missing: kernel rxe's captures (build/vm/rxe-*.pcap): selftests/vm/rxe_capture.sh makes them"
	exit 1
fi
if [ ! -x "$pcap" ]; then
	echo "# roxe-pcap is not built: $pcap"
	exit 1
fi

failed=0 roce=0 files=0
opcodes=$(mktemp)
trap 'rm -f "$opcodes"' EXIT
for cap in "${caps[@]}"; do
	out=$("$pcap" verify "$cap" 2>&1)
	rc=$?
	summary=$(echo "$out" | tail -n 1)
	echo "# ${summary#"$top"/}"
	if [ $rc -ne 0 ]; then
		echo "$out" | grep -v " icrc ok$" | head -n 20 | sed 's/^/#   /'
		failed=1
		continue
	fi
	files=$((files + 1))
	roce=$((roce + $(echo "$summary" | sed -n 's/.* frames, \([0-9]*\) roce,.*/\1/p')))
	echo "$out" | awk '/ icrc ok$/ { print $5 }' >>"$opcodes"
done

if [ $failed -ne 0 ]; then
	echo "# FAIL: roxe and the kernel's rxe disagree on some frame"
	exit 1
fi
if [ $roce -eq 0 ]; then
	echo "# FAIL: the captures hold no RoCE v2 frames"
	exit 1
fi
echo "# $roce rxe frames in $files captures, every ICRC good; opcodes:"
sort "$opcodes" | uniq -c | awk '{ printf "#   %5d %s\n", $1, $2 }'
exit 0
