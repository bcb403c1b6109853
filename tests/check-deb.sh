#!/bin/sh
# tests/check-deb.sh DEBDIR — `make check-deb`: install the packages that
# `make deb` built (DEBDIR) into a fresh Debian 12 root made by debootstrap
# (minbase, cached as DEBDIR/../deb-root/base.tar), then from the installed
# paths: the system user, conffiles, units (their programs exist, none
# enabled), a man page for every program, --help / --print-config, syncd and
# audiod started for a few seconds as the chorus user (audiod on the
# installed simulator plugin), the python3-chorus module reading that
# syncd's ticker, programs built against libchorus-sync-dev with pkg-config
# (static, and shared: libchorus-sync1), the kernel module built by DKMS;
# then remove (only conffiles may stay) and purge (nothing may stay).
# Exit 0 pass, 1 fail, 77 cannot run (not root, no debootstrap, no mirror).
# CHORUS_DEB_DKMS=0 leaves the kernel headers and the DKMS build out.
set -u
debdir=$(cd "$1" && pwd)
cache=$(dirname "$debdir")/deb-root
dkms=${CHORUS_DEB_DKMS:-1}
say() { echo "check-deb: $*"; }
skip() { say "SKIP ($*)"; exit 77; }
nfail=0
bad() { say "FAIL: $*"; nfail=$((nfail + 1)); }
ok() { say "ok: $*"; }

[ "$(id -u)" = 0 ] || skip "needs root for debootstrap and chroot"
command -v debootstrap >/dev/null || skip "debootstrap is not installed (make deb-deps)"
pkgs="chorus chorus-sim libchorus-sync1 libchorus-sync-dev python3-chorus chorus-kpatch-dkms"
ls $(for p in $pkgs; do echo "$debdir/${p}_*.deb"; done) >/dev/null || { say "FAIL: no packages in $debdir (make deb)"; exit 1; }

# The Debian mirror apt uses here (deb822 URIs: or one-line deb entries).
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    sed -n -e 's/^URIs: *//p' -e 's/^deb  *\(\[[^]]*\] *\)\{0,1\}\([^ ]*\) .*/\2/p' | tr ' ' '\n' |
    grep -m1 '/debian/*$')
mirror=${mirror:-http://deb.debian.org/debian}
# CHORUS_DEB_ARCH (make check-deb-arm64: arm64): the root and the packages
# of another architecture, run through the host's qemu-user binfmt.
arch=${CHORUS_DEB_ARCH:-$(dpkg --print-architecture)}
interp=""
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    case $arch in arm64) q=aarch64 ;; *) q=$arch ;; esac
    interp=$(sed -n 's/^interpreter //p' "/proc/sys/fs/binfmt_misc/qemu-$q" 2>/dev/null)
    grep -qx enabled "/proc/sys/fs/binfmt_misc/qemu-$q" 2>/dev/null && [ -x "$interp" ] ||
        skip "no qemu-user binfmt for $arch (qemu-user-static, binfmt-support: make arm64-deps)"
fi

# --- the fresh root -------------------------------------------------------------
mkdir -p "$cache"
if [ ! -s "$cache/base.tar" ]; then
    command -v wget >/dev/null && { wget -q -O /dev/null "$mirror/dists/bookworm/Release" ||
        skip "the mirror $mirror does not answer"; }
    b=$(mktemp -d "$cache/bootstrap.XXXXXX")
    say "debootstrap --variant=minbase --arch=$arch bookworm from $mirror (once; cached in $cache/base.tar)"
    # A foreign root: the packages unpacked (--foreign), then configured
    # inside it through binfmt, whose interpreter (no F flag: looked up in
    # the root) is copied in first.
    if [ -n "$interp" ]; then
        debootstrap --variant=minbase --arch="$arch" --foreign bookworm "$b" "$mirror" >"$cache/debootstrap.log" 2>&1 &&
            mkdir -p "$b$(dirname "$interp")" && cp -L "$interp" "$b$interp" &&
            chroot "$b" /debootstrap/debootstrap --second-stage >>"$cache/debootstrap.log" 2>&1
    else
        debootstrap --variant=minbase bookworm "$b" "$mirror" >"$cache/debootstrap.log" 2>&1
    fi || {
        tail -5 "$cache/debootstrap.log"; rm -rf "$b"
        say "FAIL: debootstrap failed ($cache/debootstrap.log)"; exit 1
    }
    tar -C "$b" -cf "$cache/base.tar.tmp" . && mv "$cache/base.tar.tmp" "$cache/base.tar"
    rm -rf "$b"
fi
root=$(mktemp -d "$cache/root.XXXXXX")
cleanup() {
    # Anything of ours still running in the root (by pid; e.g. after a failure).
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ] && kill "${p#/proc/}" 2>/dev/null
    done
    sleep 0.5
    for m in proc run dev/shm var/cache/apt/archives; do umount "$root/$m" 2>/dev/null; done
    rm -rf "$root"
}
trap cleanup EXIT INT TERM
tar -C "$root" -xf "$cache/base.tar"
chmod 755 "$root" # mktemp's 0700 would keep the chorus user out of /
mount -t proc proc "$root/proc"
mount -t tmpfs tmpfs "$root/run"
mkdir -p "$root/dev/shm" && mount -t tmpfs tmpfs "$root/dev/shm"
# apt's downloads are kept across runs (outside the snapshots).
mkdir -p "$cache/archives/partial" && mount --bind "$cache/archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null
in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive "$@"; }

