#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make install into a DESTDIR, as a package build does it
# (make install DESTDIR=... PREFIX=/usr), and make uninstall:
#   - the tree holds exactly what it should: every program of build/bin/
#     (in sbin/ when its manual page is in section 8, else in bin/), every
#     manual page in its section, libroxe.so.VERSION with its SONAME and
#     the libroxe.so.0 and libroxe.so links, libroxe.a, roxe.pc, the public
#     headers (include/roxe/, no other: not include/uapi/ nor
#     include/private/), the XDP object, roxed@.service and roxe.service,
#     dkms.conf and roxe.ko's sources in /usr/src/roxe-VERSION, and no
#     modules-load.d entry (the units load roxe.ko when they start); modes
#     755 for programs, 644 for the rest, nothing group- or world-writable;
#   - the installed tools need libroxe.so.0 and carry no RUNPATH for
#     /usr/lib (one to LIBDIR for PREFIX=/opt/roxe); with the DESTDIR's
#     library every installed program answers --help;
#   - pkg-config from the DESTDIR (PKG_CONFIG_SYSROOT_DIR) builds a program
#     against the installed headers and the shared library, and --static
#     against libroxe.a, and both run (a device on lo, in a network
#     namespace of their own); each public header compiles alone;
#   - the unit runs roxed in the foreground with Type=notify, restarts it
#     neither after exit 2 nor 78 and at most StartLimitBurst times,
#     allows --rt-priority (CAP_SYS_NICE, RestrictRealtime not yes), passes
#     systemd-analyze verify, and security at exposure at most 4.0 (when
#     systemd-analyze is there);
#   - dkms add and build of the installed /usr/src/roxe-VERSION against the
#     6.1 headers, in a scratch dkms tree (when dkms is installed): the
#     module's modinfo version is VERSION;
#   - so is that of every roxe.ko make kmod built (build/kmod/, and
#     build/kmod/RELEASE/; none is required: make kmod is no part of make);
#   - make uninstall leaves no file or link, and no file it did not install
#     is touched.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
log() { echo "# $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
ok() { n=$((n + 1)); log "ok: $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); log "FAIL: $*"; }

d=$tmp/root
if ! make -s -C "$top" install DESTDIR="$d" PREFIX=/usr >"$tmp/make.log" 2>&1; then
	log "FAIL: make install DESTDIR=$d PREFIX=/usr:"
	tail -20 "$tmp/make.log" | sed 's/^/#   /'
	exit $KSFT_FAIL
fi
ver=$(sed -n 's/^Version: //p' "$d/usr/lib/pkgconfig/roxe.pc" 2>/dev/null)
[ -n "$ver" ] || { log "FAIL: no version in the installed roxe.pc"; exit $KSFT_FAIL; }

# --- what the tree must hold ------------------------------------------------
# public headers: include/roxe/, all of it (what is installed lives there)
hdrs=($(cd "$top/include/roxe" && ls -- *.h))
# roxe.ko's sources and the shared headers they include (transitively),
# each where the tree has it: include/uapi/roxe/ first, as Kbuild looks
khdrs=()
kq=($(sed -n 's|^#include [<"]roxe/\(.*\)[>"]|\1|p' "$top"/kmod/*.[ch] | sort -u))
while [ ${#kq[@]} -gt 0 ]; do
	h=${kq[0]} kq=("${kq[@]:1}")
	for kd in include/uapi/roxe include/roxe; do
		[ -f "$top/$kd/$h" ] && break
	done
	[[ " ${khdrs[*]-} " = *" $kd/$h "* ]] && continue
	khdrs+=("$kd/$h")
	kq+=($(sed -n 's|^#include [<"]roxe/\(.*\)[>"]|\1|p' "$top/$kd/$h"))
done
{
	for p in "$top"/build/bin/*; do
		p=${p##*/}
		if [ -f "$top/man/$p.8" ]; then echo "755 usr/sbin/$p"; else echo "755 usr/bin/$p"; fi
	done
	for m in "$top"/man/*.[1-8]; do m=${m##*/}; echo "644 usr/share/man/man${m##*.}/$m"; done
	echo "644 usr/lib/libroxe.so.$ver"
	echo "link usr/lib/libroxe.so.0 -> libroxe.so.$ver"
	echo "link usr/lib/libroxe.so -> libroxe.so.0"
	echo "644 usr/lib/libroxe.a"
	echo "644 usr/lib/pkgconfig/roxe.pc"
	for h in "${hdrs[@]}"; do echo "644 usr/include/roxe/$h"; done
	echo "644 usr/lib/bpf/roxe_xdp.bpf.o"
	echo "644 usr/lib/systemd/system/roxed@.service"
	echo "644 usr/lib/systemd/system/roxe.service"
	echo "644 usr/src/roxe-$ver/dkms.conf"
	for f in "$top"/kmod/Kbuild "$top"/kmod/*.[ch]; do echo "644 usr/src/roxe-$ver/kmod/${f##*/}"; done
	for h in "${khdrs[@]}"; do echo "644 usr/src/roxe-$ver/$h"; done
} | sort >"$tmp/want"
(cd "$d" && find . \( -type f -o -type l \) -printf '%P\n' | sort | while read -r f; do
	if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"; else echo "$(stat -c %a "$f") $f"; fi
done) | sort >"$tmp/have"
if cmp -s "$tmp/want" "$tmp/have"; then
	ok "the tree holds exactly the $(wc -l <"$tmp/want") expected files and links, with their modes"
