#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# roxe(7)'s COMMAND LINE convention, for every program in build/bin:
#   - --help: the text on stdout, nothing on stderr, exit 0;
#   - a usage error (an unknown option, a missing argument): exit 2, a
#     message and the usage on stderr, nothing on stdout;
#   - a malformed number (trailing garbage, a sign, overflow, out of range)
#     is a usage error whose message names the option;
#   - the table below, as --help shows it: an option of the table has the
#     table's short letter (or none) wherever a program has it, a letter of
#     the table means the table's option in every program, and the programs
#     named in the table have the option;
#   - --json is accepted (the run gets past its options), and a run that
#     succeeds prints one JSON document on stdout;
#   - -d names an RDMA device, as perftest's does: the tools that run their
#     own engine refuse it, pointing at --netdev.
# Only names that exist nowhere are used (roxenosuch0): a case that slipped
# through option parsing fails to open its interface and touches nothing.
#
# Exit: 0 pass, 1 fail, 4 skip (kselftest).
set -u

KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4
top=${TOP:-$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)}
bin=$top/build/bin
log() { echo "# $*"; }

[ -d "$bin" ] || { log "FAIL: missing: $bin not built (make)"; exit $KSFT_FAIL; }
command -v jq >/dev/null || { log "FAIL: missing: jq is missing (tools/scripts/install-deps.sh)"; exit $KSFT_FAIL; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nodev=roxenosuch0 nodev2=roxenosuch1

fails=0 n=0
ok() { n=$((n + 1)); log "ok: $*"; }
bad() { n=$((n + 1)); fails=$((fails + 1)); log "FAIL: $*"; }
# spell LETTER: "-x", or "long only" for none
spell() { if [ -n "$1" ]; then printf -- "-%s" "$1"; else printf "long only"; fi; }
# show FILE: its first lines, indented, for a failure's context
show() { sed -n '1,6s/^/#     /p' "$1"; }

# The convention (roxe(7), COMMAND LINE): long option, its short letter
# (- for none), the programs that must have it (all: every program;
# json: every program but roxed, which prints nothing: roxectl devices
# --json shows what it serves).
table='
ib-dev   d roxe-perf roxe-pingpong roxe-rawperf
netdev   - roxe-perf roxe-pingpong roxe-rawperf roxed
backend  B roxe-perf roxe-pingpong roxe-rawperf roxed
engines  E roxe-perf roxe-pingpong roxed roxectl
port     p roxe-perf roxe-pingpong roxe-rawperf
size     s roxe-perf roxe-pingpong roxe-rawperf
iters    n roxe-perf roxe-pingpong roxe-rawperf
duration D roxe-perf roxe-rawperf
events   e roxe-perf roxe-pingpong
polled   P roxe-perf roxe-pingpong
qpn      - roxectl roxe-rawperf
cc       - roxe-perf roxed
json     - json
help     h all
version  V all
'
declare -A short_of must_have long_of
while read -r long short progs; do
	[ -n "$long" ] || continue
	short_of[$long]=$short
	must_have[$long]=$progs
	[ "$short" = - ] || long_of[$short]=$long
done <<<"$table"

# run NAME ARGS...: NAME's exit status in $rc, stdout in $tmp/out, stderr
# in $tmp/err (a hung program is killed: 124)
run() {
	local p=$1
	shift
	timeout -k 5 30 "$bin/$p" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}

# usage_error NAME WANT ARGS...: exit 2, nothing on stdout, a message and
# the usage on stderr, the message naming WANT (when not empty)
usage_error() {
	local p=$1 want=$2
	shift 2
	run "$p" "$@"
	local why=""
	[ $rc = 2 ] || why="exit $rc (want 2)"
	[ -s "$tmp/out" ] && why="$why${why:+, }$(wc -l <"$tmp/out") lines on stdout"
	[ -s "$tmp/err" ] || why="$why${why:+, }nothing on stderr"
	grep -qi usage "$tmp/err" || why="$why${why:+, }no usage on stderr"
	# the message comes first, before the usage (which names every option)
	[ -z "$want" ] || sed -n 1p "$tmp/err" | grep -F -- "$want" >/dev/null ||
		why="$why${why:+, }stderr's first line does not name $want"
	if [ -z "$why" ]; then
		ok "$p $*: usage error: $(sed -n 1p "$tmp/err")"
	else
		bad "$p $*: $why"
		show "$tmp/err"
		show "$tmp/out"
	fi
}

# json_ok NAME ARGS...: --json accepted (not a usage error, no complaint
# about the option); when the run succeeds, stdout is one JSON document
json_ok() {
	local p=$1
	shift
	run "$p" "$@"
	if [ $rc = 2 ] || grep -qiE "unrecognized option|invalid option|unexpected|takes no arg" "$tmp/err"; then
		bad "$p $*: --json refused (exit $rc)"
		show "$tmp/err"
	elif [ $rc = 0 ] && ! jq -e -s 'length == 1' "$tmp/out" >/dev/null 2>&1; then
		bad "$p $*: exit 0 but stdout is not one JSON document"
		show "$tmp/out"
	elif [ -s "$tmp/out" ] && ! jq -e -s 'length == 1' "$tmp/out" >/dev/null 2>&1; then
		bad "$p $*: exit $rc and stdout is not one JSON document"
		show "$tmp/out"
	else
		ok "$p $*: --json accepted (exit $rc, $(wc -c <"$tmp/out") bytes on stdout)"
	fi
}

# An empty pcap capture (its global header alone): roxe-pcap's --json run.
printf '\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x01\x00\x00\x00' \
	>"$tmp/empty.pcap"

progs=()
for t in "$bin"/*; do
	[ -x "$t" ] && [ -f "$t" ] && progs+=("$(basename "$t")")
done
[ ${#progs[@]} -gt 0 ] || { log "FAIL: no programs in $bin"; exit $KSFT_FAIL; }

for p in "${progs[@]}"; do
	# --help: stdout only, exit 0
	run "$p" --help
	if [ $rc = 0 ] && [ -s "$tmp/out" ] && [ ! -s "$tmp/err" ]; then
		ok "$p --help: exit 0, $(wc -l <"$tmp/out") lines on stdout"
	else
		bad "$p --help: exit $rc, $(wc -l <"$tmp/out") lines on stdout, $(wc -c <"$tmp/err") bytes on stderr (want 0, text, nothing)"
		show "$tmp/err"
	fi
	cp "$tmp/out" "$tmp/help.$p"

	# The option headings of --help: "-x, --long", "--long" or "-x" first
	# on a line indented by at most 6 blanks.
	sed -nE 's/^ {1,6}(-([A-Za-z0-9]),? +)?--([a-z][a-z0-9_-]*).*/\2 \3/p; s/^ {1,6}-([A-Za-z0-9])( .*|$)/\1 -/p' \
		"$tmp/help.$p" | sort -u >"$tmp/heads.$p"
	why=""
	while read -r s l; do
		[ -n "$l" ] || { l=$s; s=""; }	# a long option alone
		if [ "$l" != - ] && [ -n "${short_of[$l]+x}" ]; then
			want=${short_of[$l]}
			[ "$want" = - ] && want=""
			[ "$s" = "$want" ] ||
				why="$why; --$l is $(spell "$s") (the convention: $(spell "$want"))"
		fi
		if [ -n "$s" ] && [ -n "${long_of[$s]+x}" ] && [ "$l" != "${long_of[$s]}" ]; then
			why="$why; -$s is ${l/#-/no long option} (the convention's -$s is --${long_of[$s]})"
		fi
	done <"$tmp/heads.$p"
	for l in "${!must_have[@]}"; do
		case " ${must_have[$l]} " in
		*" all "*) ;;
		*" json "*) [ "$p" = roxed ] && continue ;;
		*" $p "*) ;;
		*) continue ;;
		esac
		grep -qE "^[^ ]* ?$l\$" "$tmp/heads.$p" || why="$why; no --$l in --help"
	done
	if [ -z "$why" ]; then
		ok "$p --help: the convention's options and letters ($(wc -l <"$tmp/heads.$p") options)"
	else
		bad "$p --help: ${why#; }"
	fi

	# A usage error: an option nobody has.
	usage_error "$p" "" --no-such-option
