#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tools/scripts/ktap-summary, the line CI reads, on KTAP whose verdict is
# known: passes, failures, plans never met, skips of a program and of a
# case (listed with their reasons; under CI=true a failure unless
# selftests/skips.allowed names them), expected failures (listed), and
# under a failed program what it said of its failure. Nested KTAP; exit 0 pass, 1 fail.
here=$(cd "$(dirname "$0")" && pwd -P)
sum=$here/../../tools/scripts/ktap-summary
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0 failed=0

# case NAME CI WANT_RC WANT_LINE [GREP...]: summarise $work/in.ktap
case_() {
	local name=$1 ci=$2 want_rc=$3 want=$4 rc=0 out g
	shift 4
	out=$(CI=$ci "$sum" "$work/in.ktap" 2>&1) || rc=$?
	n=$((n + 1))
	local why=
	[ "$rc" = "$want_rc" ] || why="exit $rc, want $want_rc"
	[ "$(tail -n1 <<<"$out")" = "$want" ] || why="${why:+$why; }closing line '$(tail -n1 <<<"$out")', want '$want'"
	for g in "$@"; do
		grep -qF -- "$g" <<<"$out" || why="${why:+$why; }no line with '$g'"
	done
	if [ -n "$why" ]; then
		echo "# $why"
		sed 's/^/#   /' <<<"$out"
		echo "not ok $n $name"
		failed=1
	else
		echo "ok $n $name"
	fi
}

ktap() { printf '%s\n' "TAP version 13" "$@" >"$work/in.ktap"; }

echo "TAP version 13"
echo "1..13"

ktap 1..2 "# selftests: wire: a" "ok 1 selftests: wire: a" "# selftests: wire: b" "ok 2 selftests: wire: b"
case_ all_pass true 0 "selftests: 2 passed, 0 failed, 0 skipped"

ktap 1..2 "# selftests: wire: a" "ok 1 selftests: wire: a" "# selftests: wire: b" \
	"# b: FAIL: wrong" "not ok 2 selftests: wire: b # exit=1"
case_ one_fails "" 1 "selftests: 1 passed, 1 failed, 0 skipped" "selftests: wire: b # exit=1"

ktap 1..3 "# selftests: wire: a" "ok 1 selftests: wire: a"
case_ never_reported "" 1 "selftests: 1 passed, 2 failed, 0 skipped" "2 planned test(s) never reported"

skipped_program() {
	ktap 1..2 "# selftests: vm: a" "# a: SKIP: qemu-system-x86_64 missing" \
		"ok 1 selftests: vm: a # SKIP" "# selftests: vm: b" "ok 2 selftests: vm: b"
}
skipped_program
case_ program_skip "" 0 "selftests: 1 passed, 0 failed, 1 skipped" \
	"vm: a: qemu-system-x86_64 missing  (not in selftests/skips.allowed)"
case_ program_skip_ci true 1 "selftests: 1 passed, 1 failed, 0 skipped" \
	"selftests: vm: a: skipped: qemu-system-x86_64 missing"

nested() {	# nested REASON: engine: loopback_test with one case skipped
	ktap 1..1 "# selftests: engine: loopback_test" "# TAP version 13" "# 1..2" \
		"# #  RUN           loop.one_engine.x ..." "# #      SKIP      $1" \
		"# #            OK  loop.one_engine.x" "# ok 1 # SKIP $1" "# ok 2 loop.y" \
		"ok 1 selftests: engine: loopback_test"
}
nested "one engine"
case_ listed_case_skip_ci true 0 "selftests: 1 passed, 0 failed, 0 skipped" \
	"skips (1):" "engine: loopback_test: one engine"
nested "needs root"
case_ unlisted_case_skip "" 0 "selftests: 1 passed, 0 failed, 0 skipped" \
	"engine: loopback_test: needs root  (not in selftests/skips.allowed)"
case_ unlisted_case_skip_ci true 1 "selftests: 0 passed, 1 failed, 0 skipped" \
	"selftests: engine: loopback_test: a case skipped, not on the list"

ktap 1..1 "# selftests: vm: interop" "# interop: ok: x" \
	"# ok 3 send_lat on 6.12 # XFAIL rxe to rxe stalls too (control run)" \
	"ok 1 selftests: vm: interop"
case_ xfail_listed true 0 "selftests: 1 passed, 0 failed, 0 skipped" \
	"expected failures, the peer's (1):" "vm: interop: send_lat on 6.12 # XFAIL rxe to rxe stalls too"

ktap 1..1 "# selftests: vm: kmod_interop" "# kmod_interop: ok: x" \
	"#     kmod_interop: FAIL: kill: roxed is gone" "# kmod_interop: ok: y" \
	"# # not ok 2 case_b" "not ok 1 selftests: vm: kmod_interop # exit=1"
case_ failure_says_why true 1 "selftests: 0 passed, 1 failed, 0 skipped" \
	"selftests: vm: kmod_interop # exit=1" "      kmod_interop: FAIL: kill: roxed is gone" \
	"      # not ok 2 case_b"

ktap 1..1 "# selftests: vm: ucx_mpi" "# ucx_mpi: ok: x" \
	"# ucx_mpi: XFAIL: UD rxe0->roxe0: timeout (control rxe1->rxe2: timeout)" \
	"ok 1 selftests: vm: ucx_mpi"
case_ vm_xfail_line true 0 "selftests: 1 passed, 0 failed, 0 skipped" \
	"expected failures, the peer's (1):" "selftests: vm: ucx_mpi: UD rxe0->roxe0: timeout"

# the allowed list itself: every entry names a target of the suite
bad=
while read -r line; do
	case "$line" in '' | '#'*) continue ;; esac
	t=${line%%:*}
	[ -f "$here/../$t/Makefile" ] || bad="$bad '$line'"
done <"$here/../skips.allowed"
n=$((n + 1))
if [ -z "$bad" ]; then echo "ok $n allowed_skips_name_targets"; else
	echo "# entries naming no target:$bad"; echo "not ok $n allowed_skips_name_targets"; failed=1; fi

ktap 1..0
case_ empty_plan "" 1 "selftests: 0 passed, 0 failed, 0 skipped"
exit $failed
