#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# roxe's Debian packages under a real systemd (issue #36): a guest whose
# PID 1 is systemd (tools/vm/run.sh --systemd: the host's Debian root,
# read-only over 9p, made writable by a tmpfs overlay; nothing of the
# kernel's RDMA stack loaded before the test), and in it:
#   - nothing of ib_core, ib_uverbs, rdma_rxe, roxe is loaded;
#   - dpkg -i roxe libroxe0 libroxe-dev (make deb's); roxe.ko (make kmod's
#     for this kernel) where dkms installs it, /lib/modules/RELEASE/
#     updates/dkms/roxe.ko, and depmod -a, as dkms install does. roxe-dkms
#     is not installed: its postinst builds roxe.ko for every kernel with
#     headers under /lib/modules (the host's own, seen through the shared
#     root), minutes each under TCG;
#   - the packages enable and start nothing (systemctl is-enabled,
#     is-active); then systemctl enable roxe.service roxed@rxb.service, as
#     an admin would (the links purge must take away);
#   - modprobe roxe loads ib_core and ib_uverbs by itself (modules.dep)
#     and makes /dev/roxe; modprobe -r roxe takes all three out again;
#   - systemctl start roxe.service returns once roxed --links said READY=1
#     (Type=notify), the unit active and running, roxe.ko loaded by its
#     modprobe@roxe.service, its status text roxed's STATUS=;
#   - rdma link add roxe0 type roxe netdev rxb: roxe0 registered, ACTIVE,
#     its roxed in roxe.service's cgroup (the unit's sandbox); rxe0 on rxa,
#     the other end of the veth pair (rdma_rxe and its crc32 loaded by the
#     kernel's modprobe); ibv_rc_pingpong -c both ways round;
#   - rdma link delete roxe0 and rxe0; systemctl stop roxe.service: inactive,
#     Result success, roxed exited 0;
#   - roxe.ko out (rmmod, the file removed, depmod -a: dkms remove);
#     dpkg --purge roxe libroxe-dev libroxe0: the root's file list is what
#     it was before dpkg -i (every path the guest created, deleted or
#     changed the type of: the overlay's upper directory, against the
#     lower; /proc, /sys, /dev, /run, /tmp and the journal aside), no roxe
#     unit known to systemd, no link to one (enabled) anywhere under
#     /etc/systemd, no modules-load.d or modprobe.d entry;
#   - the journal holds no complaint of systemd's about roxe's units (a
#     setting unknown, ignored or invalid, a failure); no WARNING/BUG in
#     dmesg.
# The man-db trigger is turned off in the guest (/var/lib/man-db/auto-update
# removed before the first file list): mandb over the shared root takes
# minutes under TCG.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -euo pipefail

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
A=10.77.8.1 B=10.77.8.2
PKGS=(roxe libroxe0 libroxe-dev)
# the guest's module tree: what the test, systemd's boot and rdma-core's
# udev rules (/etc/rdma/modules/rdma.conf) load, with their dependencies
MODULES=(virtio_pci virtio_net 9pnet_virtio 9p overlay veth ib_core ib_uverbs rdma_rxe
	crc32_generic crc32-pclmul rdma_ucm ib_umad ib_iser rpcrdma configfs fuse loop)

# ============================ guest side ==================================
fail=0
log() { echo "deb_systemd: $*"; }
ok() { log "ok: $*"; }
bad() { log "FAIL: $*"; fail=1; }

UPPER=/run/roxe-vm/rw/upper LOWER=/run/roxe-vm/ro

# file_list: every path of the root the guest made differ from the host's
# (the overlay's upper directory), as "TYPE MODE OWNER PATH[ -> TARGET]",
# but the pseudo and scratch file systems and the journal
file_list() {
	(cd "$UPPER" && find . \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run -o -path ./tmp \
		-o -path ./var/log/journal \) -prune -o ! -path . -printf '%y %m %u:%g %p -> %l\n') |
		sed 's/ -> $//' | LC_ALL=C sort
}

