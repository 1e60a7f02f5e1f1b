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

# vm_run_guest NAME OUT TIMEOUT [run.sh options...]: boot the VM with the
# calling script as its guest part (run.sh --script), results in OUT
# (emptied first). kselftest's runner times out with SIGTERM: it is passed
# on so the harness tears its namespace and QEMU down. Shows the guest's
# "NAME:" lines and their indented details; returns when the guest passed,
# else shows the console's tail and exits with KSFT_FAIL.
vm_run_guest() {
	local name=$1 out=$2 timeout=$3 pid rc=0
	shift 3
	rm -rf "$out"
	"$(find_top)/tools/vm/run.sh" --quiet --timeout "$timeout" --out "$out" "$@" \
		--script "$(readlink -f "$0")" &
	pid=$!
	trap 'kill -TERM $pid 2>/dev/null; wait $pid; exit $KSFT_FAIL' TERM INT
	wait $pid || rc=$?
	trap - TERM INT
	grep -a "^$name:\|^    " "$out/console.log" 2>/dev/null | grep -av '^    .*roxe-vm' || true
	if [ $rc != 0 ]; then
		echo "$name: FAIL: guest exited with $rc; console tail:"
		tail -n 40 "$out/console.log" 2>/dev/null | sed 's/^/    /'
		exit $KSFT_FAIL
	fi
}

# --- shared by the interop tests, on the host and (added to the image with
# run.sh --add) in the guest ----------------------------------------------

# vm_wait_file SECONDS FILE: poll for FILE (the 9p share has no caching)
vm_wait_file() {
	local n=$(($1 * 10))
	while [ ! -e "$2" ]; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# vm_gid_index DEV ADDR: the RoCE v2 GID index of IPv4 ADDR on DEV. rxe has
# hundreds of table slots and sysfs reads are slow under TCG: only the first
# few are looked at.
vm_gid_index() {
	local port=/sys/class/infiniband/$1/ports/1 want i a
	IFS=. read -r -a a <<<"$2"
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "${a[@]}")
	for i in $(seq 0 15); do
		[ "$(cat "$port/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
		[ "$(cat "$port/gids/$i")" = "$want" ] || continue
		echo "$i"
		return 0
	done
	return 1
}

# rxe's hw_counters that mean the peer (roxe) broke the protocol or the run
# went wrong: NAKs received (seq, RNR), out-of-sequence or duplicate
# requests from roxe, exhausted retries, RNR NAKs we had to send, transmit
# failures. completer_retry_err is not among them: 6.1's retransmit timer is
# armed at a send and not restarted by ACKs ("some timeouts are spurious",
# rxe_comp.c), so a run longer than the timeout (67 ms at timeout 14) may
# retry once with every ACK on time; it is printed, and a lost ACK that
# was not retried in time shows up as retry_exceeded_err.
VM_RXE_ERR_COUNTERS='rcvd_seq_err rcvd_rnr_err out_of_seq_request duplicate_request
retry_exceeded_err retry_rnr_exceeded_err send_rnr_err send_err link_downed'

# vm_check_rxe_counters FILE LABEL [COUNTER...]: FILE holds "name value"
# lines (hw_counters); 1 if one of the error counters (default: the list
# above) is not 0.
vm_check_rxe_counters() {
	local f=$1 label=$2 c n bad=0
	shift 2
	if [ ! -s "$f" ]; then
		echo "$label: FAIL: no rxe counters from the guest"
		return 1
	fi
	echo "$label: rxe0 counters: $(grep -v ' 0$' "$f" | tr '\n' ' ')(others 0)"
	for c in ${@:-$VM_RXE_ERR_COUNTERS}; do
		n=$(awk -v n="$c" '$1 == n { print $2 }' "$f")
		if [ -n "$n" ] && [ "$n" != 0 ]; then
			echo "$label: FAIL: rxe counter $c = $n"
			bad=1
		fi
	done
	return $bad
}

# vm_verify_capture PCAP OUT: roxe-pcap verify of the link's capture into
# OUT; sets VM_CAPTURE (the summary), VM_FROM_HOST and VM_FROM_GUEST (RoCE
# frames each side sent); 1 unless every RoCE frame has a valid ICRC.
vm_verify_capture() {
	local v
	VM_CAPTURE='no capture' VM_FROM_HOST=0 VM_FROM_GUEST=0
	[ -s "$1" ] || return 1
	v=$("$TOPDIR/build/bin/roxe-pcap" verify "$1" 2>&1) || true
	printf '%s\n' "$v" >"$2"
	VM_CAPTURE=$(printf '%s\n' "$v" | tail -n1)
	VM_CAPTURE=${VM_CAPTURE#*: }
	VM_FROM_HOST=$(awk '$2 ~ /^10\.77\.0\.1:/ && $3 == "->" { n++ } END { print n + 0 }' "$2")
	VM_FROM_GUEST=$(awk '$2 ~ /^10\.77\.0\.2:/ && $3 == "->" { n++ } END { print n + 0 }' "$2")
	[[ "$VM_CAPTURE" =~ ^[0-9]+\ frames,\ ([0-9]+)\ roce,\ ([0-9]+)\ icrc\ ok,\ 0\ icrc\ bad,\ 0\ malformed ]] &&
		[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]
}

# --- guest only ---------------------------------------------------------------

# vm_wait_for SECONDS CMD...: retry CMD every 0.1 s until it succeeds; 1 if
# it never did.
vm_wait_for() {
	local n=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}

# vm_veth_pair A_IF A_ADDR B_IF B_ADDR [QUEUES]: a veth pair in the guest's
# one namespace whose ends really talk over the veth: packets to the other
# end's address leave through it (policy routes ahead of the local table),
# static neighbours, local sources accepted, no reverse-path filter. QUEUES
# (default 1) rx and tx queues each end: roxed needs one per engine.
vm_veth_pair() {
	local ip=/usr/sbin/ip a=$1 aa=$2 b=$3 ba=$4 nq=${5:-1} f
	$ip link add "$a" numtxqueues "$nq" numrxqueues "$nq" type veth peer name "$b" \
		numtxqueues "$nq" numrxqueues "$nq"
	$ip addr add "$aa/24" dev "$a"
	$ip addr add "$ba/24" dev "$b"
	for f in all/accept_local "$a/accept_local" "$b/accept_local"; do
		echo 1 >"/proc/sys/net/ipv4/conf/$f"
	done
	for f in all "$a" "$b"; do echo 0 >"/proc/sys/net/ipv4/conf/$f/rp_filter"; done
	$ip link set "$a" up
	$ip link set "$b" up
	$ip neigh replace "$ba" lladdr "$(cat "/sys/class/net/$b/address")" dev "$a" nud permanent
	$ip neigh replace "$aa" lladdr "$(cat "/sys/class/net/$a/address")" dev "$b" nud permanent
	$ip rule add pref 10 iif lo to "$ba" lookup 101
	$ip rule add pref 11 iif lo to "$aa" lookup 102
	$ip rule add pref 100 lookup local
	$ip rule del pref 0
	$ip route add "$ba/32" dev "$a" src "$aa" table 101
	$ip route add "$aa/32" dev "$b" src "$ba" table 102
	ping -c 1 -W 5 "$ba" >/dev/null || { echo "vm_veth_pair: no IP path $aa -> $ba"; return 1; }
}
