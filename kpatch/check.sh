#!/bin/sh
# make kpatch-check: build the module against Debian's generic kernel
# headers (linux-headers-<arch>, installed with apt-get when missing and we
# are root; otherwise the apt-get line is printed), with W=1 and warnings as
# errors.  Independent of the running kernel, so CI can run it anywhere
# Debian packages can be installed.
#
# Usage: sh kpatch/check.sh MAKE BUILD_DIR   (from the top of the tree)
set -eu
MAKE=${1:-make}
arch=$(dpkg --print-architecture 2>/dev/null) || {
    echo "kpatch-check: not a Debian system (no dpkg); use 'make kpatch KDIR=…'" >&2
    exit 1; }
meta=linux-headers-$arch
sh tools/deps.sh "$meta"
# The metapackage depends on the versioned headers, e.g. 6.1.0-57-amd64.
kver=$(dpkg-query -W -f='${Depends}' "$meta" |
       sed -n 's/.*linux-headers-\([0-9][^ ,]*\).*/\1/p')
kdir=/usr/src/linux-headers-$kver
[ -n "$kver" ] && [ -d "$kdir" ] || {
    echo "kpatch-check: $meta installed but no headers at '$kdir'" >&2; exit 1; }
echo "kpatch-check: building against $kdir"
$MAKE --no-print-directory kpatch KDIR="$kdir" KPATCH_KFLAGS="W=1 CHORUS_KPATCH_WERROR=1"