else
	bad "the installed tree differs (< expected only, > installed only):"
	diff "$tmp/want" "$tmp/have" | grep '^[<>]' | sed 's/^/#   /'
fi
w=$(find "$d" -type f -perm /7022)
[ -z "$w" ] && ok "nothing setuid, setgid, sticky, group- or world-writable" || bad "bad modes: $w"
# roxe.ko is loaded by the units that use it, not at every boot
[ ! -e "$d/usr/lib/modules-load.d" ] && ok "no modules-load.d entry" ||
	bad "make install loads a module at boot: $(ls -A "$d/usr/lib/modules-load.d")"
file -b "$d/usr/lib/bpf/roxe_xdp.bpf.o" 2>/dev/null | grep -q 'eBPF' ||
	readelf -h "$d/usr/lib/bpf/roxe_xdp.bpf.o" 2>/dev/null | grep -q 'Machine:.*BPF' &&
	ok "lib/bpf/roxe_xdp.bpf.o is a BPF object" || bad "lib/bpf/roxe_xdp.bpf.o is no BPF object"

# --- ELF: SONAME, NEEDED, RUNPATH; the programs run ---------------------------
so=$d/usr/lib/libroxe.so.$ver
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libroxe.so.0 ] && ok "libroxe.so.$ver: SONAME libroxe.so.0" || bad "SONAME '$soname'"
export LD_LIBRARY_PATH=$d/usr/lib
helps=0 needs=0
for p in "$d"/usr/bin/* "$d"/usr/sbin/*; do
	name=${p#$d/}
	rp=$(readelf -d "$p" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
	[ -z "$rp" ] || bad "$name has a RUNPATH ($rp) though libroxe is in /usr/lib"
	if readelf -d "$p" | grep -q 'NEEDED.*libroxe\.so\.0'; then
		got=$(ldd "$p" | sed -n 's/.*libroxe\.so\.0 => \([^ ]*\) .*/\1/p')
		[ "$(readlink -f "$got")" = "$(readlink -f "$so")" ] && needs=$((needs + 1)) ||
			bad "$name: ldd finds libroxe.so.0 at '$got', not the DESTDIR's"
	fi
	# the short manual, which names the program
	if out=$("$p" --help 2>&1) && grep -q -- "${p##*/}" <<<"$out"; then
		helps=$((helps + 1))
	else
		bad "$name --help: $(head -3 <<<"$out")"
	fi
done
[ $needs -gt 0 ] || bad "no installed program links libroxe.so.0"
ok "$helps installed programs answer --help; $needs of them with the DESTDIR's libroxe.so.0"
unset LD_LIBRARY_PATH