done

# Arguments missing, words unknown, numbers malformed: usage errors whose
# message names what is wrong. NAME|WANT|ARGS (ARGS split on blanks).
while IFS='|' read -r p want args; do
	[ -n "$p" ] || continue
	[ -x "$bin/$p" ] || { bad "$p: not built"; continue; }
	# shellcheck disable=SC2086 # the arguments, split on purpose
	usage_error "$p" "$want" $args
done <<EOF
roxe-perf||
roxe-perf|netdev|write bw
roxe-perf|iters|write bw --netdev $nodev -n 12x
roxe-perf|size|write bw --netdev $nodev -s -1
roxe-perf|iters|write bw --netdev $nodev -n 99999999999999999999999
roxe-perf|engines|write bw --netdev $nodev -E 0
roxe-perf|gid-index|write bw --netdev $nodev -x 1x
roxe-perf|port|write bw --netdev $nodev -p 65536
roxe-perf|--netdev|write bw -d $nodev
roxe-pingpong||extra words here
roxe-pingpong|netdev|
roxe-pingpong|iters|--netdev $nodev -n 12x
roxe-pingpong|size|--netdev $nodev -s -1
roxe-pingpong|port|--netdev $nodev -p 70000
roxe-pingpong|gid-idx|--netdev $nodev -g 1x
roxe-pingpong|engines|--netdev $nodev -E 1x
roxe-pingpong|linger|--netdev $nodev -L x
roxe-pingpong|rx-depth|--netdev $nodev -r 1
roxe-pingpong|--netdev|-d $nodev
roxe-rawperf||
roxe-rawperf|size|--netdev $nodev -s 12x bw
roxe-rawperf|iters|--netdev $nodev -n -1 bw
roxe-rawperf|--netdev|-d $nodev bw
roxed||
roxed|engines|--netdev $nodev -E 2x
roxed|rt-priority|--netdev $nodev --rt-priority 100
roxed|cnp-interval|--netdev $nodev --cnp-interval 0x
roxed|engines|--netdev $nodev -e 2x
roxectl||
roxectl||no-such-command
roxectl|engines|attach $nodev -E 1x
roxectl|qpn|stats --qpn -1
roxectl|watch|stats --watch 1x
roxectl||status extra
roxectl||devices --no-such-option
roxectl||detach
faultwire||$nodev
faultwire|drop|$nodev $nodev2 --drop 12x
faultwire|drop|$nodev $nodev2 --drop 2000000
faultwire|seed|$nodev $nodev2 --seed -1
roxe-microbench||extra
roxe-microbench|time|--time 1x
roxe-microbench|time|--time -5
roxe-pcap||
roxe-pcap||verify
roxe-pcap||verify --no-such-option x.pcap
EOF

