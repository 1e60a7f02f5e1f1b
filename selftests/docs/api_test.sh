#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# libroxe's sealed API: the shared library exports two version nodes
# (user/libroxe.map) and nothing else:
#   ROXE_0.1      exactly the functions the installed headers (include/roxe/)
#                 declare, each at @@ROXE_0.1, and the map's node lists them;
#   ROXE_PRIVATE  building blocks of roxe's own tools, each declared in
#                 include/private/roxe/ (not installed), listed in the map's
#                 node, and called by a program of build/bin/ (no dead
#                 export; roxed links libroxe.a and needs none);
# declarations as the compiler reads them (gcc -aux-info), exports and
# their versions as the dynamic symbol table has them (nm -D). No tool
# includes a header of libroxe's sources (user/); roxed reaches libroxe only
# through include/ and user/verbs/served.h; the pkg-config file
# (build/lib/pkgconfig/roxe.pc) builds a program against the shared
# library, which then runs (in a network namespace of its own, on lo).
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
lib=$top/build/lib/libroxe.so.0
map=$top/user/libroxe.map
incs=(-I"$top/include/uapi" -I"$top/include" -I"$top/include/private" -I"$top/build/include")
log() { echo "# $*"; }

[ -f "$lib" ] || { log "FAIL: $lib is not built"; exit $KSFT_FAIL; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
ok() { n=$((n + 1)); log "ok: $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); log "FAIL: $*"; }
# diff_of A B: the lines of files A and B that differ, "<" A's, ">" B's
diff_of() { diff "$1" "$2" | grep '^[<>]' | sed 's/^/#   /'; }

# aux_decls AUX DIR...: the functions (not static) AUX, gcc -aux-info's
# "/* FILE:LINE:KIND */ extern int roxe_x (...)" lines, has from a header
# of one of the DIRs
aux_decls() {
	local aux=$1
	shift
	grep -v '^/\* [^ ]* \*/ static' "$aux" 2>/dev/null |
		sed -n 's|^/\* \([^:]*\):[0-9]*:[A-Z]* \*/ [^(]*[^a-z0-9_(]\(roxe_[a-z0-9_]*\) (.*|\1 \2|p' |
		awk -v dirs="$*" 'BEGIN { n = split(dirs, d, " ") }
			{ for (i = 1; i <= n; i++) if (index($1, d[i] "/") == 1) print $2 }' | sort -u
}

# --- the two nodes -------------------------------------------------------------
for h in "$top"/include/roxe/*.h "$top"/include/private/roxe/*.h; do echo "#include \"$h\""; done >"$tmp/all.c"
if ! cc -std=gnu11 -D_GNU_SOURCE "${incs[@]}" -fsyntax-only -aux-info "$tmp/all.aux" \
		-o /dev/null "$tmp/all.c" 2>"$tmp/err"; then
	bad "include/roxe/ and include/private/roxe/ do not compile together:"
	sed 's/^/#   /' "$tmp/err"
fi
aux_decls "$tmp/all.aux" "$top/include/roxe" >"$tmp/declared"
aux_decls "$tmp/all.aux" "$top/include/private/roxe" >"$tmp/declared-private"
# "ADDR T name@@VERSION"; the nodes themselves are the A entries
nm -D --defined-only "$lib" | awk '$2 != "A" { v = $3; sub(/@.*/, "", $3);
	if (!sub(/^[^@]*@@?/, "", v)) v = "(none)"; print $3, v }' | sort -u >"$tmp/exports"
awk '$2 == "ROXE_0.1" { print $1 }' "$tmp/exports" >"$tmp/exported"
awk '$2 == "ROXE_PRIVATE" { print $1 }' "$tmp/exports" >"$tmp/exported-private"
awk '$2 != "ROXE_0.1" && $2 != "ROXE_PRIVATE"' "$tmp/exports" >"$tmp/exported-other"
# the map: "NODE {" opens a node; "roxe_x;" lines are its names
awk '/^[A-Za-z_][A-Za-z0-9_.]* *\{/ { node = $1 }
	/^[[:space:]]*roxe_[a-z0-9_]*;/ { sub(/^[[:space:]]*/, ""); sub(/;.*/, ""); print node, $0 }' \
	"$map" | sort -u >"$tmp/map-all"
awk '$1 == "ROXE_0.1" { print $2 }' "$tmp/map-all" >"$tmp/map"
awk '$1 == "ROXE_PRIVATE" { print $2 }' "$tmp/map-all" >"$tmp/map-private"
awk '$1 != "ROXE_0.1" && $1 != "ROXE_PRIVATE"' "$tmp/map-all" >"$tmp/map-other"

