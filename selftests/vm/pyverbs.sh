#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# rdma-core's pyverbs suite (Debian 12's python3-pyverbs, 44.0: its 273
# tests under /usr/share/doc/rdma-core/tests) on roxe0 and, in the same
# boot, on kernel rxe (the control), each device alone (the tests' two ends
# are QPs of one device), issue #39:
#   rxa (10.77.9.1, rxe0)   <-- veth -->  rxb (10.77.9.2, roxe0)
# On 6.1 (pyverbs.sh), 6.12 (pyverbs-6.12.sh) and trixie-backports' 7.3
# (pyverbs-trixie-bpo.sh), where rxe has ODP and so has roxe.ko by
# default: test_odp's traffic tests must run there (not skip) and pass on
# roxe0. PYVERBS_TESTS names test modules to run instead of the whole
# suite (tests.test_odp, tests.test_cq...).
# Checks, per test, as unittest reports it:
#   - roxe0: no test fails or errors;
#   - no test rxe0 passes is skipped on roxe0 (parity), and none runs on
#     one device only;
#   - what fails on rxe0 is shown as the control's, never excused for
#     roxe0;
#   - dmesg without WARNING, BUG or Oops.
# The guest runs the packages' own python3.11 (python3.11-minimal,
# libpython3.11-stdlib and the others, unpacked under build/, never
# installed: vm_apt_unpack).
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.9.1 B=10.77.9.2
PKGS="python3-pyverbs python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11"
# the traffic tests of test_odp that rxe runs from 6.15 on
ODP_TESTS="rc_traffic rc_rdma_write rc_rdma_read rc_atomic_cmp_and_swp rc_atomic_fetch_and_add
rc_srq_traffic ud_traffic"

# ============================ guest side ==================================
KO=${ROXE_TOP:-}/build/kmod/$(uname -r)/roxe.ko
ROXED=${ROXE_TOP:-}/build/bin/roxed
fail=0

