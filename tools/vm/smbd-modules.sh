#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# SMB Direct for a VM guest kernel whose Debian build leaves it out (6.1:
# "# CONFIG_SMB_SERVER_SMBDIRECT is not set", "# CONFIG_CIFS_SMB_DIRECT is
# not set"): cifs.ko and ksmbd.ko rebuilt with it, out of tree, against the
# guest's headers, plus ksmbd-tools and cifs-utils for the guest (issue #39).
#
#   tools/vm/smbd-modules.sh [KVER]     KVER: a name kver.sh takes (6.1)
#
# Writes build/smbd/<release>/{cifs,ksmbd}.ko and build/smbd/root/ (the
# tools' .debs unpacked). Debian's linux-source-<series> of the exact
# version the guest's headers come from (their -common package's
# changelog) is fetched through the guest kernels' private apt
# configuration (tools/vm/fetch-kernels.sh, vm_apt_unpack); only fs/smb/,
# fs/internal.h (ksmbd's vfs.c includes it), fs/nls/ (6.12's cifs
# includes nls_ucs2_utils.h from there) and the ASN.1 compiler's source
# (the headers lack scripts/asn1_compiler, which both modules' SPNEGO
# grammars need) are taken out of its tarball, under
# build/smbd/src-<version>/. Nothing is installed on the host. A
# second run with the modules there costs nothing.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
kernels=${ROXE_VM_KERNELS:-$top/build/vm/kernels}
die() { echo "smbd-modules: $*" >&2; exit 1; }

"$here/fetch-kernels.sh" "${1:-6.1}" >&2 || die "no guest kernel ${1:-6.1}"
rel=$("$here/kver.sh" "${1:-6.1}")
root=$("$here/kver.sh" --root)
hdr=$root/usr/src/linux-headers-$rel
[ -f "$hdr/Makefile" ] || die "no headers for $rel in $hdr"
out=$top/build/smbd/$rel
. "$top/selftests/vm/vm_lib.sh"

# the tools first. ksmbd.mountd from bookworm-backports (3.5.2): 3.4.7's
# share config replies fail the netlink checks 6.1.192's ksmbd makes of
# them (payload_sz), and every tree connect fails with BAD_NETWORK_NAME.
vm_apt_unpack "$top/build/smbd" ksmbd-tools/bookworm-backports cifs-utils libnl-genl-3-200 ||
	die "cannot fetch ksmbd-tools/cifs-utils (apt-get download with ${kernels#$top/}/apt)"

# the -common package the headers' Makefile includes
common=$(sed -n 's|^include .*/\(linux-headers-[^/]*-common\)/Makefile$|\1|p' "$hdr/Makefile")
[ -n "$common" ] || die "cannot tell $rel's linux-headers-*-common from $hdr/Makefile"
ver=$(zcat "$root/usr/share/doc/$common/changelog.Debian.gz" 2>/dev/null |
	# (the source is "linux", or "linux-6.12" for a backport)
	sed -n '1s/^linux[-0-9.]* (\([^)]*\)).*/\1/p' || true)
[ -n "$ver" ] || die "cannot tell the Debian version of $rel's headers"
series=$(cut -d. -f1,2 <<<"$ver")
src=$top/build/smbd/src-$ver
tree=$src/linux-source-$series
if [ ! -f "$tree/fs/smb/client/smbdirect.c" ] || [ ! -f "$tree/fs/internal.h" ] ||
   [ ! -d "$tree/fs/nls" ]; then
	dl=$top/build/smbd/debs
	rm -rf "$dl" && mkdir -p "$dl" "$src"
	[ "$(id -u)" != 0 ] || ! id _apt >/dev/null 2>&1 || chown _apt "$dl"
	echo "smbd-modules: linux-source-$series $ver (about 140 MiB, only fs/smb kept)" >&2
	(cd "$dl" && APT_CONFIG=$kernels/apt/apt.conf apt-get -qq download \
		"linux-source-$series=$ver") || die "cannot download linux-source-$series=$ver"
	dpkg-deb --fsys-tarfile "$dl"/linux-source-*.deb |
		tar -xO "./usr/src/linux-source-$series.tar.xz" | xz -dc |
		tar -x -C "$src" "linux-source-$series/fs/smb" \
			"linux-source-$series/fs/internal.h" \
			"linux-source-$series/fs/nls" \
			"linux-source-$series/scripts/asn1_compiler.c" \
			"linux-source-$series/include/linux/asn1_ber_bytecode.h" \
			"linux-source-$series/include/linux/asn1.h" ||
		die "cannot unpack fs/smb from linux-source-$series"
	rm -rf "$dl"
