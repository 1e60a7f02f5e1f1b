#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Congestion control end to end (#21): two RC senders (roxe-perf, two QPs)
# through a congested port (faultwire --rate 200mbit, marks above 32 KiB,
# drops above 256 KiB) to one receiver, with congestion control on, then
# off (tools/scripts/bench-cc.sh, 3 s each). With it on, the port marks
# roxe's ECT(0) frames, the receiver answers with CNPs, DCQCN cuts the
# senders' rates; with it off, the port overflows, CNPs still arrive and
# no rate is cut.
#
# It needs the whole chain: ECT(0) on roxe's frames, CNPs sent on CE and
# counted (cnp_received in roxe_qp_stats), and the reaction (dcqcn.c,
# roxe_dcqcn_qp_cnp called for each valid CNP, counting each cut in
# cc_rate_cuts).
#
# Every check is a count of events, read once the runs are over (the QPs'
# final counters, faultwire's totals), none a sample or a rate: a cut that
# recovered within milliseconds counts as much as one that lasted. Whether
# CC on drops fewer frames than CC off is not checked here: that compares
# two timed runs, and a loaded host can starve the CC-off senders to
# little more than the port's rate (few drops) while the CC-on run's
# reaction lags (more). dcqcn_test's two_senders_share_a_marking_port
# checks it on a virtual clock; here the drops are only reported.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"

ksft_need_root
command -v jq >/dev/null || { log "FAIL: missing: jq (tools/scripts/install-deps.sh)"; exit $KSFT_FAIL; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ROXE_BENCH_CC_SECONDS=3 "$top/tools/scripts/bench-cc.sh" "$out" 2>&1 | sed 's/^/# /'
sed 's/^/# /' "$out/cc-summary.tsv" "$out/cc-qps.tsv"
row() { awk -F '\t' -v m="$1" '$1 == m' "$out/cc-summary.tsv"; }
IFS=$'\t' read -r _ on_a on_b _ on_marked on_drops on_cnps on_cuts < <(row on)
IFS=$'\t' read -r _ off_a off_b _ off_marked off_drops off_cnps off_cuts < <(row off)
[ -n "${on_cuts:-}" ] && [ -n "${off_cuts:-}" ] || fail "no results from bench-cc.sh"
log "cc on: $on_a + $on_b Mbit/s, marked $on_marked, dropped $on_drops, CNPs $on_cnps, \
rate cuts $on_cuts; cc off: $off_a + $off_b Mbit/s, marked $off_marked, dropped $off_drops, \
CNPs $off_cnps, rate cuts $off_cuts"
[ "$on_marked" -gt 0 ] || fail "the port marked nothing: are roxe's frames ECT(0)?"
[ "$on_cnps" -gt 0 ] || fail "marks but no CNP received"
[ "$on_cuts" -gt 0 ] || fail "CNPs but DCQCN never lowered a sender's rate (cc_rate_cuts)"
# each cut is a CNP's: never more cuts than CNPs on any QP
over=$(awk -F '\t' '!/^#/ && $5 > $4 { print $1 " QP " $2 ": " $5 " cuts, " $4 " CNPs" }' \
	"$out/cc-qps.tsv")
[ -z "$over" ] || fail "more rate cuts than CNPs: $over"
[ "$off_drops" -gt 0 ] || fail "cc off: the queue never overflowed"
# the queue passed the mark on its way to the limit: CNPs came with cc off
# too, and none of them may cut
[ "$off_cnps" -gt 0 ] || fail "cc off: the port overflowed but no CNP came back"
[ "$off_cuts" -eq 0 ] || fail "cc off: $off_cuts rate cuts"
log "PASS"
