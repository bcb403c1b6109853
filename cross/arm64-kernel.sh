#!/bin/sh
# cross/arm64-kernel.sh DIR — Debian's arm64 kernel, its headers and an arm64
# busybox, unpacked (not installed) into DIR/root for the arm64 VM
# (cross/vm-arm64.sh) and the module's cross build (make kpatch-arm64).
#
# The packages are fetched with `apt-get download` from the arm64 archive
# (multiarch: `make arm64-deps` adds the architecture) and unpacked with
# dpkg-deb: linux-headers-VER-arm64:arm64 cannot be installed on an amd64
# host (it depends on gcc-12:arm64), and the kernel need not be.  The
# headers' scripts/ and tools/ point at ../../lib/linux-kbuild-6.1, which is
# the host's own (amd64) linux-kbuild package: DIR/root/usr/lib/linux-kbuild-*
# is linked to it, so Kbuild's host programs run natively.  Nothing under
# usr/share or etc is unpacked (the top Makefile includes every *.d under
# the build tree, and those hold directories named so).
#
# Prints the kernel version (e.g. 6.1.0-57-arm64).  Unpacks only once.
set -eu
dir=$1
root=$dir/root
kver=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null |
       sed -n 's/.*Depends: linux-image-\([0-9][^: ]*-arm64\).*/\1/p' | head -n 1)
[ -n "$kver" ] || { echo "arm64-kernel: no linux-image-arm64:arm64 in apt's lists (make arm64-deps)" >&2; exit 1; }
if [ ! -r "$root/boot/vmlinuz-$kver" ] || [ ! -d "$root/usr/src/linux-headers-$kver" ] || [ ! -x "$root/bin/busybox" ]; then
    mkdir -p "$dir/debs" "$root"
    (cd "$dir/debs" && apt-get download -q "linux-image-$kver:arm64" "linux-headers-$kver:arm64" busybox-static:arm64 >/dev/null 2>&1) || {
        echo "arm64-kernel: apt-get download linux-image-$kver:arm64 linux-headers-$kver:arm64 busybox-static:arm64 failed" >&2
        exit 1
    }
    for deb in "$dir"/debs/*.deb; do
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$root" --exclude=./usr/share --exclude=./etc
    done
    rm -f "$dir"/debs/*.deb
fi
# The host's Kbuild programs, of the headers' own version (linux-headers-VER-common too).
for k in "$root"/usr/src/linux-headers-"$kver"/scripts; do
    t=$(readlink "$k")
    mkdir -p "$root/usr/lib"
    kb=$(basename "$(dirname "$t")")
    [ -e "/usr/lib/$kb" ] || { echo "arm64-kernel: /usr/lib/$kb missing (the host's $kb package)" >&2; exit 1; }
    ln -sfn "/usr/lib/$kb" "$root/usr/lib/$kb"
done
echo "$kver"
