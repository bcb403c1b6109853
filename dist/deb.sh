#!/bin/sh
# dist/deb.sh OUTDIR [ARCH] — `make deb`: build the Debian packages (debian/) with
# `dpkg-buildpackage -us -uc -b` in a copy of the tree under OUTDIR, so the
# .deb, .buildinfo and .changes land in OUTDIR and the tree stays clean; then
# run lintian on them, which must report no error and no warning (its
# overrides are in debian/*.lintian-overrides, each with its reason).
# With ARCH (`make deb-arm64`: arm64), cross-built for that architecture
# (dpkg-buildpackage -a ARCH, profiles cross and nocheck: the build-time
# tests need the host's architecture).  Its build dependencies are not
# checked (-d): libgsl-dev and libsoup-3.0-dev cannot be installed for a
# foreign architecture beside the host's (cross/module.mk), so the caller
# points pkg-config at them (PKG_CONFIG_LIBDIR, PKG_CONFIG_PATH).
set -eu
out=$1
arch=${2:-}
bp_opts=""
if [ -n "$arch" ]; then
    bp_opts="-a$arch -d -Pcross,nocheck"
    CC=$(dpkg-architecture -a"$arch" -qDEB_HOST_GNU_TYPE 2>/dev/null)-gcc
    export CC
    export DEB_BUILD_OPTIONS="nocheck${DEB_BUILD_OPTIONS:+ $DEB_BUILD_OPTIONS}"
fi
ver=$(dpkg-parsechangelog -S Version)
src="$out/chorus-$ver"
rm -rf "$out"
mkdir -p "$src"
# The tree as git sees it (tracked and new files, not what .gitignore
# names); outside git, everything but the build directories.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard |
        xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
        tar --null -T - -cf - | tar -xf - -C "$src"
else
    tar --exclude=./build --exclude=./build-san -cf - . | tar -xf - -C "$src"
fi
echo "deb: dpkg-buildpackage in $src (log: $out/build.log)"
# shellcheck disable=SC2086
(cd "$src" && nice -n 19 dpkg-buildpackage -us -uc -b -j2 $bp_opts) >"$out/build.log" 2>&1 || {
    tail -40 "$out/build.log"; echo "deb: dpkg-buildpackage failed" >&2; exit 1; }
rm -rf "$src"
ls -l "$out"/*.deb | awk '{n = $NF; sub(".*/", "", n); printf "deb: %-36s %9d bytes\n", n, $5}' | sed "s|$out/||"
changes=$(ls "$out"/*.changes)
lintian --info --display-info --pedantic --fail-on error,warning "$changes" >"$out/lintian.txt" 2>&1 || {
    cat "$out/lintian.txt"; echo "deb: lintian reports errors or warnings" >&2; exit 1; }
echo "deb: lintian: $(grep -c '^[EW]:' "$out/lintian.txt") errors/warnings," \
    "$(grep -c '^[IP]:' "$out/lintian.txt") info/pedantic notes ($out/lintian.txt)"
