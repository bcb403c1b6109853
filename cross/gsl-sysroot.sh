#!/bin/sh
# cross/gsl-sysroot.sh TRIPLET DEBARCH DIR — Debian 12's libgsl-dev is not
# Multi-Arch: same, so libgsl-dev:arm64 cannot be installed beside the
# native one (apt would remove the native headers).  This unpacks the
# foreign package into DIR instead (apt-get download, dpkg-deb -x), points
# its gsl.pc there and its .so links at the foreign runtime library
# (libgsl27:DEBARCH, which is co-installable).
#
# libsoup-3.0-dev:arm64 (chorus-web) cannot be installed either: it depends
# on gir1.2-soup-3.0, whose chain reaches gobject-introspection:arm64 and
# python3:arm64, which are not co-installable with the host's python3.  Its
# headers are arch-independent and the host's libsoup-3.0-dev has them (the
# same version: libsoup-3.0-0 is Multi-Arch: same), so only its
# libsoup-3.0.pc is unpacked here, pointed at DIR for the .so link, which
# goes to the installed runtime libsoup-3.0-0:DEBARCH; its Requires.private
# and Libs.private (static linking only; sysprof-capture-4 would need
# libsysprof-4-dev:arm64 and with it GTK 4's -dev packages) are dropped.
# Prints DIR's pkgconfig dir.
set -eu
triplet=$1 arch=$2 dir=$3
pc=$dir/usr/lib/$triplet/pkgconfig
if [ ! -s "$pc/gsl.pc" ]; then
    mkdir -p "$dir"
    (cd "$dir" && apt-get download "libgsl-dev:$arch" >/dev/null && dpkg-deb -x libgsl-dev_*_"$arch".deb . && rm -f ./*.deb)
    sed -i -e "s|^prefix=.*|prefix=$dir/usr|" -e "s|^libdir=.*|libdir=$dir/usr/lib/$triplet|" \
        -e "s|^includedir=.*|includedir=$dir/usr/include|" -e "s|-L/usr/lib/$triplet|-L$dir/usr/lib/$triplet|" "$pc/gsl.pc"
    for l in libgsl libgslcblas; do
        t=$(readlink "$dir/usr/lib/$triplet/$l.so")
        ln -sf "/usr/lib/$triplet/$t" "$dir/usr/lib/$triplet/$l.so"
    done
fi
if [ ! -s "$pc/libsoup-3.0.pc" ]; then
    mkdir -p "$dir/soup"
    (cd "$dir/soup" && apt-get download "libsoup-3.0-dev:$arch" >/dev/null && dpkg-deb -x libsoup-3.0-dev_*_"$arch".deb . &&
        rm -f ./*.deb)
    sed -e "s|^libdir=.*|libdir=$dir/usr/lib/$triplet|" -e '/^Requires.private:/d' -e '/^Libs.private:/d' \
        "$dir/soup/usr/lib/$triplet/pkgconfig/libsoup-3.0.pc" > "$pc/libsoup-3.0.pc.tmp"
    ln -sf "/usr/lib/$triplet/$(readlink "$dir/soup/usr/lib/$triplet/libsoup-3.0.so")" "$dir/usr/lib/$triplet/libsoup-3.0.so"
    rm -rf "$dir/soup"
    mv "$pc/libsoup-3.0.pc.tmp" "$pc/libsoup-3.0.pc"
fi
echo "$pc"
