#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# roxe-perf with many QPs over roxe's fast path (XDP + AF_XDP): 256 QPs
# with the default queue depths (they must shrink to fit one CQ), 4096 QPs
# (roxe-perf's limit) of WRITE, SEND and READ with --verify
# (every byte checked at the receiving end), and the QP counts and depths
# it refuses.
# Timings are printed, never judged (make bench's many-QP table has them).
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"
perf=$top/build/bin/roxe-perf
name=pm$$
name=${name:0:12}
a=$name-a b=$name-b

ksft_need_root
[ -x "$perf" ] || { log "FAIL: missing: $perf not built"; exit $KSFT_FAIL; }
. "$top/tools/scripts/netns.sh"
netns_up "$name" --mtu 9000 >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"; netns_down $name' EXIT

fails=0 n=0
# run "SERVER ARGS" "CLIENT ARGS": one server/client pair that must pass.
# -u 18: a 1 s resend timeout (4096 QPs queue long on a loaded machine).
run() {
	local sargs=$1 cargs=$2 src=0 crc=0 rows
	n=$((n + 1))
	# shellcheck disable=SC2086 # the options, split on purpose
	ip netns exec "$b" timeout 100 "$perf" $sargs -u 18 --netdev "$b" >"$out/server" 2>&1 &
	local server=$!
	if ! netns_wait_listen "$b" 18515; then
		log "FAIL: server \"$sargs\" did not start"; cat "$out/server"
		fails=$((fails + 1)); wait $server || true; return
	fi
	# shellcheck disable=SC2086
	ip netns exec "$a" timeout 100 "$perf" $cargs -u 18 --netdev "$a" 10.99.0.2 >"$out/client" 2>&1 ||
		crc=$?
	wait $server || src=$?
	rows=$(grep -c -E '^ [0-9]+ +[0-9]+ ' "$out/client" || true)
	if [ $crc = 0 ] && [ $src = 0 ] && [ "$rows" -gt 0 ] && grep -q "verify: 0 errors" "$out/client"; then
		log "ok: $cargs: $(grep -E '^ [0-9]+ +[0-9]+ ' "$out/client" | tail -n1 | tr -s ' \t' ' ')"
		return
	fi
	log "FAIL: client \"$cargs\" exit $crc, server \"$sargs\" exit $src, $rows rows"
	grep -v -E 'GID|address' "$out/client" | sed 's/^/#   client: /' | tail -n 6
	grep -v -E 'GID|address' "$out/server" | sed 's/^/#   server: /' | tail -n 6
	fails=$((fails + 1))
}

# 256 QPs of perftest's default depths (128 + 512) would need 163841 CQ
# entries: the defaults shrink to fit 65535.
run "write bw" "write bw -q 256 -s 64 -n 20 --verify"
# 4096 QPs: 7 sends and 8 receives each.
run "write bw" "write bw -q 4096 -s 64 -n 10 --verify"
run "send bw" "send bw -q 4096 -s 64 -n 10 --verify"
# READ at 4096 QPs: up to 7 READs per QP, 28,672 responses asked for at
# once, fit the requester's 1024-frame receive ring only because the engine
# holds its QPs to its PSN credit (user/transport/credit.c; without it the
# responses overflowed the ring at every synchronized go-back and a QP ran
# out of retries). One response per READ, then four per READ.
run "read bw" "read bw -q 4096 -s 64 -n 10 --verify"
run "read bw" "read bw -q 4096 -s 16384 -n 4 --verify"

# What does not fit is refused, with a word for the user.
for bad in "write bw -q 4097" "write bw -q 4096 -t 8 -r 8" "write bw -q 4096 -t 15"; do
	n=$((n + 1))
	rc=0
	# shellcheck disable=SC2086
	"$perf" $bad --netdev lo >"$out/usage" 2>&1 || rc=$?
	if [ $rc = 2 ] && [ -s "$out/usage" ]; then
		log "ok: roxe-perf $bad: exit 2, $(head -n1 "$out/usage")"
	else
		log "FAIL: roxe-perf $bad: exit $rc (want 2 and a message)"
		fails=$((fails + 1))
	fi
done
log "$((n - fails))/$n runs as expected"
[ $fails = 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