if [ -s "$tmp/declared" ] && cmp -s "$tmp/declared" "$tmp/exported"; then
	ok "libroxe.so.0 exports the $(wc -l <"$tmp/declared") functions include/roxe/ declares, each @@ROXE_0.1"
else
	bad "ROXE_0.1's exports and include/roxe/'s declarations differ (< declared only, > exported only):"
	diff_of "$tmp/declared" "$tmp/exported"
fi
if cmp -s "$tmp/declared" "$tmp/map"; then
	ok "user/libroxe.map's ROXE_0.1 lists them all, nothing else"
else
	bad "user/libroxe.map's ROXE_0.1 and include/roxe/'s declarations differ (< declared only, > map only):"
	diff_of "$tmp/declared" "$tmp/map"
fi
if [ -s "$tmp/map-private" ] && cmp -s "$tmp/map-private" "$tmp/exported-private"; then
	ok "libroxe.so.0 exports the $(wc -l <"$tmp/map-private") functions of the map's ROXE_PRIVATE, each @@ROXE_PRIVATE"
else
	bad "ROXE_PRIVATE's exports and the map's node differ (< map only, > exported only):"
	diff_of "$tmp/map-private" "$tmp/exported-private"
fi
undeclared=$(comm -23 "$tmp/map-private" "$tmp/declared-private")
if [ -z "$undeclared" ]; then
	ok "include/private/roxe/ declares each of them"
else
	bad "ROXE_PRIVATE names functions include/private/roxe/ does not declare:"
	printf '#   %s\n' $undeclared
fi
# what the programs take from libroxe.so.0, by version
for t in "$top"/build/bin/*; do
	nm -D --undefined-only "$t" 2>/dev/null | awk '$2 ~ /^roxe_.*@ROXE_PRIVATE$/ { sub(/@.*/, "", $2); print $2 }'
done | sort -u >"$tmp/called-private"
dead=$(comm -23 "$tmp/map-private" "$tmp/called-private")
if [ -s "$tmp/called-private" ] && [ -z "$dead" ]; then
	ok "each ROXE_PRIVATE function is called by a program of build/bin/"
else
	bad "ROXE_PRIVATE exports no program of build/bin/ calls (dead exports):"
	printf '#   %s\n' $dead
fi
if [ ! -s "$tmp/exported-other" ] && [ ! -s "$tmp/map-other" ]; then
	ok "nothing else is exported, and the map has no other node"
else
	bad "exported beyond ROXE_0.1 and ROXE_PRIVATE (name, version; or map node, name):"
	cat "$tmp/exported-other" "$tmp/map-other" | sed 's/^/#   /'
fi

# Tools see only include/: no header of libroxe's sources (user/) or roxed's.
priv=$(grep -rln '#include "\(core\|transport\|verbs\|port\|wire\)/\|#include "kserve.h"' \
	"$top/tools" --include='*.[ch]' 2>/dev/null)
if [ -z "$priv" ]; then
	ok "no tool includes a header of user/ or roxed's"
else
	bad "tools include headers of user/ or roxed's: $priv"
fi

# roxed uses libroxe through one door: its sources include no header of
# user/ but verbs/served.h (nor does anything they include: the compiler's
# dependency files say), served.h compiles on include/'s headers alone,
# and every roxe_* function roxed's objects call that they do not define
# is declared there or in a header of include/ (gcc -aux-info names the
# file).
dobjs=$(ls "$top"/build/obj/daemon/*.o 2>/dev/null)
if [ -z "$dobjs" ]; then
	bad "roxed's objects (build/obj/daemon/*.o) are not built"
else
	inc=$(grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$top"/daemon/*.[ch] |
		while IFS= read -r line; do
			f=$(sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/' <<<"$line")
			case $f in
			roxe/*.h | verbs/served.h) ;;
			*/* | ..*) echo "$line" ;;
			*) [ -f "$top/daemon/$f" ] || echo "$line" ;;
			esac
		done)
	deps=$(cat "$top"/build/obj/daemon/*.d 2>/dev/null | tr ' \\' '\n\n' | sed 's/:$//' |
		grep "^$top/user/" | grep -vx "$top/user/verbs/served.h" | sort -u)
	if [ -z "$inc$deps" ]; then
		ok "daemon/ includes nothing of user/ but verbs/served.h"
	else
		bad "daemon/ includes headers of user/ beyond verbs/served.h:"
		printf '%s\n' "$inc" "$deps" | grep . | sed "s|^$top/||; s/^/#   /"
	fi
	{
		for h in "$top"/include/{uapi/,,private/}roxe/*.h; do echo "#include \"$h\""; done
		echo "#include \"$top/user/verbs/served.h\""
	} >"$tmp/door.c"
	if ! cc -std=gnu11 -D_GNU_SOURCE "${incs[@]}" -fsyntax-only \
		-aux-info "$tmp/door.aux" -o /dev/null "$tmp/door.c" 2>"$tmp/err"; then
		bad "user/verbs/served.h does not compile on include/'s headers alone:"
		grep 'error' "$tmp/err" | sed 's/^/#   /'
	else
		ok "user/verbs/served.h compiles on include/'s headers alone"
	fi
	{
		aux_decls "$tmp/door.aux" "$top/include/uapi/roxe" "$top/include/roxe" \
			"$top/include/private/roxe"
		grep -F "/* $top/user/verbs/served.h:" "$tmp/door.aux" | grep -v '^/\* [^ ]* \*/ static' |
			sed -n 's|.*[^a-z0-9_(]\(roxe_[a-z0-9_]*\) (.*|\1|p'
	} | sort -u >"$tmp/door"
	nm --defined-only $dobjs | awk '{ print $3 }' | sort -u >"$tmp/ddef"
	nm -u $dobjs | awk '$2 ~ /^roxe_/ { print $2 }' | sort -u | comm -23 - "$tmp/ddef" >"$tmp/dcalls"
	undoor=$(comm -23 "$tmp/dcalls" "$tmp/door")
	if [ -s "$tmp/dcalls" ] && [ -z "$undoor" ]; then
		ok "roxed calls $(wc -l <"$tmp/dcalls") libroxe functions, each declared in served.h or include/"
	else
		bad "roxed calls libroxe functions neither served.h nor a header of include/ declares:"
		printf '#   %s\n' $undoor
	fi