# --json, where the convention has it: past the options, one document.
json_ok roxe-perf write bw --netdev $nodev --json
json_ok roxe-pingpong --netdev $nodev --json
json_ok roxe-rawperf --netdev $nodev --json lat
json_ok roxectl status --json
json_ok roxectl stats --json
json_ok roxectl devices --json
json_ok roxectl attach $nodev --json
json_ok roxectl detach $nodev --json
json_ok faultwire $nodev $nodev2 --json
json_ok roxe-pcap verify --json "$tmp/empty.pcap"
json_ok roxe-microbench --json --time 1

# roxe(7) writes the table down: every option of it is in the page.
miss=""
for l in "${!short_of[@]}"; do
	roff=$(sed 's/-/\\-/g' <<<"--$l")	# every hyphen escaped, as roff writes it
	grep -qF -- "$roff" "$top/man/roxe.7" || miss="$miss --$l"
done
grep -q '^\.SH "\?COMMAND LINE' "$top/man/roxe.7" || miss="$miss (section COMMAND LINE)"
if [ -z "$miss" ]; then ok "roxe(7) has the convention's table"
else bad "roxe(7) lacks:$miss"; fi

log "$((n - fails))/$n checks passed"
[ $fails = 0 ] && exit $KSFT_PASS
exit $KSFT_FAIL
