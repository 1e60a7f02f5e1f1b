#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The ICRC of roxe's frames against an independent implementation in Python
# (zlib.crc32 over the annex's masked bytes), and known answers.
here=$(cd "$(dirname "$0")" && pwd -P)
out=${OUTPUT:-$here/../../build/selftests/wire}

if ! command -v python3 >/dev/null; then
	echo "# FAIL: missing: python3 (tools/scripts/install-deps.sh installs it)"
	exit 1
fi
if [ ! -x "$out/frame_dump" ]; then
	echo "# frame_dump is not built: $out/frame_dump"
	exit 1
fi
exec python3 "$here/icrc_independent.py" "$out/frame_dump"
