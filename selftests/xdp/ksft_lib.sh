# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# Sourced by selftests/xdp's shell tests (after `set -euo pipefail`): the
# kselftest exit codes, the tree (top: $TOP or two levels up from the
# script), the log and fail lines kselftest shows, the root check.
KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
log() { echo "# $*"; }
fail() { log "FAIL: $*"; exit $KSFT_FAIL; }
ksft_need_root() { [ "$(id -u)" = 0 ] || { log "FAIL: missing: needs root"; exit $KSFT_FAIL; }; }
