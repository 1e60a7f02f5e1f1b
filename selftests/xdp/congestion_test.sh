#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Congestion control end to end (#21): two RC senders (roxe-perf, two QPs)
# through a congested port (faultwire --rate 200mbit, marks above 32 KiB,
# drops above 256 KiB) to one receiver, with congestion control on, then
# off (tools/scripts/bench-cc.sh, 3 s each). With it on, the port marks
# roxe's ECT(0) frames, the receiver answers with CNPs, DCQCN cuts the
# senders' rates: CNPs arrive, a sender's rate was limited, and the port
# drops fewer frames than with it off, when its queue overflows.
#
# It needs the whole chain: ECT(0) on roxe's frames, CNPs sent on CE and
# counted (cnp_received in roxe_qp_stats), and the reaction (dcqcn.c,
# roxe_dcqcn_qp_cnp called for each valid CNP).
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

. "$(dirname "$(readlink -f "$0")")/ksft_lib.sh"

ksft_need_root
command -v jq >/dev/null || { log "FAIL: missing: jq (tools/scripts/install-deps.sh)"; exit $KSFT_FAIL; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ROXE_BENCH_CC_SECONDS=3 "$top/tools/scripts/bench-cc.sh" "$out" 2>&1 | sed 's/^/# /'
sed 's/^/# /' "$out/cc-summary.tsv"
row() { awk -F '\t' -v m="$1" '$1 == m' "$out/cc-summary.tsv"; }
IFS=$'\t' read -r _ on_a on_b on_jain on_marked on_drops on_cnps < <(row on)
IFS=$'\t' read -r _ off_a off_b off_jain off_marked off_drops off_cnps < <(row off)
[ -n "${on_cnps:-}" ] && [ -n "${off_drops:-}" ] || fail "no results from bench-cc.sh"
limited=$(awk -F '\t' '$1 == "on" && $5 > 0' "$out/cc.tsv" | wc -l)
log "cc on: $on_a + $on_b Mbit/s, marked $on_marked, dropped $on_drops, CNPs $on_cnps, \
$limited samples rate-limited; cc off: $off_a + $off_b Mbit/s, dropped $off_drops"
[ "$on_marked" -gt 0 ] || fail "the port marked nothing: are roxe's frames ECT(0)?"
[ "$on_cnps" -gt 0 ] || fail "marks but no CNP received"
[ "$limited" -gt 0 ] || fail "CNPs but no sender was ever rate-limited (cc_rate_mbps)"
[ "$off_drops" -gt 0 ] || fail "cc off: the queue never overflowed"
[ "$on_drops" -lt "$off_drops" ] || fail "cc on dropped no fewer frames than cc off"
log "PASS"