log() { echo "pyverbs: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

# runner: run_tests.py's loading, and each test's outcome as unittest
# gives it ("ID ok|skip|FAIL|ERROR|XFAIL|XPASS" lines in $RESULTS): the
# verbose output interleaves what tests print with the outcomes
runner() {
	cat <<-'PYEOF'
	import os, sys, unittest
	from importlib.machinery import SourceFileLoader
	here = os.environ['PY_TESTS']
	sys.path.insert(0, here)
	from args_parser import parser
	tests = SourceFileLoader('tests', os.path.join(here, '__init__.py')).load_module()
	parser.parse_args()
	out = open(os.environ['RESULTS'], 'w')
	class Result(unittest.TextTestResult):
	    def _note(self, test, what):
	        out.write('%s %s\n' % (test.id().replace(' ', '_'), what))
	        out.flush()
	    def addSuccess(self, test):
	        super().addSuccess(test); self._note(test, 'ok')
	    def addSkip(self, test, reason):
	        super().addSkip(test, reason); self._note(test, 'skip')
	    def addFailure(self, test, err):
	        super().addFailure(test, err); self._note(test, 'FAIL')
	    def addError(self, test, err):
	        super().addError(test, err); self._note(test, 'ERROR')
	    def addExpectedFailure(self, test, err):
	        super().addExpectedFailure(test, err); self._note(test, 'XFAIL')
	    def addUnexpectedSuccess(self, test):
	        super().addUnexpectedSuccess(test); self._note(test, 'XPASS')
	    def addSubTest(self, test, subtest, err):
	        super().addSubTest(test, subtest, err)
	        if err is not None:
	            self._note(subtest, 'FAIL')
	unittest.main(module=tests, testRunner=unittest.TextTestRunner(verbosity=2, resultclass=Result))
	PYEOF
}

# suite DEV: the tests on DEV; "ID RESULT" per test, sorted, in
# $ROXE_VM_OUT/DEV.results, the whole output in DEV.log
suite() {
	local d=$1 o=$ROXE_VM_OUT rc=0
	# shellcheck disable=SC2086 # module names
	RESULTS=$o/$d.raw timeout 300 "$PY" /tmp/pyverbs_run.py --dev "$d" $PYVERBS_TESTS \
		>"$o/$d.log" 2>&1 || rc=$?
	sort -k1,1 "$o/$d.raw" >"$o/$d.results"
	log "$d: $(wc -l <"$o/$d.results") tests: $(awk '{ n[$2]++ } END { for (r in n) printf "%s %d, ", r, n[r] }' "$o/$d.results" | sed 's/, $//'); exit $rc"
	grep -a -E '^(Ran|OK|FAILED)' "$o/$d.log" | sed 's/^/    /'
}

# both A B: "ID RESULT_A RESULT_B" for the tests both files list
both() { awk 'NR == FNR { r[$1] = $2; next } $1 in r { print $1, r[$1], $2 }' "$1" "$2"; }

guest_main() {
	local o=$ROXE_VM_OUT t r x odp=0
	vm_veth_pair rxa $A rxb $B || { bad "veth pair rxa/rxb"; return 1; }
	# ODP where the kernel has it (kmod/mr.c: why not by default). A
	# roxe.ko without the parameter loads anyway (the kernel ignores an
	# unknown one): the module's own parameter says whether it is on
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	[ "$(cat /sys/module/roxe/parameters/odp 2>/dev/null)" != Y ] || odp=1
	"$ROXED" --netdev rxb --foreground 2>>"$o/roxed.log" &
	vm_wait_for 20 vm_have_dev roxe0 && vm_wait_for 10 vm_verbs_dev roxe0 ||
		{ bad "roxed --netdev rxb registered no roxe0"; cat "$o/roxed.log"; return 1; }
	rdma link add rxe0 type rxe netdev rxa || { bad "rdma link add rxe0"; return 1; }
	vm_wait_for 10 vm_gid_index rxe0 $A && vm_wait_for 10 vm_gid_index roxe0 $B ||
		{ bad "no RoCE v2 GIDs"; return 1; }
	ok "roxe0 on rxb (roxe.ko odp=$odp), rxe0 on rxa, $(uname -r)"

	runner >/tmp/pyverbs_run.py
	suite roxe0
	suite rxe0
	[ -s "$o/roxe0.results" ] && [ -s "$o/rxe0.results" ] || { bad "no results"; return 1; }
	x=$(awk '$2 != "ok" && $2 != "skip"' "$o/roxe0.results")
	if [ -n "$x" ]; then
		bad "on roxe0, failed or in error:"
		sed 's/^/    /' <<<"$x"
		grep -a -E -A25 '^(FAIL|ERROR): ' "$o/roxe0.log" | sed -n '1,150s/^/    /p'
	else
		ok "roxe0: no test failed"
	fi
	# ok on rxe0, skipped on roxe0: what roxe0 lacks
	x=$(both "$o/rxe0.results" "$o/roxe0.results" | awk '$2 == "ok" && $3 == "skip" { print $1 }')
	if [ -n "$x" ]; then
		bad "passed on rxe0, skipped on roxe0:"
		while read -r t; do
			sed 's/^/    /' <<<"$t: $(grep -a -F "(${t})" "$o/roxe0.log" | grep -a -m 1 -o "skipped.*")"
		done <<<"$x"
	else
		ok "no test that passed on rxe0 was skipped on roxe0"
	fi
	x=$(awk '$2 != "ok" && $2 != "skip" { print "    " $0 }' "$o/rxe0.results")
	[ -z "$x" ] || log "the control (rxe0) failed, for the record (rxe's):"$'\n'"$x"
	log "skipped on both: $(both "$o/rxe0.results" "$o/roxe0.results" | awk '$2 == "skip" && $3 == "skip"' | wc -l)"
	x=$(awk 'NR == FNR { r[$1] = 1; next } !($1 in r) { print "    " $1 }' "$o/rxe0.results" "$o/roxe0.results")
	[ -z "$x" ] || { bad "run on roxe0 only, not on rxe0:"; echo "$x"; }
	if [ $odp = 1 ]; then
		for t in $ODP_TESTS; do
			r=$(awk -v n="tests.test_odp.OdpTestCase.test_odp_$t" '$1 == n { print $2 }' "$o/roxe0.results")
			[ "$r" = ok ] || bad "test_odp_$t on roxe0: ${r:-not run}, want ok (ODP)"
		done
		[ $fail = 1 ] || ok "test_odp on roxe0: $(echo $ODP_TESTS | wc -w) ODP traffic tests ok"
	fi
	vm_check_dmesg
	return $fail
}

# ============================ host side ===================================
host_missing() { echo "pyverbs: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out pk
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out pyverbs)
	vm_host_ready
	vm_need_kmod "$top"
	[ -x "$top/build/bin/roxed" ] || host_missing "build/bin/roxed missing (make)"
	pk=$top/build/vm/pyverbs-pkgs
	# shellcheck disable=SC2086 # a list of packages
	vm_apt_unpack "$pk" $PKGS || host_missing "Debian 12's $PKGS (download failed)"
	# the package's tests are compressed as documentation is
	for f in "$pk"/root/usr/share/doc/rdma-core/tests/*.py.gz; do
		[ ! -e "$f" ] || gunzip -f "$f"
	done
	vm_run_guest pyverbs "$out" 400 \
		--add "$top/build/kmod/$KVER/roxe.ko" --add "$top/build/bin/roxed" \
		--add "$top/selftests/vm/vm_lib.sh" --add "$pk/root" \
		--env "PY=$pk/root/usr/bin/python3.11" --env "PYTHONHOME=$pk/root/usr" \
		--env "PYTHONPATH=$pk/root/usr/lib/python3/dist-packages:$pk/root/usr/share/doc/rdma-core" \
		--env "LD_LIBRARY_PATH=$pk/root/usr/lib/x86_64-linux-gnu" \
		--env "PY_TESTS=$pk/root/usr/share/doc/rdma-core/tests" \
		--env "PYVERBS_TESTS=${PYVERBS_TESTS:-}"
	echo "pyverbs: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	host_main
fi
