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

# vm_verdict OUT: " (run.sh's verdict on the failed run in OUT)", or
# nothing: why it failed, with the console's telling line, for a test's
# FAIL line (a CI log cut short often keeps only that)
vm_verdict() {
	local v
	v=$(cat "$1/vm-verdict.txt" 2>/dev/null || true)
	echo "${v:+ ($v)}"
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
		echo "$name: FAIL: guest exited with $rc$(vm_verdict "$out"); console tail:"
		tail -n 40 "$out/console.log" 2>/dev/null | sed 's/^/    /'
		exit $KSFT_FAIL
	fi
}

# vm_kver_name: the kernel the test boots, as KVER names it (6.1, the
# default); run as NAME-SERIES.sh (a link to NAME.sh, e.g.
# kmod_basic-6.12.sh; NAME-trixie-bpo.sh: trixie-backports' newest),
# SERIES whatever KVER says.
vm_kver_name() {
	local self=${0##*/}
	case "$self" in
	*-[0-9]*.[0-9]*.sh) self=${self%.sh}; echo "${self##*-}" ;;
	*-trixie-bpo.sh) echo trixie-bpo ;;
	*) echo "${KVER:-6.1}" ;;
	esac
}

# vm_out NAME: the test's results directory, build/vm/NAME, with the
# kernel's name after it on any kernel but the default: a test's run on
# 6.12 (after the one on 6.1) leaves the other's results in place.
vm_out() {
	local k
	k=$(vm_kver_name)
	case "$k" in
	6.1) echo "$(find_top)/build/vm/$1" ;;
	*) echo "$(find_top)/build/vm/$1-$k" ;;
	esac
}

# vm_host_ready: what booting the VM takes on the host (root, QEMU, the
# guest's kernel, fetched under build/vm/kernels/ when missing, /dev/net/tun);
# the caller's host_missing when something is missing. Resolves KVER (a name:
# 6.1, the default, 6.12 or a release; tools/vm/kver.sh; a test run as
# NAME-SERIES.sh takes SERIES) to the release the guest boots and exports it, for
# run.sh and for the paths of the modules built for it
# (build/kmod/$KVER/roxe.ko; the guest finds them by its uname -r).
vm_host_ready() {
	local k
	[ "$(id -u)" = 0 ] || host_missing "needs root"
	command -v qemu-system-x86_64 >/dev/null || host_missing "qemu-system-x86_64 missing"
	"$(find_top)/tools/vm/fetch-kernels.sh" "$(vm_kver_name)" >&2 &&
		k=$("$(find_top)/tools/vm/kver.sh" "$(vm_kver_name)") ||
		host_missing "no Debian $(vm_kver_name) guest kernel (make kernels)"
	export KVER=$k
	[ -c /dev/net/tun ] || host_missing "/dev/net/tun missing"
}

# vm_need_kmod TOP [FILE...]: build/kmod/$KVER/roxe.ko and the other FILEs
# under TOP (the test ULPs in build/kmod-test/$KVER/) for the guest, up to
# date with their sources (make kmod, 1 s when nothing changed); the
# caller's host_missing when they cannot be built.
vm_need_kmod() {
	local top=$1 f
	shift
	# always through kbuild, which rebuilds what its sources changed: a
	# module left from an older tree would be tested in their place
	make -s -C "$top" kmod VM_KERNELS="$KVER" >/dev/null ||
		host_missing "cannot build roxe.ko for $KVER (make kmod)"
	for f in "build/kmod/$KVER/roxe.ko" "$@"; do
		[ -f "$top/$f" ] || host_missing "make kmod did not make $f"
	done
}

# vm_build_prog TEST TOP NAME [CC-OPTION...]: the guest's program
# build/vm/NAME from selftests/vm/NAME.c, against the host's libibverbs
# (the image carries the same libraries), when it is older than its source,
# verbs_util.h or include/uapi/roxe/kabi.h; TEST fails if it does not build.
vm_build_prog() {
	local test=$1 top=$2 name=$3 src bin
	shift 3
	src=$top/selftests/vm/$name.c bin=$top/build/vm/$name
	if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] ||
	   [ "$top/selftests/vm/verbs_util.h" -nt "$bin" ] || [ "$top/include/uapi/roxe/kabi.h" -nt "$bin" ]; then
		mkdir -p "$top/build/vm"
		cc -std=gnu11 -O2 -g -Wall -Wextra -Werror -I"$top/include/uapi" -I"$top/include" \
			-I"$top/include/private" "$@" -o "$bin" "$src" \
			-libverbs || { echo "$test: FAIL: cannot build $name"; exit $KSFT_FAIL; }
	fi
}

