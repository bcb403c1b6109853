#!/bin/sh
# cross/gsl-sysroot.sh TRIPLET DEBARCH DIR — Debian 12's libgsl-dev is not
# Multi-Arch: same, so libgsl-dev:arm64 cannot be installed beside the
# native one (apt would remove the native headers).  This unpacks the
# foreign package into DIR instead (apt-get download, dpkg-deb -x), points
# its gsl.pc there and its .so links at the foreign runtime library
# (libgsl27:DEBARCH, which is co-installable).  Prints DIR's pkgconfig dir.
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
echo "$pc"
