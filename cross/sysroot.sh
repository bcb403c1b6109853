#!/bin/sh
# cross/sysroot.sh ARCH DIR PKG... — a foreign architecture's packages
# unpacked (not installed) into DIR: apt-get download PKG:ARCH for each,
# then dpkg-deb -x (no docs, no etc, nothing named *.d: the top Makefile
# includes every *.d under the build tree).  For an architecture whose libraries cannot be
# installed beside the host's through multiarch: Debian 12's security
# archive carries no s390x, so libc6-dev:s390x, zlib1g:s390x and the like
# lag behind the host's versions, and Multi-Arch: same packages must be of
# one version on every architecture.  DIR then serves as the compiler's
# pkg-config sysroot (PKG_CONFIG_SYSROOT_DIR) and as qemu-user's -L prefix
# at run time.  DIR/.pkgs records what was unpacked; unpacks only once for
# the same list.  Prints DIR.
set -eu
arch=$1 dir=$2
shift 2
want="$arch $*"
if [ ! -f "$dir/.pkgs" ] || [ "$(cat "$dir/.pkgs")" != "$want" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/debs"
    (cd "$dir/debs" && apt-get download -q $(for p in "$@"; do printf '%s:%s ' "$p" "$arch"; done) >/dev/null 2>&1) || {
        echo "sysroot: apt-get download of $* for $arch failed (dpkg --add-architecture $arch; apt-get update)" >&2
        exit 1
    }
    for deb in "$dir"/debs/*.deb; do
        dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir" --exclude=./usr/share/doc --exclude=./usr/share/man \
            --exclude=./usr/share/locale --exclude=./usr/share/lintian --exclude=./usr/share/bug --exclude=./etc --exclude='*.d'
    done
    rm -rf "$dir/debs"
    echo "$want" > "$dir/.pkgs"
fi
echo "$dir"
