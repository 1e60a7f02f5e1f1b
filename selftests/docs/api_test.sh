#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# libroxe's sealed API: the shared library exports exactly the functions
# its public headers declare (include/roxe/verbs.h, frame.h, port.h,
# xdp.h), and user/libroxe.map lists exactly those; no tool includes a
# private header (user/); roxed reaches libroxe only through the public
# headers and user/verbs/served.h; the pkg-config file
# (build/lib/pkgconfig/roxe.pc) builds a program against the shared
# library, which then runs.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
lib=$top/build/lib/libroxe.so.0
log() { echo "# $*"; }

[ -f "$lib" ] || { log "FAIL: $lib is not built"; exit $KSFT_FAIL; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
ok() { n=$((n + 1)); log "ok: $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); log "FAIL: $*"; }

# Functions the public headers declare (not static inline ones): a
# declaration starts at column 0, names roxe_*( and ends in ';'.
for h in verbs frame port xdp; do
	sed 's|/\*.*\*/||' "$top/include/roxe/$h.h" | tr '\n' ' ' | tr ';' '\n' |
		grep -v 'static inline\|{' |
		grep -o '\broxe_[a-z0-9_]*[[:space:]]*(' | head -n 1000
done | sed 's/[[:space:](]//g' | sort -u >"$tmp/declared"
nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"
sed -n 's/^[[:space:]]*\(roxe_[a-z0-9_]*\);.*/\1/p' "$top/user/libroxe.map" | sort -u >"$tmp/map"

if [ -s "$tmp/declared" ] && cmp -s "$tmp/declared" "$tmp/exported"; then
	ok "libroxe.so.0 exports the $(wc -l <"$tmp/declared") functions the public headers declare, nothing else"
else
	bad "exports and public declarations differ (< declared only, > exported only):"
	diff "$tmp/declared" "$tmp/exported" | grep '^[<>]' | sed 's/^/#   /'
fi
if cmp -s "$tmp/declared" "$tmp/map"; then
	ok "user/libroxe.map lists them all"
else
	bad "user/libroxe.map and the public declarations differ:"
	diff "$tmp/declared" "$tmp/map" | grep '^[<>]' | sed 's/^/#   /'
fi

# Tools see only include/: no private header of libroxe or roxed.
priv=$(grep -rln '#include "\(core\|transport\|verbs\|port\|wire\)/\|#include "kserve.h"' \
	"$top/tools" --include='*.[ch]' 2>/dev/null)
if [ -z "$priv" ]; then
	ok "no tool includes a private header"
else
	bad "tools include private headers: $priv"
fi

# roxed uses libroxe through one door: its sources include no header of
# user/ but verbs/served.h (nor does anything they include: the compiler's
# dependency files say), served.h compiles on the public headers alone,
# and every roxe_* function roxed's objects call that they do not define
# is declared there or in a public header (gcc -aux-info names the file).
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
		bad "daemon/ includes private headers beyond verbs/served.h:"
		printf '%s\n' "$inc" "$deps" | grep . | sed "s|^$top/||; s/^/#   /"
	fi
	{
		for h in "$top"/include/roxe/*.h; do echo "#include \"$h\""; done
		echo "#include \"$top/user/verbs/served.h\""
	} >"$tmp/door.c"
	if ! cc -std=gnu11 -D_GNU_SOURCE -I"$top/include" -I"$top/build/include" -fsyntax-only \
		-aux-info "$tmp/door.aux" -o /dev/null "$tmp/door.c" 2>"$tmp/err"; then
		bad "user/verbs/served.h does not compile on the public headers alone:"
		grep 'error' "$tmp/err" | sed 's/^/#   /'
	else
		ok "user/verbs/served.h compiles on the public headers alone"
	fi
	# "/* FILE:LINE:KIND */ extern int roxe_x (...)": a declaration's file
	grep -v '^/\* [^ ]* \*/ static' "$tmp/door.aux" 2>/dev/null |
		sed -n 's|^/\* \([^:]*\):[0-9]*:[A-Z]* \*/ [^(]*[^a-z0-9_(]\(roxe_[a-z0-9_]*\) (.*|\1 \2|p' |
		awk -v inc="$top/include/roxe/" -v served="$top/user/verbs/served.h" \
			'index($1, inc) == 1 || $1 == served { print $2 }' | sort -u >"$tmp/door"
	nm --defined-only $dobjs | awk '{ print $3 }' | sort -u >"$tmp/ddef"
	nm -u $dobjs | awk '$2 ~ /^roxe_/ { print $2 }' | sort -u | comm -23 - "$tmp/ddef" >"$tmp/dcalls"
	undoor=$(comm -23 "$tmp/dcalls" "$tmp/door")
	if [ -s "$tmp/dcalls" ] && [ -z "$undoor" ]; then
		ok "roxed calls $(wc -l <"$tmp/dcalls") libroxe functions, each declared in served.h or a public header"
	else
		bad "roxed calls libroxe functions neither served.h nor a public header declares:"
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

# pkg-config: an application built from the .pc file alone.
cat >"$tmp/app.c" <<'APP'
#include <arpa/inet.h>
#include <stdio.h>
#include <roxe/verbs.h>
#include <roxe/port.h>

int main(void)
{
	struct roxe_loop_wire *w = roxe_loop_wire_new(4096 + 256, 64);
	struct roxe_port *port = w ? roxe_loop_port(w, 0) : NULL;
	struct roxe_device_attr da = { .backend = ROXE_BACKEND_PORTS, .engines = 1,
				       .mtu = 1024, .ports = &port };
	struct ibv_device_attr a;
	struct roxe_device *dev;

	if (!port)
		return 1;
	da.gid[10] = da.gid[11] = 0xff;
	da.gid[12] = 10;
	da.gid[15] = 1;
	da.mac[0] = 2;
	if (roxe_device_open(&da, &dev) || roxe_query_device(dev, &a))
		return 1;
	printf("max_qp %d max_sge %d\n", a.max_qp, a.max_sge);
	roxe_device_close(dev);
	roxe_loop_wire_free(w);
	return 0;
}
APP
export PKG_CONFIG_PATH=$top/build/lib/pkgconfig
if ! flags=$(pkg-config --cflags --libs roxe 2>"$tmp/err"); then
	bad "pkg-config --cflags --libs roxe: $(cat "$tmp/err")"
elif ! cc -std=gnu11 -Wall -Wextra -Werror -o "$tmp/app" "$tmp/app.c" $flags 2>"$tmp/err"; then
	bad "an application built with pkg-config's flags ($flags) does not compile:"
	sed 's/^/#   /' "$tmp/err"
elif ! out=$(LD_LIBRARY_PATH=$top/build/lib "$tmp/app" 2>&1); then
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
