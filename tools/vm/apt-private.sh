# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# shellcheck shell=bash disable=SC2154 # apt, suites, update: the sourcing script's
# The private apt configuration the VM harness downloads Debian packages
# through (tools/vm/fetch-kernels.sh, tools/vm/fetch-qemu.sh), sourced:
# its own sources list, package lists, cache and an empty dpkg status in
# $apt, none of the host's apt.conf.d (no hook of the host's apt runs),
# and /etc/apt only read, for the mirror and keyring of the host's
# bookworm source. Never installs anything.
#
# The sourcing script sets: apt (the state directory), suites (the suites
# on the bookworm mirror), update (1: fresh lists wanted), top, and the
# functions die and say.

# The enabled apt sources of the host as "URI SUITE KEYRING" lines, from
# the deb822 files (*.sources) and the one-line files (sources.list,
# *.list); binary ("deb") entries only. Read only.
apt_sources() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
		function flush() {
			if (types ~ /(^| )deb( |$)/ && enabled != "no")
				for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++)
					print uris[i], suites[j], (key == "" ? "-" : key)
			types = ""; enabled = ""; key = ""; nu = 0; ns = 0
		}
		/^[ \t]*$/ { flush(); next }
		/^#/ { next }
		{
			k = tolower($1); sub(/:$/, "", k); $1 = ""; sub(/^ +/, "")
			if (k == "types") types = $0
			else if (k == "enabled") enabled = tolower($0)
			else if (k == "signed-by") key = $0
			else if (k == "uris") nu = split($0, uris, " ")
			else if (k == "suites") ns = split($0, suites, " ")
		}
		END { flush() }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			key = "-"; i = 2
			if ($2 ~ /^\[/) {
				for (; i <= NF; i++) {
					if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
					if ($i ~ /\]$/) break
				}
				i++
			}
			print $i, $(i + 1), key
		}' "$f"
	done
}

# The private apt configuration: bookworm's mirror(s) and keyring, both
# suites, amd64 only, no translations; the host's proxy and date-check
# settings (apt-config) carried over, nothing else of its configuration.
setup_apt() {
	local uri suite key s opt lines=()
	while read -r uri suite key; do
		opt=
		case "$key" in /*) opt="[signed-by=$key] " ;; esac	# a file, not an inline key
		case "$suite" in
		bookworm)
			for s in "${suites[@]}"; do lines+=("deb $opt$uri $s main"); done ;;
		# Debian 12's current 6.1 comes through the security suite (its
		# own archive): the host's, where it has one
		bookworm-security)
			lines+=("deb $opt$uri $suite main") ;;
		esac
	done < <(apt_sources)
	[ ${#lines[@]} -gt 0 ] ||
		die "no apt source for bookworm in /etc/apt/sources.list{,.d}: no mirror to fetch from"
	mkdir -p "$apt/empty" "$apt/lists/partial" "$apt/cache/archives/partial"
	[ -f "$apt/status" ] || : >"$apt/status"
	printf '%s\n' "${lines[@]}" | awk '!seen[$0]++' >"$apt/sources.list.new"
	if ! cmp -s "$apt/sources.list.new" "$apt/sources.list"; then
		mv "$apt/sources.list.new" "$apt/sources.list"
		rm -f "$apt/lists/"*_Packages* "$apt/lists/"*Release*	# other mirrors' lists
	else
		rm -f "$apt/sources.list.new"
	fi
	{
		cat <<-EOF
		Dir::Etc::main "$apt/none";
		Dir::Etc::Parts "$apt/empty";
		Dir::Etc::SourceList "$apt/sources.list";
		Dir::Etc::SourceParts "$apt/empty";
		Dir::Etc::Preferences "$apt/none";
		Dir::Etc::PreferencesParts "$apt/empty";
		Dir::State::Lists "$apt/lists";
		Dir::State::status "$apt/status";
		Dir::State::extended_states "$apt/extended_states";
		Dir::Cache "$apt/cache";
		Dir::Cache::archives "$apt/cache/archives";
		Dir::Cache::srcpkgcache "";
		Dir::Log "$apt/log";
		Debug::NoLocking "true";
		APT::Architecture "amd64";
		APT::Architectures { "amd64"; };
		Acquire::Languages "none";
		Acquire::GzipIndexes "true";
		EOF
		APT_CONFIG=/dev/null apt-config dump 2>/dev/null |
			grep -E '^Acquire::(https?|ftp)::Proxy|^Acquire::Check-(Valid-Until|Date) |^Acquire::ForceIPv[46] ' || true
	} >"$apt/apt.conf"
}

aptc() { APT_CONFIG=$apt/apt.conf apt-cache "$@"; }

# Package lists: fetched when missing, older than a day, with -u, or when
# asked (update_lists 1: a download failed on lists the mirror has moved
# past); once per run.
updated=0
update_lists() {
	local fresh mirrors
	[ $updated = 0 ] || return 0
	fresh=$(find "$apt/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null)
	[ $update = 1 ] || [ "${1:-0}" = 1 ] || [ -z "$fresh" ] || return 0
	updated=1
	mirrors=$(awk '{ print ($2 ~ /^\[/ ? $3 : $2) }' "$apt/sources.list" | sort -u | tr '\n' ' ')
	say "updating the package lists from ${mirrors% } (private: ${apt#$top/}/)"
	APT_CONFIG=$apt/apt.conf apt-get -qq --error-on=any update ||
		die "cannot fetch the package lists of ${suites[*]} (network, mirror?)"
}