# same_as_lower LINE: LINE (file_list's) is a copy-up: the lower root has
# that path with the same type, mode and owner (the merged root's file
# list is the same as the host's there)
same_as_lower() {
	local y p
	read -r y _ _ p _ <<<"$1"
	[ "$y" != c ] || return 1	# a whiteout: the lower file is deleted
	[ -e "$LOWER/$p" ] || [ -L "$LOWER/$p" ] || return 1
	[ "$(cd "$LOWER" && find "$p" -maxdepth 0 -printf '%y %m %u:%g %p -> %l\n' | sed 's/ -> $//')" = "$1" ]
}

# list_diff BEFORE AFTER: the lines of the merged root's file list that
# differ: ADDED/REMOVED/CHANGED lines; empty when the same
list_diff() {
	local line
	while IFS= read -r line; do
		case $line in
		'> '*) same_as_lower "${line#> }" || echo "left: ${line#> }" ;;
		'< '*) echo "gone: ${line#< }" ;;
		esac
	done < <(diff "$1" "$2" | grep '^[<>] ' || true)
}

mod_loaded() { grep -q "^$1 " /proc/modules; }

unit_prop() { systemctl show -p "$2" --value "$1"; }

step_systemd() {
	local exe state
	exe=$(readlink /proc/1/exe)
	state=$(systemctl is-system-running 2>&1 || true)
	if [[ $exe == */systemd ]]; then
		ok "PID 1 is $exe ($(systemctl --version | sed -n 1p)), system $state"
	else
		bad "PID 1 is $exe, not systemd"
		exit 1
	fi
	# the test's own unit is a part of the boot: "starting" until it ends
	journalctl -b -o short-monotonic --no-pager >"$ROXE_VM_OUT/journal.boot" 2>&1 || true
}

