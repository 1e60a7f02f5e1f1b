#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# roxe-pcap on captures whose contents are known (pcap_gen writes each
# capture and the output roxe-pcap must print for it): Ethernet, Linux
# cooked v1 and v2, pcapng, standard input, damaged and foreign files; then,
# as root, real tcpdump captures of frames sent over loopback in a private
# network namespace. Nested KTAP; exit 0 pass, 1 fail.
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$here/../.." && pwd -P)
out=${OUTPUT:-$top/build/selftests/wire}
pcap=$top/build/bin/roxe-pcap
work=$out/roxe_pcap_test.work
n=0 failed=0

result() {	# result 0|1 NAME [WHY...]: one KTAP line
	local rc=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$rc" -eq 0 ]; then
		echo "ok $n $name"
	else
		for why in "$@"; do echo "# $why"; done
		echo "not ok $n $name"
		failed=1
	fi
}


# expect NAME WANT_RC EXPECTED_FILE roxe-pcap ARGS...: stdout exactly as
# expected and the exit code
expect() {
	local name=$1 want_rc=$2 want=$3 rc
	shift 3
	"$pcap" "$@" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	if [ $rc -ne "$want_rc" ]; then
		result 1 "$name" "exit $rc, want $want_rc" "$(head -c 2000 "$work/$name.err")"
	elif ! diff -u "$want" "$work/$name.out" >"$work/$name.diff"; then
		result 1 "$name" "output differs from $want:" "$(head -n 40 "$work/$name.diff")"
	else
		result 0 "$name"
	fi
}

# fails NAME WANT_RC STDERR_PATTERN roxe-pcap ARGS...: an error, said on stderr
fails() {
	local name=$1 want_rc=$2 pattern=$3 rc
	shift 3
	"$pcap" "$@" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	if [ $rc -ne "$want_rc" ]; then
		result 1 "$name" "exit $rc, want $want_rc"
	elif ! grep -q -- "$pattern" "$work/$name.err"; then
		result 1 "$name" "stderr lacks \"$pattern\":" "$(cat "$work/$name.err")"
	else
		result 0 "$name"
	fi
}

if [ ! -x "$pcap" ] || [ ! -x "$out/pcap_gen" ]; then
	echo "# roxe-pcap or pcap_gen is not built ($pcap, $out/pcap_gen)"
	exit 1
fi
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
for kind in good mixed sll sll2 raw; do
	"$out/pcap_gen" $kind $kind.pcap $kind.want || exit 1
done
echo "1..25"

# --- usage and errors ------------------------------------------------------
"$pcap" --help >help.out 2>help.err
rc=$?
missing=
for section in NAME SYNOPSIS DESCRIPTION OUTPUT "EXIT STATUS" EXAMPLES "tcpdump -i" "verify \[-q\] \[--json\] FILE"; do
	grep -q "$section" help.out || missing="$missing \"$section\""
