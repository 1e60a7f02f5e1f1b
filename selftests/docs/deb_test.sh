#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# make deb and the Debian packages it puts in build/deb/ (debian/):
#   - exactly roxe, libroxe0, libroxe-dev (the host's architecture) and
#     roxe-dkms (all), at the Makefile's VERSION; the tree is as clean (git
#     status) after make deb as before;
#   - each holds exactly what it should (dpkg-deb -c: nothing missing,
#     nothing stray, no empty directory), all root-owned, programs 755 and
#     the rest 644: roxe the programs (sbin/ for those with a section 8
#     page), the units from tools/systemd/ in /lib/systemd/system, the XDP
#     object and every manual page but section 3's; libroxe0 libroxe.so.0;
#     libroxe-dev the headers of include/roxe/, libroxe.so, libroxe.a,
#     roxe.pc and section 3; roxe-dkms dkms.conf and roxe.ko's sources; and
#     the lintian overrides; no modules-load.d entry anywhere;
#   - lintian: no error and no warning (an override says why in
#     debian/*.lintian-overrides);
#   - roxe and libroxe-dev depend on libroxe0 (= VERSION), roxe-dkms on
#     dkms; libroxe0's symbols file lists every ROXE_0.1 symbol the library
#     exports;
#   - roxe, libroxe0 and libroxe-dev installed with dpkg --root into a
#     scratch root, their maintainer scripts run there (chrootless,
#     DPKG_ROOT): the units are there with ExecStart /usr/sbin/roxed,
#     nothing is enabled or started, the programs run with the packaged
#     libroxe (no RUNPATH), and dpkg --purge leaves nothing behind, not
#     even the links of roxe.service and roxed@eth9.service enabled;
#   - roxe-dkms's maintainer scripts register roxe/VERSION with dkms and
#     remove it, and dkms add takes its /usr/src/roxe-VERSION (a scratch
#     dkms tree; install_test.sh builds the same sources).
# Runs make deb (about 30 s on two cores) and lintian (5 s).
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

for c in dpkg-buildpackage dh dh_dkms lintian; do
	command -v "$c" >/dev/null && continue
	log "SKIP: $c missing (dpkg-dev, debhelper, dh-dkms, lintian: tools/scripts/install-deps.sh --for check)"
	exit $KSFT_SKIP
done
ver=$(sed -n 's/^VERSION *:= *//p' "$top/Makefile")
arch=$(dpkg --print-architecture)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
[ -n "$ver" ] && [ -n "$ma" ] || { log "FAIL: no VERSION in the Makefile or no multiarch triplet"; exit $KSFT_FAIL; }

# --- make deb ---------------------------------------------------------------
gitst() { git -C "$top" status --porcelain 2>/dev/null; }
before=$(gitst)
t0=$SECONDS
if ! make -s -C "$top" deb >"$tmp/make.log" 2>&1; then
	log "FAIL: make deb:"
	tail -30 "$tmp/make.log" | sed 's/^/#   /'
	exit $KSFT_FAIL
fi
ok "make deb in $((SECONDS - t0)) s"
[ "$(gitst)" = "$before" ] && ok "make deb leaves the tree as it was (git status)" ||
	bad "make deb changed the tree: $(diff <(echo "$before") <(gitst) | grep '^[<>]')"
out=$top/build/deb
pkgs=(roxe libroxe0 libroxe-dev roxe-dkms)
declare -A deb=()
for p in "${pkgs[@]}"; do
	a=$arch
	[ "$p" = roxe-dkms ] && a=all
	deb[$p]=$out/${p}_${ver}_$a.deb
done
have=$(cd "$out" && ls -- *.deb 2>/dev/null)
want=$(for p in "${pkgs[@]}"; do echo "${deb[$p]##*/}"; done | sort)
[ "$have" = "$want" ] && ok "build/deb/ holds $(echo $want)" ||
	bad "build/deb/ holds '$(echo $have)', not '$(echo $want)'"
for p in "${pkgs[@]}"; do
	[ -f "${deb[$p]}" ] || { log "FAIL: ${deb[$p]} missing: nothing more to check"; exit $KSFT_FAIL; }
done

