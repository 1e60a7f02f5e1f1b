#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxed against revocation races and /dev/roxe against the unprivileged
# (issue #15, findings 5 and 6; the capability checks of ATTACH and SERVE).
#
#   rxa (10.77.4.1, rxe0)  <-- veth -->  rxb (10.77.4.2, roxe0: roxed --netdev rxb
#                                          -E 2)
# Guest side (ROXE_VM_GUEST=1), each step a check:
#   - invalidation against access: roxe_kverbs_test.ko frwr_race=N: N rounds
#     of REG_MR and LOCAL_INV (or rxe's SEND_WITH_INV) of a fast-reg MR on
#     one engine while rxe's UC WRITEs of 64 KiB land in it on the other;
#     every round completes, rxe READs the MR afterwards, roxed lives;
#   - DEREG_MR timeout (kmod_revoke.c): roxed stopped mid-WRITE, dereg_mr
#     times out after 2 s and the module revokes the mapping, SIGCONT: roxed
#     lives on and serves a fresh connection; several rounds;
#   - the kernel log names the scrap page faults (roxed touched revoked or
#     empty MR memory), which shows the races were really run;
#   - /dev/roxe (made 0666 for the test): an unprivileged user and root
#     without CAP_NET_ADMIN get EPERM from ATTACH and SERVE; root of a user
#     namespace gets past the check for a netdev of its own network
#     namespace (EINVAL: loopback) but not for the initial one; a file that
#     is not attached gets ENOTCONN from every roxed-only operation;
#   - dmesg holds no WARNING, BUG, Oops or call trace.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.4.1 B=10.77.4.2
RACE_ROUNDS=${ROXE_RACE_ROUNDS:-100}
DEREG_ROUNDS=${ROXE_DEREG_ROUNDS:-3}

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
KVERBS_KO=${ROXE_TOP:-}/build/kmod-test/$(uname -r)/roxe_kverbs_test.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
REVOKE=${ROXE_TOP:-}/build/vm/kmod_revoke
CAPS=${ROXE_TOP:-}/build/vm/kmod_caps
fail=0

log() { echo "kmod_races: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# alive and not a zombie
roxed_alive() { [ -e "/proc/$ROXED_PID" ] && ! grep -q '^State:.*[ZX]' "/proc/$ROXED_PID/status"; }

# how roxed ended (bash's 128 + signal: 135 is SIGBUS), its last words
roxed_death() {
	local rc=0
	wait "$ROXED_PID" 2>/dev/null || rc=$?
	echo "exit status $rc$([ $rc -gt 128 ] && echo " (signal $(kill -l $((rc - 128))))");" \
		"log: $(tail -n 2 "$ROXE_VM_OUT/roxed.log" | tr '\n' ' ')"
}

# scrap page faults the kernel logged since line $1
scrap_faults() {
	dmesg | tail -n +$(($1 + 1)) | grep -c 'scrap page' || true
}

step_frwr_race() {
	local rc=0 mark t0=$SECONDS
	mark=$(dmesg | wc -l)
	insmod "$KVERBS_KO" roxe=roxe0 peer=rxe0 frwr_race="$RACE_ROUNDS" || rc=$?
	dmesg | tail -n +$((mark + 1)) >"$ROXE_VM_OUT/frwr_race.log"
	grep -a 'roxe_kverbs_test: \|roxe' "$ROXE_VM_OUT/frwr_race.log" | grep -v 'scrap page' |
		sed 's/^\[[ 0-9.]*\] //; s/^/    /' | tail -n 12
	if [ $rc = 0 ]; then
		rmmod roxe_kverbs_test
		ok "invalidation race: $RACE_ROUNDS rounds in $((SECONDS - t0)) s"
	else
		bad "invalidation race (insmod exited $rc)"
	fi
	roxed_alive && ok "roxed lives after the invalidation race ($(scrap_faults "$mark") scrap page faults logged)" ||
		bad "roxed died in the invalidation race: $(roxed_death)"
}

step_dereg_timeout() {
	local rc=0 mark out
	roxed_alive || { bad "dereg timeout: roxed is not running"; return; }
	mark=$(dmesg | wc -l)
	out=$(timeout 120 "$REVOKE" roxe0 "$GR" rxe0 "$GX" "$ROXED_PID" "$DEREG_ROUNDS" 2>&1) || rc=$?
	echo "$out" | sed 's/^/    revoke: /'
	kill -CONT "$ROXED_PID" 2>/dev/null || true
	[ $rc = 0 ] && ok "DEREG_MR timeout: $DEREG_ROUNDS rounds, $(grep -c '^ok:' <<<"$out") checks passed" ||
		bad "kmod_revoke exited $rc"
	roxed_alive && ok "roxed lives after the DEREG_MR timeouts ($(scrap_faults "$mark") scrap page faults logged)" ||
		bad "roxed died after a DEREG_MR timeout: $(roxed_death)"
}

# caps LABEL EXPECT CMD...: kmod_caps run through CMD
caps() {
	local label=$1 want=$2 out rc=0
	shift 2
	out=$("$@" 2>&1) || rc=$?
	echo "$out" | sed "s/^/    $label: /"
	[ $rc = 0 ] && ok "$label: ATTACH and SERVE $want" || bad "$label: kmod_caps exited $rc"
}

step_caps() {
	local eth
	eth=$(cat /sys/class/net/rxa/ifindex)
	chmod 0666 /dev/roxe	# reach the ioctls; the module's own check must refuse
	caps "nobody" denied setpriv --reuid=65534 --regid=65534 --clear-groups "$CAPS" "$eth" denied
	caps "root without CAP_NET_ADMIN" denied \
		setpriv --inh-caps=-all --bounding-set=-net_admin "$CAPS" "$eth" denied
	# a user namespace: root there owns a new network namespace (lo is its
	# ifindex 1) but not the initial one
	caps "userns root, own netns" allowed unshare --user --map-root-user --net "$CAPS" 1 allowed
	caps "userns root, initial netns" denied unshare --user --map-root-user "$CAPS" "$eth" denied
	chmod 0600 /dev/roxe
}

guest_main() {
	local t0=$SECONDS
	: >"$ROXE_VM_OUT/roxed.log"
	dmesg -c >/dev/null
	vm_rxe_roxe_pair $A $B 2 -E 2 || { log "setup failed"; exit 1; }
	[ "$RACE_ROUNDS" = 0 ] || step_frwr_race
	step_dereg_timeout
	step_caps
	roxed_alive || bad "roxed is gone at the end"
	vm_check_dmesg
	log "roxed log (last lines):"
	tail -n 6 "$ROXE_VM_OUT/roxed.log" | sed 's/^/    /'
	log "guest part took $((SECONDS - t0)) s"
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "kmod_races: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out kmod-races)
	vm_host_ready
	vm_need_kmod "$top" build/kmod-test/$KVER/roxe_kverbs_test.ko
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	vm_build_prog kmod_races "$top" kmod_revoke
	vm_build_prog kmod_races "$top" kmod_caps
	vm_run_guest kmod_races "$out" 280 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/build/kmod-test/$KVER/roxe_kverbs_test.ko" \
		--add "$top/build/vm/kmod_revoke" --add "$top/build/vm/kmod_caps" \
		--add /usr/bin/setpriv --add /usr/bin/unshare \
		--add "$top/selftests/vm/vm_lib.sh" \
		--env "ROXE_RACE_ROUNDS=$RACE_ROUNDS" --env "ROXE_DEREG_ROUNDS=$DEREG_ROUNDS"
	echo "kmod_races: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