done
"$pcap" -h | cmp -s - help.out
result $((rc || $? || ${#missing})) help "exit $rc, missing:$missing"

fails no_command 2 Usage
fails unknown_command 2 "unknown command" check good.pcap
fails no_file 2 "no capture file" verify
fails two_files 2 "one capture file" verify good.pcap mixed.pcap
fails missing_file 2 "does-not-exist.pcap: No such file or directory" verify does-not-exist.pcap
echo "not a capture" >text.pcap
fails not_a_capture 2 "not a pcap or pcapng capture" verify text.pcap
fails unsupported_link_type 2 "unsupported link type RAW" verify raw.pcap

# --- captures with known contents ------------------------------------------
expect all_good 0 good.want verify good.pcap
tail -n 1 good.want >good-q.want
expect all_good_quiet 0 good-q.want verify -q good.pcap
expect mixed 1 mixed.want verify mixed.pcap
grep -v " icrc ok$" mixed.want >mixed-q.want
expect mixed_quiet 1 mixed-q.want verify -q mixed.pcap
sed 's/^mixed\.pcap:/sll.pcap:/' mixed.want >sll-mixed.want
cmp -s sll.want sll-mixed.want
result $? "generator_cooked_same_frames" "pcap_gen wrote different frames for sll and mixed"
expect linux_sll 1 sll.want verify sll.pcap
expect linux_sll2 1 sll2.want verify sll2.pcap

if command -v python3 >/dev/null; then
	python3 "$here/pcap_to_pcapng.py" mixed.pcap mixed.pcapng &&
		python3 "$here/pcap_to_pcapng.py" sll2.pcap sll2.pcapng || exit 1
	sed 's/^mixed\.pcap:/mixed.pcapng:/' mixed.want >mixed-ng.want
	expect pcapng 1 mixed-ng.want verify mixed.pcapng
	sed 's/^sll2\.pcap:/sll2.pcapng:/' sll2.want >sll2-ng.want
	expect pcapng_linux_sll2 1 sll2-ng.want verify sll2.pcapng
else
	result 1 pcapng "missing: python3"
	result 1 pcapng_linux_sll2 "missing: python3"
fi

# --json: the same frames, results and counts as the text, in one document.
# json_same NAME WANT_RC WANT_FILE roxe-pcap ARGS...
json_same() {
	local name=$1 want_rc=$2 want=$3 rc got text
	shift 3
	"$pcap" "$@" >"$work/$name.out" 2>"$work/$name.err"
	rc=$?
	# "N ... icrc ok|icrc BAD (...)|truncated (...)" or "N malformed ..."
	text=$(sed '$d' "$want" | awk '
		/ icrc ok$/ { print $1, "icrc ok"; next }
		/ icrc BAD / { print $1, "icrc bad"; next }
		$2 == "malformed" { print $1, "malformed"; next }
		{ print $1, "truncated" }'
		tail -n 1 "$want" | sed -E 's/^.*: ([0-9]+) frames, ([0-9]+) roce, ([0-9]+) icrc ok, ([0-9]+) icrc bad, ([0-9]+) malformed, ([0-9]+) non-roce skipped$/\1 \2 \3 \4 \5 \6/')
	got=$(jq -r -s 'if length != 1 then "not one document" else .[0] |
		(.checked[] | "\(.frame) \(.result)"),
		"\(.frames) \(.roce) \(.icrc_ok) \(.icrc_bad) \(.malformed) \(.skipped)" end' \
		"$work/$name.out" 2>&1)
	if [ $rc -ne "$want_rc" ]; then
		result 1 "$name" "exit $rc, want $want_rc" "$(head -c 2000 "$work/$name.err")"
	elif [ "$got" != "$text" ]; then
		result 1 "$name" "JSON differs from $want:" "$(diff <(echo "$text") <(echo "$got") | head -n 20)"
	else
		result 0 "$name"
	fi
}
if command -v jq >/dev/null; then
	json_same json_mixed 1 mixed.want verify --json mixed.pcap
	json_same json_mixed_quiet 1 mixed-q.want verify -q --json mixed.pcap
else
	result 1 json_mixed "missing: jq"
	result 1 json_mixed_quiet "missing: jq"
fi

sed 's/^good\.pcap:/-:/' good.want >stdin.want
expect stdin 0 stdin.want verify - <good.pcap

# Cut inside the last record: what was read is reported, then the damage.
head -c $(($(stat -c %s good.pcap) - 10)) good.pcap >cut.pcap
fails damaged 2 "cut.pcap: damaged after" verify cut.pcap
grep -q "^cut.pcap: .* frames" damaged.out
result $? damaged_summary "no summary for the frames before the damage"

# --- real captures: tcpdump on loopback, in a namespace of our own -----------
# Frames from roxe's builder (IPv4, IPv6, VLAN, IPv4 options) sent through a
# packet socket on lo; libpcap writes Ethernet for "-i lo", cooked headers
# for "-i any". Every frame must come back once, with a good ICRC.
live() {	# live NAME TCPDUMP_ARGS...
	local name=$1 sent summary
	shift
	rm -f "$name.pcap"
	unshare -n bash -c '
		ip link set lo up || exit 1
		tcpdump "$@" --immediate-mode -U -s 9216 -B 16384 -w "$0.pcap" 2>"$0.tcpdump" &
		pid=$!
		for i in $(seq 100); do
			grep -q "listening on" "$0.tcpdump" && break
			sleep 0.05
		done
		python3 "'"$here"'/send_frames.py" lo <live.hex >"$0.sent"
		. "'"$top"'/selftests/vm/vm_lib.sh"	# tcpdump_stop
		tcpdump_stop $pid "$0.tcpdump" "$(cat "$0.sent")"
	' "$name" "$@" >/dev/null 2>&1
	sent=$(cat "$name.sent" 2>/dev/null)
	"$pcap" verify "$name.pcap" >"$name.out" 2>"$name.err"
	rc=$?
	summary=$(tail -n 1 "$name.out")
	if [ -z "$sent" ] || [ "$sent" -lt 100 ]; then
		result 1 "$name" "sent ${sent:-no} frames" "$(cat "$name.tcpdump")"
	elif [ $rc -ne 0 ] || ! echo "$summary" | grep -q " $sent roce, $sent icrc ok, 0 icrc bad, 0 malformed"; then
		result 1 "$name" "sent $sent frames, exit $rc: $summary" \
			"$(grep -v "icrc ok" "$name.out" | head -n 20)" "$(cat "$name.err")"
	else
		echo "# $summary"
		result 0 "$name"
	fi
}

why=
[ "$(id -u)" -eq 0 ] || why="not root"
for tool in unshare tcpdump python3 ip; do
	command -v $tool >/dev/null || why="$tool is missing"
done
if [ -z "$why" ]; then
	"$out/frame_dump" hex | awk 'NR % 4 == 1' >live.hex
	live live_lo_en10mb -i lo
	live live_any_sll -i any -y LINUX_SLL
	live live_any_sll2 -i any -y LINUX_SLL2
else
	for name in live_lo_en10mb live_any_sll live_any_sll2; do
		result 1 $name "missing: $why"
	done
fi

exit $failed