# --- what each package holds --------------------------------------------------
# "MODE OWNER PATH" for a file, "link PATH -> TARGET" for a link
F='-rw-r--r-- root/root' X='-rwxr-xr-x root/root'
# the programs: tools/NAME.c, tools/NAME/main.c, roxed (the Makefile's rule)
progs=(roxed)
for f in "$top"/tools/*.c "$top"/tools/*/main.c; do
	f=${f#$top/tools/}
	progs+=("${f%%[./]*}")
done
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
want_files() {
	local p=$1 m h f u
	echo "$F usr/share/doc/$p/changelog.gz"
	echo "$F usr/share/doc/$p/copyright"
	case $p in
	roxe)
		for f in "${progs[@]}"; do
			if [ -f "$top/man/$f.8" ]; then echo "$X usr/sbin/$f"; else echo "$X usr/bin/$f"; fi
		done
		for m in "$top"/man/*.[124-8]; do m=${m##*/}; echo "$F usr/share/man/man${m##*.}/$m.gz"; done
		for u in "$top"/tools/systemd/*.service.in; do u=${u##*/}; echo "$F lib/systemd/system/${u%.in}"; done
		echo "$F usr/lib/$ma/bpf/roxe_xdp.bpf.o"
		echo "$F usr/share/lintian/overrides/roxe" ;;
	libroxe0)
		echo "$F usr/lib/$ma/libroxe.so.$ver"
		echo "link usr/lib/$ma/libroxe.so.0 -> libroxe.so.$ver" ;;
	libroxe-dev)
		for h in "$top"/include/roxe/*.h; do echo "$F usr/include/roxe/${h##*/}"; done
		echo "link usr/lib/$ma/libroxe.so -> libroxe.so.0"
		echo "$F usr/lib/$ma/libroxe.a"
		echo "$F usr/lib/$ma/pkgconfig/roxe.pc"
		for m in "$top"/man/*.3; do m=${m##*/}; echo "$F usr/share/man/man3/$m.gz"; done ;;
	roxe-dkms)
		echo "$F usr/src/roxe-$ver/dkms.conf"
		for f in "$top"/kmod/Kbuild "$top"/kmod/*.[ch]; do echo "$F usr/src/roxe-$ver/kmod/${f##*/}"; done
		for h in "${khdrs[@]}"; do echo "$F usr/src/roxe-$ver/$h"; done ;;
	esac
}
for p in "${pkgs[@]}"; do
	want_files "$p" | sort >"$tmp/$p.want"
	dpkg-deb -c "${deb[$p]}" >"$tmp/$p.list"
	# files and links, then directories: each must lead to something
	awk '$1 ~ /^l/ { sub(/^\.\//, "", $6); print "link", $6, $7, $8; next }
	     $1 ~ /^-/ { sub(/^\.\//, "", $6); print $1, $2, $6 }' "$tmp/$p.list" | sort >"$tmp/$p.have"
	if cmp -s "$tmp/$p.want" "$tmp/$p.have"; then
		ok "$p holds exactly the $(wc -l <"$tmp/$p.want") expected files and links, with their modes"
	else
		bad "$p differs (< expected only, > in the package only):"
		diff "$tmp/$p.want" "$tmp/$p.have" | grep '^[<>]' | sed 's/^/#   /'
	fi
	empty=$(awk '$1 ~ /^d/ { sub(/^\.\//, "", $6); sub(/\/$/, "", $6); print $1, $2, $6 }' "$tmp/$p.list" |
		while read -r mode owner d; do
			[ "$mode $owner" = "drwxr-xr-x root/root" ] || { echo "$mode $owner $d"; continue; }
			[ -z "$d" ] || grep -qF " $d/" "$tmp/$p.have" || echo "$d (empty)"
		done)
	[ -z "$empty" ] && ok "$p: every directory 755 root and leads to a file" ||
		bad "$p: directories: $(echo $empty)"
done
ml=$(grep -h 'modules-load' "$tmp"/*.list)
[ -z "$ml" ] && ok "no package loads roxe.ko at boot (no modules-load.d entry)" || bad "modules-load.d: $ml"

# --- lintian ------------------------------------------------------------------
# the binary packages, the dbgsym ones and the source package
lint=("$out"/*.deb "$out"/debug/*.deb "$out"/src/*.dsc)
lintian --fail-on error,warning --display-info --pedantic --tag-display-limit 0 "${lint[@]}" \
	>"$tmp/lintian" 2>&1
rc=$?
# lintian's own note when run as root is not a tag
grep -v '^running with root privileges' "$tmp/lintian" >"$tmp/tags"
ew=$(grep -c '^[EW]: ' "$tmp/tags")
sed 's/^/#   lintian: /' "$tmp/tags"
[ "$rc" = 0 ] && [ "$ew" = 0 ] && ok "lintian: no error, no warning (${#lint[@]} files)" ||
	bad "lintian: exit $rc, $ew errors and warnings"

# --- control fields -------------------------------------------------------------
for p in "${pkgs[@]}"; do
	v=$(dpkg-deb -f "${deb[$p]}" Version) a=$(dpkg-deb -f "${deb[$p]}" Architecture)
	[ "$v" = "$ver" ] || bad "$p: Version $v, not $ver"
	[ "$a.deb" = "${deb[$p]##*_}" ] || bad "$p: Architecture $a"
done
ok "every package at version $ver"
# deps PKG: its Depends, one per line
deps() { dpkg-deb -f "${deb[$1]}" Depends | tr ',' '\n' | sed 's/^ *//; s/ *$//'; }
for p in roxe libroxe-dev; do
	grep -qx "libroxe0 (= $ver)" <(deps $p) && ok "$p depends on libroxe0 (= $ver)" ||
		bad "$p: Depends: $(dpkg-deb -f "${deb[$p]}" Depends)"
done
grep -q '^dkms\b' <(deps roxe-dkms) && ok "roxe-dkms depends on dkms" ||
	bad "roxe-dkms: Depends: $(dpkg-deb -f "${deb[roxe-dkms]}" Depends)"
grep -q '^libroxe0\b' <(deps libroxe0) && bad "libroxe0 depends on itself" || true
# every ROXE_0.1 symbol of the packaged library in the symbols file (a new
# one makes dpkg-gensymbols only warn)
dpkg-deb -x "${deb[libroxe0]}" "$tmp/lib"
dpkg-deb -I "${deb[libroxe0]}" symbols >"$tmp/symbols" 2>/dev/null
readelf -W --dyn-syms "$tmp/lib/usr/lib/$ma/libroxe.so.$ver" |
	awk '$7 != "UND" && $8 ~ /@@ROXE_0\.1$/ { sub(/@@/, "@", $8); print $8 }' | sort -u >"$tmp/exported"
miss=$(awk '{ print $1 }' "$tmp/symbols" | sort -u | comm -23 "$tmp/exported" -)
if [ ! -s "$tmp/exported" ]; then
	bad "libroxe.so.$ver exports nothing at ROXE_0.1"
elif [ -n "$miss" ]; then
	bad "debian/libroxe0.symbols lacks: $(echo $miss)"
else
	ok "libroxe0's symbols file lists all $(wc -l <"$tmp/exported") ROXE_0.1 symbols (and $(grep -c '@ROXE_PRIVATE ' "$tmp/symbols") ROXE_PRIVATE)"
fi

# --- installed into a scratch root ----------------------------------------------
# dpkg --root runs the maintainer scripts without chroot (DPKG_ROOT set:
# deb-systemd-helper works in the root); the libraries they need are the
# host's, not the root's (--force-depends)
R=$tmp/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/log"
touch "$R/var/lib/dpkg/status"
dp=(dpkg --root="$R" --log="$R/var/log/dpkg.log" --force-script-chrootless --force-depends
    --force-unsafe-io)
[ "$(id -u)" = 0 ] || dp+=(--force-not-root)
if "${dp[@]}" -i "${deb[roxe]}" "${deb[libroxe0]}" "${deb[libroxe-dev]}" >"$tmp/dpkg.log" 2>&1; then
	st=$(dpkg-query --root="$R" -W -f='${db:Status-Abbrev}' roxe libroxe0 libroxe-dev | tr -d ' ')
	[ "$st" = iiiiii ] && ok "dpkg --root -i roxe libroxe0 libroxe-dev: installed" ||
		bad "dpkg --root: status '$st'"
else
	bad "dpkg --root -i:"; grep -v 'depends on\|is not installed\|dependency problems' "$tmp/dpkg.log" | sed 's/^/#   /'
fi
for u in "$top"/tools/systemd/*.service.in; do
	u=${u##*/} u=${u%.in}
	f=$R/lib/systemd/system/$u
	ex=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$f" 2>/dev/null)
	[ "$ex" = /usr/sbin/roxed ] && [ -x "$R$ex" ] && ok "$u installed, ExecStart $ex (in the package)" ||
		bad "$u: ExecStart '$ex' (unit there: $([ -f "$f" ] && echo yes || echo no))"
done
links=$(find "$R/etc" -type l 2>/dev/null)
[ -z "$links" ] && ok "nothing enabled: no unit link under /etc" || bad "enabled: $links"
# roxe.service by its [Install] section, in the root (deb-systemd-helper
# answers only inside a maintainer script: DPKG_MAINTSCRIPT_PACKAGE)
if command -v deb-systemd-helper >/dev/null; then
	en=$(DPKG_MAINTSCRIPT_PACKAGE=roxe DPKG_ROOT=$R deb-systemd-helper is-enabled roxe.service 2>&1)
	[ "$en" = disabled ] && ok "deb-systemd-helper is-enabled roxe.service: $en" ||
		bad "deb-systemd-helper is-enabled roxe.service: $en"
fi
# No maintainer script starts a unit (deb-systemd-invoke other than stop,
# systemctl other than daemon-reload); enabling is only where an admin had
# (deb-systemd-helper's was-enabled guard), which the root above checks.
starts=$(cd "$R/var/lib/dpkg/info" && grep -H -E 'deb-systemd-invoke|systemctl ' roxe.* 2>/dev/null |
	grep -v -E 'deb-systemd-invoke +stop |systemctl --system daemon-reload')
[ -z "$starts" ] && ok "roxe's maintainer scripts start nothing" || bad "roxe's scripts start units: $starts"
runs=0
for p in "$R"/usr/bin/* "$R"/usr/sbin/*; do
	name=${p#$R/}
	rp=$(readelf -d "$p" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
	[ -z "$rp" ] || bad "$name has a RUNPATH ($rp)"
	if out=$(LD_LIBRARY_PATH=$R/usr/lib/$ma "$p" --help 2>&1) && grep -q -- "${p##*/}" <<<"$out"; then
		runs=$((runs + 1))
	else
		bad "$name --help: $(head -3 <<<"$out")"
	fi
done
got=$(LD_LIBRARY_PATH=$R/usr/lib/$ma ldd "$R/usr/bin/roxe-perf" | sed -n 's/.*libroxe\.so\.0 => \([^ ]*\) .*/\1/p')
[ "$got" = "$R/usr/lib/$ma/libroxe.so.0" ] && ok "$runs installed programs answer --help; roxe-perf with the packaged libroxe.so.0" ||
	bad "roxe-perf finds libroxe.so.0 at '$got'"
# what systemctl enable roxe.service roxed@eth9.service makes, which purge
# must take away: debhelper knows roxe.service's link, debian/roxe.postrm
# the template's instances
mkdir -p "$R/etc/systemd/system/multi-user.target.wants"
ln -s /lib/systemd/system/roxe.service "$R/etc/systemd/system/multi-user.target.wants/roxe.service"
ln -s /lib/systemd/system/roxed@.service "$R/etc/systemd/system/multi-user.target.wants/roxed@eth9.service"
if "${dp[@]}" --purge roxe libroxe-dev libroxe0 >"$tmp/purge.log" 2>&1; then
	left=$(cd "$R" && find . \( -type f -o -type l \) ! -path './var/lib/dpkg/*' ! -path ./var/log/dpkg.log)
	[ -z "$left" ] && ok "dpkg --root --purge leaves nothing behind" || bad "dpkg --purge leaves: $left"
else
	bad "dpkg --root --purge:"; sed 's/^/#   /' "$tmp/purge.log"
fi

# --- roxe-dkms --------------------------------------------------------------------
mkdir -p "$tmp/dkms-ctl"
dpkg-deb -e "${deb[roxe-dkms]}" "$tmp/dkms-ctl"
dpkg-deb -x "${deb[roxe-dkms]}" "$tmp/dkms-root"
grep -q '/usr/lib/dkms/common.postinst' "$tmp/dkms-ctl/postinst" 2>/dev/null &&
	grep -qx 'DKMS_NAME=roxe' "$tmp/dkms-ctl/postinst" && grep -qx "DKMS_VERSION=$ver" "$tmp/dkms-ctl/postinst" &&
	ok "roxe-dkms postinst: dkms add, build, install of roxe/$ver (dkms' common.postinst)" ||
	bad "roxe-dkms postinst does not register roxe/$ver with dkms"
grep -q 'dkms remove -m \$DKMS_NAME -v \$DKMS_VERSION --all' "$tmp/dkms-ctl/prerm" 2>/dev/null &&
	grep -qx "DKMS_VERSION=$ver" "$tmp/dkms-ctl/prerm" && ok "roxe-dkms prerm: dkms remove roxe/$ver --all" ||
	bad "roxe-dkms prerm does not remove roxe/$ver from dkms"
grep -qx "PACKAGE_VERSION=\"$ver\"" "$tmp/dkms-root/usr/src/roxe-$ver/dkms.conf" 2>/dev/null &&
	ok "dkms.conf: PACKAGE_VERSION=\"$ver\"" || bad "dkms.conf: $(grep PACKAGE_VERSION "$tmp/dkms-root/usr/src/roxe-$ver/dkms.conf")"
if command -v dkms >/dev/null; then
	mkdir -p "$tmp/dkms" "$tmp/dkms-inst"
	if dkms add -m roxe -v "$ver" --dkmstree "$tmp/dkms" --sourcetree "$tmp/dkms-root/usr/src" \
			--installtree "$tmp/dkms-inst" >"$tmp/dkms.log" 2>&1; then
		ok "dkms add roxe/$ver from the package's /usr/src/roxe-$ver"
	else
		bad "dkms add:"; tail -5 "$tmp/dkms.log" | sed 's/^/#   /'
	fi
else
	log "dkms missing: dkms add not tried"
fi

log "$((n - fails))/$n checks passed"
[ $fails = 0 ] && exit $KSFT_PASS || exit $KSFT_FAIL