step_no_preload() {
	local m loaded=()
	for m in ib_core ib_uverbs rdma_rxe roxe; do mod_loaded $m && loaded+=("$m"); done
	[ ${#loaded[@]} = 0 ] && ok "none of ib_core, ib_uverbs, rdma_rxe, roxe loaded at the start" ||
		bad "loaded before the test: ${loaded[*]}"
}

step_install() {
	local debs=() p ver rc=0 st
	ver=$(sed -n 's/^VERSION *:= *//p' "$ROXE_TOP/Makefile")
	for p in "${PKGS[@]}"; do debs+=("$ROXE_TOP/build/deb/${p}_${ver}_amd64.deb"); done
	dpkg -i "${debs[@]}" >"$ROXE_VM_OUT/dpkg-i.log" 2>&1 || rc=$?
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "${PKGS[@]}" | tr -d ' ')
	if [ $rc = 0 ] && [ "$st" = iiiiii ]; then
		ok "dpkg -i ${debs[*]##*/}: installed"
	else
		bad "dpkg -i: exit $rc, status $st"
		sed 's/^/    /' "$ROXE_VM_OUT/dpkg-i.log"
		return 1
	fi
	# as dkms install: the module in updates/dkms, depmod -a
	install -D -m 644 "$KO" "$DKMS_KO" && depmod -a "$KVER" ||
		{ bad "roxe.ko into ${DKMS_KO%/*}, depmod -a"; return 1; }
	grep -q "^updates/dkms/roxe.ko: .*ib_uverbs" "/lib/modules/$KVER/modules.dep" &&
		ok "roxe.ko in ${DKMS_KO%/*}, depmod -a: $(grep '^updates/dkms/roxe.ko:' "/lib/modules/$KVER/modules.dep")" ||
		bad "modules.dep: $(grep roxe "/lib/modules/$KVER/modules.dep" || echo 'no roxe.ko')"
}

step_installed() {
	local u en act
	for u in roxe.service roxed@.service; do
		[ -f "/lib/systemd/system/$u" ] || bad "$u not installed"
	done
	en=$(systemctl is-enabled roxe.service 2>&1 || true)
	act=$(systemctl is-active roxe.service 2>&1 || true)
	[ "$en" = disabled ] && [ "$act" = inactive ] &&
		ok "roxe.service installed, $en and $act; roxed@.service there" ||
		bad "after dpkg -i roxe.service is $en and $act"
	# as an admin does (roxe(7)): purge must take the links away
	systemctl enable roxe.service roxed@rxb.service 2>/dev/null || bad "systemctl enable roxe.service roxed@rxb.service"
	en=$(systemctl is-enabled roxe.service roxed@rxb.service 2>&1 | tr '\n' ' ' || true)
	[ "$en" = "enabled enabled " ] && ok "systemctl enable roxe.service roxed@rxb.service: $en" ||
		bad "systemctl enable roxe.service roxed@rxb.service: $en"
}

step_modprobe() {
	local rc=0 out
	out=$(modprobe roxe 2>&1) || rc=$?
	if [ $rc = 0 ] && mod_loaded roxe && mod_loaded ib_core && mod_loaded ib_uverbs && [ -c /dev/roxe ]; then
		ok "modprobe roxe: roxe, ib_core and ib_uverbs loaded, /dev/roxe"
	else
		bad "modprobe roxe: exit $rc ($out), loaded: $(awk '{print $1}' /proc/modules | grep -E '^(roxe|ib_core|ib_uverbs)$' | tr '\n' ' ')"
		return
	fi
	out=$(modprobe -rv roxe 2>&1) || rc=$?
	if [ $rc != 0 ] || mod_loaded roxe; then
		bad "modprobe -r roxe: exit $rc ($out)"
		return
	fi
	# kmod 30 removes the dependencies that are unused as it comes to
	# them, once: ib_core (ib_uverbs's) stays, as it does after rdma_rxe
	local m left=() usage=
	for m in ib_uverbs ib_core; do
		mod_loaded $m || continue
		left+=("$m")
		usage+=" $(awk -v m=$m '$1 == m { print m " (" $3 " users)" }' /proc/modules)"
	done
	if [ ${#left[@]} = 0 ]; then
		ok "modprobe -r roxe: $(echo $out), none of the three left"
	elif modprobe -r "${left[@]}" && ! mod_loaded ib_uverbs && ! mod_loaded ib_core; then
		ok "modprobe -r roxe: $(echo $out), left:$usage, gone with modprobe -r ${left[*]}"
	else
		bad "modprobe -r roxe: $(echo $out), left:$usage, which modprobe -r ${left[*]} cannot remove"
	fi
	# the control: rdma_rxe, a module of the kernel's own with the same two
	if modprobe rdma_rxe && out=$(modprobe -rv rdma_rxe 2>&1); then
		log "(control: modprobe rdma_rxe, modprobe -rv rdma_rxe: $(echo $out); left: $(awk '$1 ~ /^(ib_core|ib_uverbs)$/ { print $1 }' /proc/modules | tr '\n' ' '))"
		for m in ib_uverbs ib_core; do mod_loaded $m && modprobe -r $m; done
	fi
	mod_loaded ib_core && bad "ib_core loaded before roxe.service starts" || true
}

step_start() {
	local rc=0 t0=$SECONDS st
	timeout 60 systemctl start roxe.service || rc=$?
	st="$(unit_prop roxe.service ActiveState)/$(unit_prop roxe.service SubState)"
	if [ $rc = 0 ] && [ "$st" = active/running ]; then
		ok "systemctl start roxe.service: $st in $((SECONDS - t0)) s (Type=notify: READY=1), status: $(unit_prop roxe.service StatusText)"
	else
		bad "systemctl start roxe.service: exit $rc$([ $rc = 124 ] && echo ' (no READY=1 in 60 s)'), $st"
		journalctl -b -u roxe.service -u modprobe@roxe.service --no-pager 2>&1 | tail -n 15 | sed 's/^/    /'
		return 1
	fi
	mod_loaded roxe && [ -c /dev/roxe ] &&
		ok "roxe.ko loaded by the unit (modprobe@roxe.service: $(unit_prop modprobe@roxe.service Result))" ||
		bad "roxe.service active without roxe.ko loaded"
}

step_link_add() {
	local rc=0 out show pid cg
	out=$(rdma link add roxe0 type roxe netdev rxb 2>&1) || rc=$?
	if [ $rc != 0 ] || ! vm_have_dev roxe0; then
		bad "rdma link add roxe0 type roxe netdev rxb: exit $rc: $out"
		journalctl -b -u roxe.service --no-pager 2>&1 | tail -n 15 | sed 's/^/    /'
		return 1
	fi
	vm_wait_for 10 vm_verbs_dev roxe0 && vm_wait_for 10 vm_gid_index roxe0 $B ||
		{ bad "roxe0: no uverbs device or RoCE v2 GID"; return 1; }
	show=$(rdma link show roxe0/1 2>&1)
	[[ $show == *"state ACTIVE"* && $show == *"netdev rxb"* ]] && ok "rdma link add roxe0 type roxe netdev rxb: $show" ||
		bad "rdma link show roxe0/1: $show"
	pid=$(pgrep -f 'roxed .*--netdev rxb' | sed -n 1p || true)
	cg=$([ -n "$pid" ] && cat "/proc/$pid/cgroup")
	[[ $cg == *"/roxe.service"* ]] && ok "roxe0's roxed (pid $pid) runs in $cg" ||
		bad "roxe0's roxed: pid '$pid', cgroup '$cg'"
}

PORT=19200
pingpong() {
	local sdev=$1 sg=$2 cdev=$3 cg=$4 saddr=$5
	PORT=$((PORT + 1))
	vm_run_pair "ibv_rc_pingpong -c, server $sdev, client $cdev" vm_listening $PORT ibv_rc_pingpong \
		"$sdev" "$sg" "$cdev" "$cg" "$saddr" -g -c -s 4096 -n 50 || true
}

step_delete_stop() {
	local rc=0 out st res
	out=$(rdma link delete roxe0 2>&1) || rc=$?
	[ $rc = 0 ] && vm_no_dev roxe0 && ok "rdma link delete roxe0: gone" || bad "rdma link delete roxe0: exit $rc: $out"
	rdma link delete rxe0 || bad "rdma link delete rxe0"
	rc=0
	systemctl stop roxe.service || rc=$?
	st=$(unit_prop roxe.service ActiveState) res=$(unit_prop roxe.service Result)
	out=$(unit_prop roxe.service ExecMainStatus)
	[ $rc = 0 ] && [ "$st" = inactive ] && [ "$res" = success ] && [ "$out" = 0 ] &&
		ok "systemctl stop roxe.service: $st, result $res, roxed exited $out" ||
		bad "systemctl stop roxe.service: exit $rc, $st, result $res, roxed's status $out"
}

step_purge() {
	local rc=0 out left u
	# dkms remove: the module out of memory and of the tree
	rmmod roxe || bad "rmmod roxe"
	rm -f "$DKMS_KO"
	rmdir "${DKMS_KO%/*}" "${DKMS_KO%/*/*}" 2>/dev/null || true
	depmod -a "$KVER" || bad "depmod -a"
	dpkg --purge "${PKGS[@]}" >"$ROXE_VM_OUT/dpkg-purge.log" 2>&1 || rc=$?
	local known=()
	for u in "${PKGS[@]}"; do dpkg -s "$u" >/dev/null 2>&1 && known+=("$u"); done
	if [ $rc = 0 ] && [ ${#known[@]} = 0 ]; then
		ok "dpkg --purge ${PKGS[*]}: gone"
	else
		bad "dpkg --purge: exit $rc, still known to dpkg: ${known[*]-}"
		sed 's/^/    /' "$ROXE_VM_OUT/dpkg-purge.log"
	fi
	file_list >"$ROXE_VM_OUT/files.after"
	left=$(list_diff "$ROXE_VM_OUT/files.before" "$ROXE_VM_OUT/files.after")
	if [ -z "$left" ]; then
		ok "the root's file list is as before dpkg -i ($(wc -l <"$ROXE_VM_OUT/files.after") paths differ from the host's, all as before)"
	else
		bad "the root's file list differs from before dpkg -i:"
		sed 's/^/    /' <<<"$left"
	fi
	out=$(systemctl list-unit-files --no-legend 'roxe.*' 'roxed@*' 2>&1 || true)
	[ -z "$out" ] && ok "systemctl list-unit-files: no roxe unit" || bad "units left: $out"
	u=$(unit_prop roxe.service LoadState)
	[ "$u" = not-found ] && ok "roxe.service: $u (daemon reloaded)" || bad "roxe.service: LoadState $u"
	out=$(find /etc/systemd /run/systemd/system /etc/modules-load.d /usr/lib/modules-load.d \
		/etc/modprobe.d /usr/lib/modprobe.d -name '*roxe*' ! -name 'roxe-vm*' 2>/dev/null || true)
	[ -z "$out" ] && ok "no roxe unit link, modules-load.d or modprobe.d entry" || bad "left: $out"
}

# step_journal: what systemd said of roxe's units all along: no complaint
# about a setting (unknown, ignored, invalid, unsupported) or a failure
step_journal() {
	local w
	journalctl -b --no-pager -o short-monotonic >"$ROXE_VM_OUT/journal" 2>&1 || true
	w=$(grep -E '(/roxed?@?\.service:[0-9]+: |roxed?(@[^ :]*)?\.service: )' "$ROXE_VM_OUT/journal" |
		grep -Ei 'unknown|ignor|invalid|not supported|deprecated|failed|failure|timed out' || true)
	[ -z "$w" ] && ok "journal: systemd said nothing against roxe's units ($(grep -cE 'roxed?(@[^ :]*)?\.service' "$ROXE_VM_OUT/journal") lines on them)" ||
		{ bad "journal: systemd on roxe's units:"; sed 's/^/    /' <<<"$w"; }
}

guest_main() {
	local t0=$SECONDS GX GR
	KVER=$(uname -r)
	KO=$ROXE_TOP/build/kmod/$KVER/roxe.ko DKMS_KO=/lib/modules/$KVER/updates/dkms/roxe.ko
	step_systemd
	step_no_preload
	rm -f /var/lib/man-db/auto-update
	file_list >"$ROXE_VM_OUT/files.before"
	if step_install; then
		step_installed
		step_modprobe
		if step_start; then
			vm_veth_pair rxa $A rxb $B || { bad "veth pair"; exit 1; }
			if GX=$(vm_rxe_up rxa $A) && step_link_add; then
				GR=$(vm_gid_index roxe0 $B)
				pingpong roxe0 "$GR" rxe0 "$GX" $B
				pingpong rxe0 "$GX" roxe0 "$GR" $A
			else
				[ -n "${GX:-}" ] || bad "rdma link add rxe0 type rxe netdev rxa"
			fi
			step_delete_stop
		fi
	fi
	step_purge
	step_journal
	vm_check_dmesg
	log "guest part took $((SECONDS - t0)) s"
	[ $fail = 0 ] && log "all passed" || log "FAILED"
	exit $fail
}

# ============================ host side ===================================
host_missing() { echo "deb_systemd: FAIL: missing: $*"; exit $KSFT_FAIL; }

host_main() {
	local top out mods c t0=$SECONDS
	top=$(find_top) || host_missing "cannot find the roxe tree (tools/vm/run.sh)"
	out=$(vm_out deb-systemd)
	vm_host_ready
	for c in /lib/systemd/systemd dpkg depmod ibv_rc_pingpong; do
		[ -x "$c" ] || command -v "$c" >/dev/null || host_missing "$c (the guest boots the host's root)"
	done
	for c in dpkg-buildpackage dh dh_dkms; do command -v $c >/dev/null || host_missing "$c (make deb)"; done
	vm_need_kmod "$top"
	make -s -C "$top" deb >"$top/build/vm/deb-systemd.make.log" 2>&1 ||
		{ tail -20 "$top/build/vm/deb-systemd.make.log"; echo "deb_systemd: FAIL: make deb"; exit $KSFT_FAIL; }
	echo "deb_systemd: make deb and make kmod in $((SECONDS - t0)) s"
	mods=$top/build/vm/deb-systemd-modules-$KVER
	vm_module_tree "$mods" "${MODULES[@]}" || host_missing "the module tree for $KVER"
	t0=$SECONDS
	vm_run_guest deb_systemd "$out" 420 --systemd --env "ROXE_VM_MODULES=$mods/lib/modules"
	echo "deb_systemd: the VM ran $((SECONDS - t0)) s"
	echo "deb_systemd: PASS"
	exit $KSFT_PASS
}

if [ "${ROXE_VM_GUEST:-}" = 1 ]; then
	. "$ROXE_TOP/selftests/vm/vm_lib.sh"
	guest_main
else
	. "$(dirname "$(readlink -f "$0")")/vm_lib.sh"
	host_main
fi