fi
[ -f "$tree/fs/smb/client/smbdirect.c" ] || die "linux-source-$series has no fs/smb/client/smbdirect.c"

# Debian's 6.1.192 ksmbd lacks upstream's NULL check in opinfo_put(), and
# smb2_open() calls it with no oplock granted (a directory opened without
# a lease, as cifs' mount does): the guest oopses there over any transport.
# Upstream's check, added to the copy built here.
o=$tree/fs/smb/server/oplock.c
put() { sed -n '/^void opinfo_put(/,/^}/p' "$o"; }
if [[ $(put) != *'if (!opinfo)'* ]]; then
	sed -i '/^void opinfo_put(struct oplock_info \*opinfo)$/,/^}/ s/^{$/{\n\tif (!opinfo)\n\t\treturn;\n/' "$o"
	[[ $(put) == *'if (!opinfo)'* ]] || die "cannot patch opinfo_put() in $o"
	rm -f "$out/ksmbd.ko"
fi

[ -f "$out/cifs.ko" ] && [ -f "$out/ksmbd.ko" ] && [ -s "$out/deps" ] && exit 0

# The SPNEGO grammars through the kernel's own ASN.1 compiler, built here
# (a host tool); Kbuild then finds the generated files in place.
asn1=$src/asn1_compiler
[ -x "$asn1" ] || cc -O2 -I"$tree/include" -o "$asn1" "$tree/scripts/asn1_compiler.c" ||
	die "cannot build asn1_compiler"
for g in "$tree"/fs/smb/client/*.asn1 "$tree"/fs/smb/server/*.asn1; do
	[ -f "${g%.asn1}.asn1.c" ] || "$asn1" "$g" "${g%.asn1}.asn1.c" "${g%.asn1}.asn1.h" ||
		die "asn1_compiler $g"
done

# Kconfig symbols reach Kbuild as make variables and the C code as
# defines (autoconf.h has only what the guest's .config set). No BTF, as
# for roxe.ko (Makefile: KMOD_VM_ARGS).
jobs=${SMBD_JOBS:-2}
nice -n 10 make -s -j"$jobs" -C "$hdr" M="$tree/fs/smb/client" CONFIG_DEBUG_INFO_BTF_MODULES= \
	CONFIG_CIFS=m CONFIG_CIFS_SMB_DIRECT=y KCFLAGS=-DCONFIG_CIFS_SMB_DIRECT=1 modules >&2 ||
	die "cifs.ko failed to build"
nice -n 10 make -s -j"$jobs" -C "$hdr" M="$tree/fs/smb/server" CONFIG_DEBUG_INFO_BTF_MODULES= \
	CONFIG_SMB_SERVER=m CONFIG_SMB_SERVER_SMBDIRECT=y KCFLAGS=-DCONFIG_SMB_SERVER_SMBDIRECT=1 modules >&2 ||
	die "ksmbd.ko failed to build"
mkdir -p "$out"
# without their debug info (28 MiB for cifs.ko) in the guest's initramfs
strip --strip-debug -o "$out/cifs.ko" "$tree/fs/smb/client/cifs.ko" &&
	strip --strip-debug -o "$out/ksmbd.ko" "$tree/fs/smb/server/ksmbd.ko" || die "strip"
# The stock modules they need, in load order, for the guest to insmod from
# the kernel tree (its image has none of them): their dependencies and
# ksmbd's soft ones (the crypto of SMB3 signing and encryption; modprobe
# takes only the first "softdep" of a module), and the templates ccm(aes)
# and gcm(aes) are built of (ctr, ghash), which the guest cannot modprobe.
for m in cifs ksmbd gcm ccm ctr ghash-generic cmac ecb sha512_generic md4 nls_utf8; do
	modprobe -d "$root" -S "$rel" --show-depends "$m" || die "modprobe --show-depends $m for $rel"
done | awk '$1 == "insmod" && $2 !~ /\/(cifs|ksmbd)\.ko(\.xz|\.zst)?$/ && !seen[$2]++ { print $2 }' >"$out/deps"
[ -s "$out/deps" ] || die "no dependencies for cifs and ksmbd?"
echo "smbd-modules: $out/cifs.ko, ksmbd.ko (SMB Direct, $ver)" >&2