# vm_module_tree BASE MODULE...: a module tree for the guest's kernel (KVER)
# in BASE/lib/modules/KVER holding MODULE... (file names, - or _) and what
# they depend on, from the guest kernel's tree (hard links where it can),
# with its modules.builtin* and modules.order, indexed by depmod -b: the
# /lib/modules of a guest booted with run.sh --systemd (--env
# ROXE_VM_MODULES=BASE/lib/modules). A module built into KVER is left
# out; 1 (and a line) for one that is neither.
vm_module_tree() {
	local base=$1 kdir line rel name m f
	shift
	kdir=$("$(find_top)/tools/vm/kver.sh" --root)/lib/modules/$KVER
	local -A path=() dep=() want=()
	while IFS= read -r line; do
		rel=${line%%:*}
		dep[$rel]=${line#*:}
		name=${rel##*/}
		name=${name%%.ko*}
		path[${name//-/_}]=$rel
	done <"$kdir/modules.dep"
	local queue=()
	for m in "$@"; do
		rel=${path[${m//-/_}]:-}
		if [ -n "$rel" ]; then
			queue+=("$rel")
		elif ! grep -qE "/${m//[-_]/[-_]}\.ko\$" "$kdir/modules.builtin"; then
			echo "vm_module_tree: no module $m for $KVER" >&2
			return 1
		fi
	done
	while [ ${#queue[@]} -gt 0 ]; do
		rel=${queue[0]} queue=("${queue[@]:1}")
		[ -z "${want[$rel]:-}" ] || continue
		want[$rel]=1
		for m in ${dep[$rel]}; do queue+=("$m"); done
	done
	rm -rf "$base"
	mkdir -p "$base/lib/modules/$KVER"
	for rel in "${!want[@]}"; do
		mkdir -p "$(dirname "$base/lib/modules/$KVER/$rel")"
		ln -f "$kdir/$rel" "$base/lib/modules/$KVER/$rel" 2>/dev/null ||
			cp "$kdir/$rel" "$base/lib/modules/$KVER/$rel" || return 1
	done
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		cp "$kdir/$f" "$base/lib/modules/$KVER/" || return 1
	done
	depmod -b "$base" "$KVER"
}

# vm_apt_unpack DIR PKG...: Debian 12's PKGs (the guest's userspace the
# host lacks) downloaded with the guest kernels' private apt configuration
# (tools/vm/fetch-kernels.sh) and dpkg-deb -x'ed into DIR/root, never
# installed (their services would be enabled); once: DIR/.unpacked names
# what is there (another list replaces it). PKG/SUITE takes PKG from SUITE
# (bookworm-backports). 1 when the download fails.
vm_apt_unpack() {
	local d=$1 top apt p
	shift
	[ "$(cat "$d/.unpacked" 2>/dev/null)" = "$*" ] && return 0
	top=$(find_top) || return 1
	apt=${ROXE_VM_KERNELS:-$top/build/vm/kernels}/apt/apt.conf
	[ -f "$apt" ] || "$top/tools/vm/fetch-kernels.sh" >&2 || return 1
	rm -rf "$d/debs" "$d/root" "$d/.unpacked" && mkdir -p "$d/debs"
	# as root apt downloads as _apt: let it write there
	[ "$(id -u)" != 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$d/debs"
	(cd "$d/debs" && APT_CONFIG=$apt apt-get -qq download "$@" >/dev/null) || return 1
	for p in "$d"/debs/*.deb; do dpkg-deb -x "$p" "$d/root" || return 1; done
	rm -rf "$d/debs"
	echo "$*" >"$d/.unpacked"
}

# vm_host_listening PORT: a TCP listener on PORT in this namespace (the
# interop peers, next to QEMU)
vm_host_listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }

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

# vm_carrier IF: IF has carrier now
vm_carrier() { [ "$(cat "/sys/class/net/$1/carrier" 2>/dev/null)" = 1 ]; }

# vm_carriers IF...: each IF has carrier within 20 s (igb's comes with its
# watchdog, a second or two after the reset an XDP program or an AF_XDP
# pool makes); 1 if one never did
vm_carriers() {
	local i
	for i in "$@"; do vm_wait_for 20 vm_carrier "$i" || return 1; done
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
# requests from roxe, retries and exhausted retries, RNR NAKs we had to
# send, transmit failures. 6.1's retransmit timer is armed at a send and
# not restarted by ACKs ("some timeouts are spurious", rxe_comp.c), so a
# run longer than the timeout retries with every ACK on time: the tests
# give rxe's QPs the timeout the emulator needs (roxe-linger.so's
# ROXE_MIN_TIMEOUT, perftest's -u), and completer_retry_err must stay 0.
VM_RXE_ERR_COUNTERS='rcvd_seq_err rcvd_rnr_err out_of_seq_request duplicate_request
completer_retry_err retry_exceeded_err retry_rnr_exceeded_err send_rnr_err send_err
link_downed'

# vm_veth_drops DEV...: frames the veth pair DEV... dropped, in all. With
# roxed's XDP program on one end, veth queues what the other sends in a
# 256-frame ring that the XDP end's NAPI drains (its program then
# redirects into roxed's AF_XDP ring, or drops when that is full: its
# rx_dropped); a fuller ring drops (the sender's tx_dropped) and rxe's
# send fails (its send_err). Either is a failure: the tests' traffic
# fits the rings.
vm_veth_drops() {
	local n=0 d f
	for d in "$@"; do
		for f in tx_dropped rx_dropped; do
			n=$((n + $(cat "/sys/class/net/$d/statistics/$f")))
		done
	done
	echo $n
}
# vm_veth_drop_counts DEV...: the same, counter by counter, and rxe0's
# send_err
vm_veth_drop_counts() {
	local d f
	for d in "$@"; do
		for f in tx_dropped rx_dropped; do
			echo -n "$d $f $(cat "/sys/class/net/$d/statistics/$f"), "
		done
	done
	echo -n "rxe0 send_err $(cat /sys/class/infiniband/rxe0/ports/1/hw_counters/send_err 2>/dev/null)"
}

# vm_check_veth_drops LABEL DEV...: 1 (and says so) if the veth pair DEV...
# dropped a frame since its creation
vm_check_veth_drops() {
	local label=$1 n
	shift
	n=$(vm_veth_drops "$@")
	if [ "$n" = 0 ]; then
		echo "$label: ok: the veth pair dropped no frame"
		return 0
	fi
	echo "$label: FAIL: the veth pair dropped $n frames ($(vm_veth_drop_counts "$@"))"
	return 1
}

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

# tcpdump_counts ERR: the counts of the newest "N packets captured, M
# packets received by filter" line in ERR, as "N M".
tcpdump_counts() {
	local line
	line=$(grep ' captured, ' "$1" | tail -n1)
	[[ $line =~ ([0-9]+)\ packets?\ captured,\ ([0-9]+)\ packets?\ received ]] || return 1
	echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
}

# catches_usr1 PID: PID has a handler for SIGUSR1 (signal 10: bit 9 of SigCgt).
catches_usr1() {
	local cgt
	cgt=$(awk '$1 == "SigCgt:" { print $2 }' "/proc/$1/status" 2>/dev/null) &&
		[ -n "$cgt" ] && (((0x$cgt >> 9) & 1))
}

# tcpdump_ask PID ERR: ask tcpdump PID for its counts (SIGUSR1) and wait
# at most 0.2 s for the answer, a new counts line in ERR; prints it as
# tcpdump_counts does. tcpdump says "listening on" before it installs its
# SIGUSR1 handler, and SIGUSR1 kills it until then: so first wait (5 s
# at most) for the handler.
tcpdump_ask() {
	local pid=$1 err=$2 had i
	had=$(grep -c ' captured, ' "$err")
	vm_wait_for 5 catches_usr1 "$pid" || return 2
	kill -USR1 "$pid" 2>/dev/null || return 2
	for i in $(seq 20); do
		[ "$(grep -c ' captured, ' "$err")" -gt "$had" ] && break
		sleep 0.01
	done
	tcpdump_counts "$err"
}

# tcpdump_listening PID ERR: wait at most 20 s until tcpdump PID (its
# stderr in ERR) listens, then note how many frames its socket counted
# before its filter was in place: libpcap's "received by filter" includes
# the frames of any kind that reached the socket between its creation and
# the filter (an IPv6 router solicitation of a link just up, say), which
# are never captured. tcpdump_stop then does not wait for them.
declare -gA TCPDUMP_EARLY=()
tcpdump_listening() {
	local pid=$1 err=$2 counts
	vm_wait_for 20 grep -q 'listening on' "$err" || return 1
	counts=$(tcpdump_ask "$pid" "$err") || return 1
	# shellcheck disable=SC2086 # "N M"
	set -- $counts
	TCPDUMP_EARLY[$pid]=$(($2 - $1))
}

# tcpdump_stop PID ERR [WANT]: stop the tcpdump PID (its stderr in ERR)
# once it has written every frame its socket took in. A signal that stops it
# earlier loses the frames it received but had not written yet, so first ask
# (SIGUSR1: "N packets captured, M packets received by filter") until N
# reaches M (less what came before the filter, where tcpdump_listening
# saw it start), or WANT where given (on lo libpcap drops the outgoing copy
# of each frame, so M counts it twice). At most 20 s; 1 (with the counts on
# stderr) if it never got there.
tcpdump_stop() {
	local pid=$1 err=$2 want=${3:-} asked rc counts cap= rcv= early=${TCPDUMP_EARLY[$1]:-0}
	for asked in $(seq 100); do
		rc=0
		counts=$(tcpdump_ask "$pid" "$err") || rc=$?
		[ $rc != 2 ] || break	# tcpdump is gone
		[ $rc = 0 ] || continue
		read -r cap rcv <<<"$counts"
		rcv=$((rcv - early))
		[ "$cap" -ge "${want:-$rcv}" ] && break
	done
	unset "TCPDUMP_EARLY[$pid]"
	# SIGTERM: a background job of a script ignores SIGINT
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ -n "$cap" ] && [ "$cap" -ge "${want:-$rcv}" ] && return 0
	echo "tcpdump_stop: ${cap:-no} frames written of ${want:-${rcv:-?}} ($early counted before the filter): $(grep ' captured, ' "$err" | tail -n1)" >&2
	return 1
}

# --- guest only ---------------------------------------------------------------

# vm_cm_listening PORT: an rdma_cm server listens on PORT, in ib_cm too.
# rdma_listen() shows the id LISTEN before it has listened: a wildcard id
# gets one child per device, each LISTEN before its ib_cm listener exists
# (drivers/infiniband/core/cma.c), and a client early in that window gets
# a reject (SIDR: "unsupported"). So: a LISTEN id on the port (a wildcard's
# child on every device), and no thread of the server inside a command on
# /dev/infiniband/rdma_cm (a write) but the wait for an event. (The guest
# has one vCPU: no thread of the server runs while this looks.)
vm_cm_listening() {
	local ids pid t sc nr fd
	ids=$(rdma resource show cm_id 2>/dev/null | grep -E "state LISTEN .*:$1( |\$)") || return 1
	if grep -qE "src-addr (0\.0\.0\.0|\[?::\]?):$1( |\$)" <<<"$ids"; then
		[ "$(grep -c '^link ' <<<"$ids")" -ge "$(ls /sys/class/infiniband | wc -l)" ] || return 1
	fi
	pid=$(awk '{ for (i = 1; i < NF; i++) if ($i == "pid") { print $(i + 1); exit } }' <<<"$ids")
	[ -n "$pid" ] && [ -d "/proc/$pid/task" ] || return 1
	for t in /proc/"$pid"/task/*; do
		sc=$(cat "$t/syscall" 2>/dev/null) || return 1
		read -r nr fd _ <<<"$sc"
		[ "$nr" = 1 ] || continue	# not in write(2)
		[ "$(readlink "/proc/$pid/fd/$((fd))" 2>/dev/null)" = /dev/infiniband/rdma_cm ] || continue
		[ "$(cat "$t/wchan" 2>/dev/null)" = ucma_get_event ] || return 1
	done
}

# vm_roxe_stats_fresh DEV: wait (10 s at most) until every port counter of
# roxed's DEV is newer than this call: roxed stores them about once a
# second, stats_updates last, so two more stores than now will do; 1 if
# they do not come.
vm_roxe_stats_fresh() {
	local f=/sys/class/infiniband/$1/ports/1/hw_counters/stats_updates u
	u=$(cat "$f" 2>/dev/null) || { echo "no $f" >&2; return 1; }
	vm_wait_for 10 stats_past "$f" $((u + 2))
}
stats_past() { [ "$(cat "$1" 2>/dev/null || echo 0)" -ge "$2" ]; }

# (no grep -q after a pipe: with pipefail an early exit fails the pipeline)
vm_listening() { netstat -ltn | grep ":$1 " >/dev/null; }
vm_have_dev() { [ -e "/sys/class/infiniband/$1" ]; }
vm_no_dev() { [ ! -e "/sys/class/infiniband/$1" ]; }
# DEV's uverbs device: a registered device is not yet visible to
# libibverbs, uverbs comes last
vm_verbs_dev() { grep -qx "$1" /sys/class/infiniband_verbs/uverbs*/ibdev 2>/dev/null; }

# vm_run_pair LABEL READY PORT PROG SDEV SGID CDEV CGID SADDR GOPT ARGS...:
# a verbs/perftest server on SDEV (GID index SGID) and its client on CDEV
# towards SADDR, port PORT; READY PORT says the server listens. GOPT is
# the program's GID option (-g for the pingpongs, -x for perftest). Both run
# with VM_PAIR_ENV (NAME=VALUE words) in their environment. The caller's
# ok/bad report; logs under $ROXE_VM_OUT. 0 when both succeeded.
vm_run_pair() {
	local label=$1 ready=$2 port=$3 prog=$4 sdev=$5 sg=$6 cdev=$7 cg=$8 saddr=$9 gopt=${10}
	local rc=0 spid n logf=$ROXE_VM_OUT/${1// /_}.log cal=()
	local run=(env ${VM_PAIR_ENV[@]+"${VM_PAIR_ENV[@]}"})
	shift 10
	# perftest fits the CPU's cycle counter against the clock to report;
	# in a TCG guest the fit can fail (r^2 < 0.9), and without -F it then
	# exits 1 with no figures ("Can't produce a report") whatever the
	# transport did (kmod_loopback: 3 runs in 24)
	case $prog in ib_*_bw | ib_*_lat) cal=(-F) ;; esac
	"${run[@]}" "$prog" -d "$sdev" "$gopt" "$sg" -p "$port" "${cal[@]}" "$@" >"$logf.srv" 2>&1 &
	spid=$!
	if ! vm_wait_for 20 "$ready" "$port"; then
		bad "$label: server did not listen"
		rc=1
	elif ! timeout 120 "${run[@]}" "$prog" -d "$cdev" "$gopt" "$cg" -p "$port" "${cal[@]}" "$@" "$saddr" \
		>"$logf.cli" 2>&1; then
		bad "$label: client failed"
		rc=1
	fi
	n=100
	while kill -0 $spid 2>/dev/null && [ $n -gt 0 ]; do sleep 0.1; n=$((n - 1)); done
	if kill -0 $spid 2>/dev/null; then
		bad "$label: server hung"
		kill -KILL $spid
		rc=1
	fi
	wait $spid || { [ $rc != 0 ] || bad "$label: server failed"; rc=1; }
	if [ $rc = 0 ]; then
		ok "$label: $(grep -hE 'bytes in|^ *[0-9]+ +[0-9]+ ' "$logf.cli" | tail -1 | tr -s ' ')"
	else
		sed 's/^/    srv: /' "$logf.srv" | tail -15
		sed 's/^/    cli: /' "$logf.cli" | tail -15
	fi
	return $rc
}

# vm_rxe_counters DEV: DEV's hw_counters, "name value" a line
vm_rxe_counters() {
	local f
	for f in "/sys/class/infiniband/$1/ports/1/hw_counters"/*; do
		echo "${f##*/} $(cat "$f")"
	done
}

# vm_rxe_up NETDEV ADDR: rxe0 on NETDEV, and its RoCE v2 GID index for
# IPv4 ADDR on stdout once it appears (asynchronously: netdev events); 1
# if it does not within 5 s.
vm_rxe_up() {
	rdma link add rxe0 type rxe netdev "$1" || return 1
	vm_wait_for 5 vm_gid_index rxe0 "$2" && vm_gid_index rxe0 "$2"
}

# vm_cm_trace_on: record ib_cm's and rdma_cm's tracepoints (connection
# events, with each REJ's reason) in the kernel's trace buffer, where the
# kernel has them; vm_cm_trace_tail prints the last N (default 30) lines:
# what a failed connection says of why.
VM_TRACING=/sys/kernel/debug/tracing
vm_cm_trace_on() {
	local e
	for e in ib_cma rdma_cma; do
		[ -w "$VM_TRACING/events/$e/enable" ] && echo 1 >"$VM_TRACING/events/$e/enable"
	done
	return 0
}
vm_cm_trace_tail() {
	[ -r "$VM_TRACING/trace" ] || return 0
	{ grep -v '^#' "$VM_TRACING/trace" || true; } | tail -n "${1:-30}"
}

# vm_post_probes_on PREFIX FUNC...: a return probe PREFIX_FUNC on each
# post verb FUNC, recording in the trace buffer only the calls that failed
# (a ULP may retry a refused post, or ignore it); vm_post_probe_calls
# PREFIX: every probe's calls, "FUNC N, FUNC N" (kprobe_profile).
vm_post_probes_on() {
	local p=$1 f e
	shift
	for f; do
		e=$VM_TRACING/events/kprobes/${p}_$f
		echo "r:${p}_$f $f ret=\$retval:s32" >>"$VM_TRACING/kprobe_events" || return 1
		echo 'ret != 0' >"$e/filter" && echo 1 >"$e/enable" || return 1
	done
}
vm_post_probe_calls() {
	awk -v p="$1_" 'index($1, p) == 1 { printf "%s%s %d", s, substr($1, length(p) + 1), $2; s = ", " }' \
		"$VM_TRACING/kprobe_profile"
}

# vm_check_dmesg [NOTE]: the caller's ok (NOTE appended) when the kernel log
# holds no WARNING, BUG, Oops, call trace, refcount or protection fault,
# else its bad and the log's tail.
vm_check_dmesg() {
	local hits
	hits=$(dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|refcount_t|general protection' || true)
	if [ -n "$hits" ]; then
		bad "dmesg:"
		dmesg | tail -n 60 | sed 's/^/    /'
	else
		ok "dmesg: no WARNING/BUG/Oops${1:-}"
	fi
}

# vm_veth_pair A_IF A_ADDR B_IF B_ADDR [QUEUES]: a veth pair in the guest's
# one namespace whose ends really talk over the veth: packets to the other
# end's address leave through it (policy routes ahead of the local table),
# static neighbours, local sources accepted, no reverse-path filter. QUEUES
# (default 1) rx and tx queues each end: roxed needs one per engine.
vm_veth_pair() {
	local nq=${5:-1}
	/usr/sbin/ip link add "$1" numtxqueues "$nq" numrxqueues "$nq" type veth peer name "$3" \
		numtxqueues "$nq" numrxqueues "$nq"
	vm_face_pair "$1" "$2" "$3" "$4"
}

# vm_face_pair A_IF A_ADDR B_IF B_ADDR: two interfaces of the guest's one
# namespace that reach each other by a link (a veth pair, or run.sh
# --pair's two NICs) made to talk over it, as vm_veth_pair says
vm_face_pair() {
	local ip=/usr/sbin/ip a=$1 aa=$2 b=$3 ba=$4 f
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
	ping -c 1 -W 5 "$ba" >/dev/null || { echo "vm_face_pair: no IP path $aa -> $ba"; return 1; }
}

# vm_roxe_roxe_pair A B QUEUES [ROXED-OPTION...]: two roxe.ko devices, each
# served by its own roxed, facing each other over a veth pair of QUEUES
# queues: roxe0 (roxed --netdev rxa) with address A, roxe1 (roxed --netdev
# rxb) with B; the second roxed starts once roxe0 exists, so the names are
# fixed. roxed logs to $ROXE_VM_OUT/roxed.log and roxed1.log. Needs $KO and
# $ROXED. Sets
# ROXED_PID, ROXED1_PID, GA and GB (roxe0's and roxe1's RoCE v2 GID
# indexes); 1 after the caller's bad.
vm_roxe_roxe_pair() {
	local a=$1 b=$2 queues=$3 i
	shift 3
	vm_veth_pair rxa "$a" rxb "$b" "$queues" || { bad "veth pair"; return 1; }
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	for i in 0 1; do
		if [ $i = 0 ]; then
			"$ROXED" --netdev rxa --foreground "$@" 2>>"$ROXE_VM_OUT/roxed.log" &
			ROXED_PID=$!
		else
			"$ROXED" --netdev rxb --foreground "$@" 2>>"$ROXE_VM_OUT/roxed1.log" &
			ROXED1_PID=$!
		fi
		vm_wait_for 20 vm_have_dev roxe$i ||
			{ bad "roxed registered no roxe$i"; cat "$ROXE_VM_OUT"/roxed*.log; return 1; }
		vm_wait_for 10 vm_verbs_dev roxe$i || { bad "no uverbs device for roxe$i"; return 1; }
	done
	vm_wait_for 10 vm_gid_index roxe0 "$a" && vm_wait_for 10 vm_gid_index roxe1 "$b" ||
		{ bad "no RoCE v2 GIDs"; return 1; }
	GA=$(vm_gid_index roxe0 "$a")
	GB=$(vm_gid_index roxe1 "$b")
	ok "roxe0 on rxa ($a, gid $GA, roxed pid $ROXED_PID), roxe1 on rxb ($b, gid $GB, roxed pid $ROXED1_PID)"
}

# vm_rxe_roxe_pair A B QUEUES [ROXED-OPTION...]: rxe0 (kernel rxe) on rxa
# with address A facing roxe0 (roxe.ko served by roxed --netdev rxb, options
# added) on rxb with B, over a veth pair of QUEUES queues; roxed logs to
# $ROXE_VM_OUT/roxed.log. Needs $KO and $ROXED. Sets ROXED_PID, GX and GR
# (rxe0's and roxe0's RoCE v2 GID indexes); 1 after the caller's bad.
vm_rxe_roxe_pair() {
	local a=$1 b=$2 queues=$3
	shift 3
	vm_veth_pair rxa "$a" rxb "$b" "$queues" || { bad "veth pair"; return 1; }
	insmod "$KO" || { bad "insmod $KO"; return 1; }
	rdma link add rxe0 type rxe netdev rxa
	"$ROXED" --netdev rxb --foreground "$@" 2>>"$ROXE_VM_OUT/roxed.log" &
	ROXED_PID=$!
	vm_wait_for 20 vm_have_dev roxe0 ||
		{ bad "roxed --netdev rxb registered no roxe0"; cat "$ROXE_VM_OUT/roxed.log"; return 1; }
	vm_wait_for 10 vm_verbs_dev roxe0 || { bad "no uverbs device for roxe0"; return 1; }
	vm_wait_for 10 vm_gid_index rxe0 "$a" && vm_wait_for 10 vm_gid_index roxe0 "$b" ||
		{ bad "no RoCE v2 GIDs"; return 1; }
	GX=$(vm_gid_index rxe0 "$a")
	GR=$(vm_gid_index roxe0 "$b")
	ok "rxe0 on rxa ($a, gid $GX), roxe0 on rxb ($b, gid $GR), roxed pid $ROXED_PID"
}

# vm_rxe_control_pair C D: the reference beside vm_rxe_roxe_pair's: a
# second veth pair, rxc (address C, rxe1) and rxd (D, rxe2), routed as
# vm_veth_pair routes the first (whose rules it relies on); 1 when the
# GIDs do not come.
vm_rxe_control_pair() {
	local ip=/usr/sbin/ip c=$1 d=$2 f
	$ip link add rxc type veth peer name rxd
	$ip addr add "$c/24" dev rxc
	$ip addr add "$d/24" dev rxd
	for f in rxc rxd; do
		echo 1 >"/proc/sys/net/ipv4/conf/$f/accept_local"
		echo 0 >"/proc/sys/net/ipv4/conf/$f/rp_filter"
		$ip link set $f up
	done
	$ip neigh replace "$d" lladdr "$(cat /sys/class/net/rxd/address)" dev rxc nud permanent
	$ip neigh replace "$c" lladdr "$(cat /sys/class/net/rxc/address)" dev rxd nud permanent
	$ip rule add pref 12 iif lo to "$d" lookup 103
	$ip rule add pref 13 iif lo to "$c" lookup 104
	$ip route add "$d/32" dev rxc src "$c" table 103
	$ip route add "$c/32" dev rxd src "$d" table 104
	rdma link add rxe1 type rxe netdev rxc
	rdma link add rxe2 type rxe netdev rxd
	vm_wait_for 10 vm_gid_index rxe1 "$c" && vm_wait_for 10 vm_gid_index rxe2 "$d"
}

# Run as a command, "vm_lib.sh cm_wait PORT": vm_cm_listening PORT, for
# 20 s at most (roxe-linger.so's ROXE_CONNECT_WAIT, in the guest).
if [ "${BASH_SOURCE[0]}" = "$0" ] && [ "${1:-}" = cm_wait ]; then
	vm_wait_for 20 vm_cm_listening "$2"
	exit
fi