# Everything the packages depend on, then the test's own tools, first: what is
# in the root before our packages is what must be there after the purge.
mkdir -p "$root/tmp/debs" && cp "$debdir"/*.deb "$root/tmp/debs/" && rm -f "$root"/tmp/debs/*-dbgsym_*
deps=$(for d in "$root"/tmp/debs/*.deb; do dpkg-deb -f "$d" Depends; echo; done | tr ',' '\n' |
    sed 's/^ *//' | grep -v -e '^$' -e '^chorus' -e '^libchorus' | sort -u | paste -sd, -)
extra="pkg-config, gcc, libc6-dev"
[ "$dkms" = 1 ] && extra="$extra, linux-headers-$arch"
say "dependencies: $deps; for the test: $extra"
in_root apt-get update -qq >"$cache/apt.log" 2>&1 &&
    in_root apt-get satisfy -y -qq --no-install-recommends "$deps, $extra" >>"$cache/apt.log" 2>&1 ||
    { tail -20 "$cache/apt.log"; say "FAIL: installing the dependencies failed ($cache/apt.log)"; exit 1; }

# Paths in the root, without what changes by itself (apt's lists and caches,
# logs, dpkg's own backups, the ld.so cache's age is not a path).
snapshot() {
    in_root find / -xdev \( -path /proc -o -path /run -o -path /tmp -o -path /dev -o -path /var/cache/apt \
        -o -path /var/lib/apt -o -path /var/log -o -path /var/cache/debconf -o -name '*-old' \) -prune -o -print |
        sort >"$1"
}
# The kernel's module index (depmod), which a kernel image's installation
# makes and DKMS remakes: here only the headers are installed, so make it now.
if [ "$dkms" = 1 ]; then
    for k in $(cd "$root/lib/modules" && ls); do in_root depmod "$k" 2>>"$cache/apt.log"; done
fi
snapshot "$cache/before"

# --- install -----------------------------------------------------------------
debs=$(cd "$root/tmp/debs" && ls $(for p in $pkgs; do echo "${p}_*.deb"; done) | sed 's|^|/tmp/debs/|')
if in_root apt-get install -y -qq --no-install-recommends $debs >"$cache/install.log" 2>&1; then
    ok "apt-get install ./chorus*.deb (log: $cache/install.log)"
else
    tail -20 "$cache/install.log"; say "FAIL: apt-get install of the packages failed"; exit 1
fi
. "$(dirname "$0")/check-deb-installed.sh"

# --- remove: only the conffiles (and their directories) may stay -------------
in_root apt-get remove -y -qq $pkgs >"$cache/remove.log" 2>&1 ||
    bad "apt-get remove failed ($cache/remove.log)"
snapshot "$cache/removed"
# The user's entries in passwd/group/shadow/gshadow are made by
# systemd-sysusers, which keeps the previous files as passwd- etc.
sysusers_backup='^/etc/\(passwd\|group\|shadow\|gshadow\)-$'
# A removed package keeps, until its purge, its dpkg records (state "rc":
# the conffiles list and the postrm that purges) and deb-systemd-helper's
# record of its units.
kept='^/var/lib/dpkg/info/chorus\.\(list\|postrm\)$\|^/var/lib/systemd/deb-systemd-helper-enabled/chorus-[a-z]*\.service\.dsh-also$'
left=$(comm -13 "$cache/before" "$cache/removed" | grep -v -e '^/etc/chorus$' -e '^/etc/chorus/profiles$' \
    -e "$sysusers_backup" -e "$kept" |
    grep -v -x -F "$(in_root dpkg-query -W -f='${Conffiles}\n' chorus | awk '{print $1}')")
[ -z "$left" ] && ok "after remove only the conffiles stay" || bad "left after remove: $(echo $left)"
gone=$(comm -23 "$cache/before" "$cache/removed")
[ -z "$gone" ] || bad "remove deleted files that were there before: $(echo $gone)"

# --- purge: nothing may stay -----------------------------------------------------
in_root dpkg --purge $pkgs >"$cache/purge.log" 2>&1 ||
    bad "dpkg --purge failed ($cache/purge.log)"
snapshot "$cache/purged"
left=$(comm -13 "$cache/before" "$cache/purged" | grep -v -e "$sysusers_backup")
[ -z "$left" ] && ok "after purge nothing stays" || bad "left after purge: $(echo $left)"
gone=$(comm -23 "$cache/before" "$cache/purged")
[ -z "$gone" ] || bad "purge deleted files that were there before: $(echo $gone)"
in_root getent passwd chorus >/dev/null && say "note: the chorus system user stays after purge (as Debian leaves system users)"

if [ "$nfail" -gt 0 ]; then
    say "$nfail check(s) failed"
    exit 1
fi
say "all checks passed"