# PREFIX=/opt/roxe: LIBDIR is no system directory, the tools find it by RUNPATH
if make -s -C "$top" install DESTDIR="$tmp/opt" PREFIX=/opt/roxe >"$tmp/make2.log" 2>&1; then
	rp=$(readelf -d "$tmp/opt/opt/roxe/bin/roxe-perf" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
	[ "$rp" = /opt/roxe/lib ] && ok "PREFIX=/opt/roxe: RUNPATH $rp" || bad "PREFIX=/opt/roxe: RUNPATH '$rp'"
	grep -qx 'ExecStart=/opt/roxe/sbin/roxed --netdev %i --foreground $ROXED_OPTS' \
		"$tmp/opt/opt/roxe/lib/systemd/system/roxed@.service" &&
		grep -qx 'libdir=/opt/roxe/lib' "$tmp/opt/opt/roxe/lib/pkgconfig/roxe.pc" &&
		ok "PREFIX=/opt/roxe: the unit's ExecStart and roxe.pc's libdir follow" ||
		bad "PREFIX=/opt/roxe: unit or roxe.pc do not follow PREFIX"
else
	bad "make install PREFIX=/opt/roxe: $(tail -3 "$tmp/make2.log")"
fi

# --- building against the installed tree --------------------------------------
cat >"$tmp/app.c" <<'APP'
#include <stdio.h>
#include <roxe/verbs.h>

int main(void)
{
	struct roxe_device_attr da = { .ifname = "lo", .backend = ROXE_BACKEND_UDP,
				       .engines = 1, .mtu = 1024 };
	struct ibv_device_attr a;
	struct roxe_device *dev;
	int err = roxe_device_open(&da, &dev);

	if (err) {
		fprintf(stderr, "roxe_device_open: %d\n", err);
		return 1;
	}
	if (roxe_query_device(dev, &a))
		return 1;
	printf("max_qp %d\n", a.max_qp);
	roxe_device_close(dev);
	return 0;
}
APP
# inns CMD...: CMD in a network namespace of its own, lo up (its device
# binds lo's port 4791, which nothing else there has)
inns() { unshare -rn sh -c 'ip link set lo up && exec "$@"' sh "$@"; }
netns=yes
unshare -rn true 2>/dev/null || { netns=; log "no network namespace (unshare -rn): programs built, not run"; }
# roxe.pc from the DESTDIR; the libraries it requires (Requires.private)
# from the system's own .pc files
syspc=$(pkg-config --variable pc_path pkg-config)
export PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_LIBDIR=$d/usr/lib/pkgconfig:$syspc PKG_CONFIG_PATH=
cflags=$(pkg-config --cflags roxe 2>&1) libs=$(pkg-config --libs roxe 2>&1)
slibs=$(pkg-config --static --libs roxe 2>&1)
got=$(echo $cflags $libs)
[[ " $cflags " == *" -I$d/usr/include "* ]] && [ "$(echo $libs)" = "-L$d/usr/lib -lroxe" ] &&
	ok "pkg-config --cflags --libs roxe: $got" || bad "pkg-config: '$got'"
if ! cc -std=gnu11 -Wall -Wextra -Werror -o "$tmp/app" "$tmp/app.c" $cflags $libs 2>"$tmp/err"; then
	bad "a program does not build against the installed tree:"; sed 's/^/#   /' "$tmp/err"
elif [ -z "$netns" ]; then
	ok "built against the installed headers and libroxe.so.0"
elif ! out=$(LD_LIBRARY_PATH=$d/usr/lib inns "$tmp/app" 2>&1); then
	bad "the program built against the installed libroxe.so fails: $out"
else
	ok "built against the installed headers and libroxe.so.0, it runs: $out"
fi
if ! cc -std=gnu11 -Wall -Wextra -Werror -static-libgcc -o "$tmp/app-static" "$tmp/app.c" \
		$cflags -Wl,-Bstatic -lroxe -Wl,-Bdynamic ${slibs/-lroxe/} 2>"$tmp/err"; then
	bad "a program does not link libroxe.a with pkg-config --static:"; sed 's/^/#   /' "$tmp/err"
elif readelf -d "$tmp/app-static" | grep -q 'libroxe'; then
	bad "the --static build still needs libroxe.so"
elif [ -z "$netns" ]; then
	ok "linked with libroxe.a and pkg-config --static --libs"
elif ! out=$(inns "$tmp/app-static" 2>&1); then
	bad "the program linked with libroxe.a fails: $out"
else
	ok "linked with libroxe.a and pkg-config --static --libs, it runs: $out"
fi
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR PKG_CONFIG_PATH
alone=0
for h in "${hdrs[@]}"; do
	if printf '#include <roxe/%s>\nint main(void) { return 0; }\n' "$h" |
		cc -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -nostdinc -isystem "$(cc -print-file-name=include)" \
			-isystem /usr/include/x86_64-linux-gnu -isystem /usr/include -I"$d/usr/include" -x c - 2>"$tmp/err"; then
		alone=$((alone + 1))
	else
		bad "installed roxe/$h does not compile on its own:"; sed 's/^/#   /' "$tmp/err"
	fi
done
ok "$alone installed public headers compile alone"

# --- the unit -----------------------------------------------------------------
unit=$d/usr/lib/systemd/system/roxed@.service
grep -qx 'ExecStart=/usr/sbin/roxed --netdev %i --foreground $ROXED_OPTS' "$unit" &&
	ok "unit: ExecStart /usr/sbin/roxed --netdev %i --foreground" || bad "unit: $(grep ExecStart "$unit")"
# readiness through sd_notify (roxed stays in the foreground: no PID file)
grep -qx 'Type=notify' "$unit" && ok "unit: Type=notify" || bad "unit: $(grep '^Type=' "$unit")"
# no restart loop on a failure a restart cannot fix: usage (2), the
# settings do not fit the host (78); the rest stops at StartLimitBurst
if grep -qx 'RestartPreventExitStatus=2 78' "$unit" && grep -q '^StartLimitBurst=' "$unit"; then
	ok "unit: no restart after exit 2 or 78, $(sed -n 's/^StartLimitBurst=//p' "$unit") starts in $(sed -n 's/^StartLimitIntervalSec=//p' "$unit") s at most"
else
	bad "unit: $(grep -E '^(RestartPreventExitStatus|StartLimit)' "$unit" | tr '\n' ' ')"
fi
# --rt-priority (roxed(8)) works in the unit: SCHED_FIFO needs CAP_SYS_NICE
# and no RestrictRealtime=yes
if grep -q '^CapabilityBoundingSet=.*CAP_SYS_NICE' "$unit" && ! grep -qx 'RestrictRealtime=yes' "$unit"; then
	ok "unit: --rt-priority allowed (CAP_SYS_NICE, realtime not restricted)"
else
	bad "unit: --rt-priority would fail: $(grep -E '^(CapabilityBoundingSet|RestrictRealtime)' "$unit" | tr '\n' ' ')"
fi
if command -v systemd-analyze >/dev/null; then
	# the instance for lo, its ExecStart at the DESTDIR's roxed
	mkdir -p "$tmp/units"
	sed "s|^ExecStart=/usr|ExecStart=$d/usr|" "$unit" >"$tmp/units/roxed@.service"
	ln -s roxed@.service "$tmp/units/roxed@lo.service"
	if out=$(cd "$tmp/units" && systemd-analyze verify --man=no "$tmp/units/roxed@lo.service" 2>&1) &&
	   [ -z "$out" ]; then
		ok "systemd-analyze verify roxed@lo.service: clean"
	else
		bad "systemd-analyze verify: $out"
	fi
	if out=$(systemd-analyze security --offline=true --threshold=40 "$tmp/units/roxed@lo.service" 2>&1); then
		ok "systemd-analyze security: $(grep -o 'exposure level.*' <<<"$out")"
	else
		bad "systemd-analyze security above 4: $(grep -o 'exposure level.*' <<<"$out")"
	fi
	# roxe.service: roxed --links, with the same sandbox
	links=$d/usr/lib/systemd/system/roxe.service
	grep -qx 'ExecStart=/usr/sbin/roxed --links $ROXED_OPTS' "$links" &&
		ok "roxe.service: ExecStart /usr/sbin/roxed --links" || bad "roxe.service: $(grep ExecStart "$links")"
	sed "s|^ExecStart=/usr|ExecStart=$d/usr|" "$links" >"$tmp/units/roxe.service"
	if out=$(cd "$tmp/units" && systemd-analyze verify --man=no "$tmp/units/roxe.service" 2>&1) &&
	   [ -z "$out" ]; then
		ok "systemd-analyze verify roxe.service: clean"
	else
		bad "systemd-analyze verify roxe.service: $out"
	fi
	out=$(systemd-analyze security --offline=true --threshold=40 "$tmp/units/roxe.service" 2>&1) &&
		ok "systemd-analyze security roxe.service: $(grep -o 'exposure level.*' <<<"$out")" ||
		bad "systemd-analyze security roxe.service above 4: $(grep -o 'exposure level.*' <<<"$out")"
else
	log "systemd-analyze missing: the unit is not verified"
fi

# --- dkms -----------------------------------------------------------------------
# against the 6.1 guest kernel's headers, unpacked in build/vm/kernels/
# (make kernels), not installed
kver=$("$top/tools/vm/kver.sh" 6.1 2>/dev/null) || kver=
kdir=$("$top/tools/vm/kver.sh" --root)/usr/src/linux-headers-$kver
if ! command -v dkms >/dev/null; then
	log "dkms missing (tools/scripts/install-deps.sh): dkms build not tried"
elif [ -z "$kver" ] || [ ! -f "$kdir/Makefile" ]; then
	log "no 6.1 guest kernel headers in build/vm/kernels/ (make kernels): dkms build not tried"
else
	dk=(--dkmstree "$tmp/dkms" --sourcetree "$d/usr/src" --installtree "$tmp/dkms-inst")
	mkdir -p "$tmp/dkms" "$tmp/dkms-inst"
	if ! dkms add -m roxe -v "$ver" "${dk[@]}" >"$tmp/dkms.log" 2>&1; then
		bad "dkms add roxe/$ver: $(tail -5 "$tmp/dkms.log")"
	elif ! dkms build -m roxe -v "$ver" -k "$kver" --kernelsourcedir "$kdir" \
			"${dk[@]}" >>"$tmp/dkms.log" 2>&1; then
		bad "dkms build roxe/$ver -k $kver:"
		tail -20 "$tmp/dkms.log" | sed 's/^/#   /'
		cat "$tmp"/dkms/roxe/"$ver"/build/make.log 2>/dev/null | tail -20 | sed 's/^/#   /'
	else
		ko=$(find "$tmp/dkms/roxe/$ver/$kver" -name 'roxe.ko*' | head -1)
		vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
		mv=$(modinfo -F version "$ko" 2>/dev/null)
		[ -n "$ko" ] && [ "${vm%% *}" = "$kver" ] && [ "$mv" = "$ver" ] &&
			ok "dkms add + build roxe/$ver for $kver: ${ko##*/}, vermagic $vm, version $mv" ||
			bad "dkms build: no roxe.ko $ver for $kver (found '$ko', vermagic '$vm', version '$mv')"
	fi
fi

# --- roxe.ko's version ------------------------------------------------------------
kos=$(ls "$top"/build/kmod/roxe.ko "$top"/build/kmod/*/roxe.ko 2>/dev/null)
if [ -z "$kos" ]; then
	log "no roxe.ko in build/kmod/ (make kmod): its version not checked"
fi
for ko in $kos; do
	mv=$(modinfo -F version "$ko" 2>/dev/null)
	[ "$mv" = "$ver" ] && ok "${ko#$top/}: modinfo version $mv" ||
		bad "${ko#$top/}: modinfo version '$mv', not $ver"
done

# --- uninstall --------------------------------------------------------------------
echo keep >"$d/usr/bin/not-roxe"
if ! make -s -C "$top" uninstall DESTDIR="$d" PREFIX=/usr >"$tmp/make3.log" 2>&1; then
	bad "make uninstall: $(tail -3 "$tmp/make3.log")"
else
	left=$(cd "$d" && find . \( -type f -o -type l \) ! -path ./usr/bin/not-roxe -printf '%P\n')
	[ -z "$left" ] && ok "make uninstall leaves no file or link" || bad "make uninstall leaves: $left"
	[ -f "$d/usr/bin/not-roxe" ] && ok "make uninstall keeps a file it did not install" ||
		bad "make uninstall removed usr/bin/not-roxe"
	[ ! -e "$d/usr/src/roxe-$ver" ] && [ ! -e "$d/usr/include/roxe" ] &&
		ok "make uninstall removes /usr/src/roxe-$ver and include/roxe/" ||
		bad "make uninstall leaves the directories it made"
fi

log "$((n - fails))/$n checks passed"
[ $fails = 0 ] && exit $KSFT_PASS || exit $KSFT_FAIL
