# SPDX-License-Identifier: GPL-2.0-only
# Sourced by the VM tests.

# The tree's top: $TOP from the kselftest make, else up from the test
# script (lib.mk may run a copy of it from build/selftests/vm/).
find_top() {
	local d
	d=$(dirname "$(readlink -f "$0")")
	for d in ${TOP:-} "$d" "$d/.." "$d/../.." "$d/../../.." "$d/../../../.."; do
		if [ -x "$d/tools/vm/run.sh" ]; then
			(cd "$d" && pwd)
			return 0
		fi
	done
	return 1
}