fi

tools=0
for t in "$top"/build/bin/*; do
	[ "$(basename "$t")" = roxed ] && continue	# roxed is libroxe's own
	so=$(ldd "$t" | sed -n 's/.*libroxe\.so\.0 => \([^ ]*\) .*/\1/p')
	if [ -n "$so" ] && [ "$(readlink -f "$so")" = "$(readlink -f "$lib")" ]; then
		tools=$((tools + 1))
	elif ldd "$t" | grep -q 'libroxe\.so\.0'; then
		bad "$(basename "$t") does not find build/lib/libroxe.so.0: $(ldd "$t" | grep libroxe)"
	elif nm "$t" 2>/dev/null | grep -q ' T roxe_'; then
		bad "$(basename "$t") has libroxe linked in statically"
	fi
done
ok "$tools tools load build/lib/libroxe.so.0 (from \$ORIGIN/../lib)"

# pkg-config: an application built from the .pc file alone, on the
# installed API (roxe/verbs.h): a device on lo, the UDP backend, in a
# network namespace of its own (nothing else there binds port 4791).
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
	printf("max_qp %d max_sge %d\n", a.max_qp, a.max_sge);
	roxe_device_close(dev);
	return 0;
}
APP
export PKG_CONFIG_PATH=$top/build/lib/pkgconfig
if ! flags=$(pkg-config --cflags --libs roxe 2>"$tmp/err"); then
	bad "pkg-config --cflags --libs roxe: $(cat "$tmp/err")"
elif ! cc -std=gnu11 -Wall -Wextra -Werror -o "$tmp/app" "$tmp/app.c" $flags 2>"$tmp/err"; then
	bad "an application built with pkg-config's flags ($flags) does not compile:"
	sed 's/^/#   /' "$tmp/err"
elif ! unshare -rn true 2>/dev/null; then
	log "no network namespace (unshare -rn): the application is built, not run"
elif ! out=$(LD_LIBRARY_PATH=$top/build/lib unshare -rn sh -c 'ip link set lo up && exec "$0"' \
		"$tmp/app" 2>&1); then
	bad "the application built with pkg-config fails: $out"
else
	ok "built with \`pkg-config --cflags --libs roxe\` alone, it runs: $out"
fi
# Static: libroxe.a and what the .pc names for it (Requires.private:
# its dependencies by their own .pc files).
if ! flags=$(pkg-config --static --cflags --libs roxe 2>"$tmp/err"); then
	bad "pkg-config --static --cflags --libs roxe: $(cat "$tmp/err")"
elif ! cc -std=gnu11 -Wall -Wextra -Werror -o "$tmp/app-static" "$tmp/app.c" \
	${flags/-lroxe/$top/build/lib/libroxe.a} 2>"$tmp/err"; then
	bad "linked statically with pkg-config --static's flags, it does not build:"
	sed 's/^/#   /' "$tmp/err"
elif ! out=$("$tmp/app-static" 2>&1); then
	bad "the application linked with libroxe.a fails: $out"
else
	ok "linked with libroxe.a and \`pkg-config --static --libs roxe\`, it runs: $out"
fi

log "$((n - fails))/$n checks passed"
[ $fails = 0 ] && exit $KSFT_PASS || exit $KSFT_FAIL
