#!/bin/sh
# make vmtest (= make kpatch-vmtest): the module and chorus on a real kernel.
#
# Boots Debian's own kernel (linux-image-amd64) under qemu-system-x86_64
# (software emulation; no KVM needed) with an initramfs holding busybox,
# the ALSA core modules, snd-dummy (its hrtimer calls
# snd_pcm_period_elapsed() exactly as a card's DMA interrupt would),
# snd-aloop (the loopback card: what is played into hw:Loopback,0,0 is
# captured from hw:Loopback,1,0), chorus_kpatch.ko built against that
# kernel's headers, vmcheck (vmcheck.c: the module's own checks), and
# chorus's syncd, audiod, audioget, synctool, chorus-cat and
# chorus-selftest with their shared libraries.  The VM runs init.sh (see
# there for the steps).  Passes when the VM prints "KPATCH-VMTEST: PASS".
# After the VM, bracketfit (bracketfit.c) fits audiod's envelope through
# vmcheck's raw snd-dummy records with their entry and their update times.
# Takes a few minutes.
#
# Usage: sh kpatch/vmtest/run.sh MAKE BUILD_DIR   (from the top of the tree)
# VMTEST_SHORT=1 runs the short form make check uses (tests/test_vmtest.sh):
# vmcheck, one loopback run with kpatch and an overrun, and snd-dummy at
# 48 kHz / 1024 with an overrun.  VMTEST_DUMMY=1
# runs vmcheck and snd-dummy only (init.sh says which).  VMTEST_OBS=1 prints
# the observations audiod fitted in every snd-dummy run (a failed run's are
# printed anyway) as "vmtest: obs" lines of the console log.
set -eu
MAKE=${1:-make}
B=${2:-build}
W=$B/kpatch/vmtest
start=$(date +%s)

arch=$(dpkg --print-architecture 2>/dev/null || echo unknown)
if [ "$arch" != amd64 ]; then
    echo "kpatch-vmtest: needs an amd64 Debian host (this is $arch)" >&2
    exit 1
fi
sh tools/deps.sh qemu-system-x86 linux-image-amd64 busybox-static cpio \
    libasound2-dev pkg-config

# The image's version, e.g. 6.1.0-57-amd64: the metapackage depends on it.
kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 |
       sed -n 's/.*linux-image-\([0-9][^ ,]*\).*/\1/p')
[ -n "$kver" ] || { echo "kpatch-vmtest: cannot tell linux-image-amd64's version" >&2; exit 1; }
sh tools/deps.sh "linux-headers-$kver"
kimg=/boot/vmlinuz-$kver
kmods=/lib/modules/$kver/kernel
[ -r "$kimg" ] || { echo "kpatch-vmtest: $kimg missing" >&2; exit 1; }
echo "kpatch-vmtest: kernel $kver"

# The module, against exactly that kernel's headers.
$MAKE --no-print-directory kpatch KDIR=/usr/src/linux-headers-$kver \
    KPATCH_KFLAGS="W=1 CHORUS_KPATCH_WERROR=1"

# chorus's programs, from this build.
PROGS="syncd audiod audioget synctool chorus-cat chorus-selftest"
$MAKE --no-print-directory $(for p in $PROGS; do printf '%s ' "$B/bin/$p"; done) \
    "$B/libkpatch.a" "$B/libtimehist.a" "$B/libsync.a"

# vmcheck: dynamically linked; its libraries are copied in below.
rm -rf "$W"
mkdir -p "$W"
# The initramfs tree is staged outside the build tree: the top Makefile
# includes every *.d under it, and alsa's config has directories named so.
R=$(mktemp -d "${TMPDIR:-/tmp}/chorus-kpatch-vmtest.XXXXXX")
trap 'rm -rf "$R"' EXIT
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I. \
    -o "$W/vmcheck" kpatch/vmtest/vmcheck.c kpatch/reader.c kpatch/record.c \
    $(pkg-config --cflags --libs alsa) -lm
# bracketfit: on the host, audiod's fit through vmcheck's raw snd-dummy
# records, entry times against update times (bracketfit.c).
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I. $(pkg-config --cflags glib-2.0) \
    -o "$W/bracketfit" kpatch/vmtest/bracketfit.c "$B/libkpatch.a" "$B/libtimehist.a" "$B/libsync.a" \
    $(pkg-config --libs gsl glib-2.0) -lm

mkdir -p "$R/bin" "$R/dev" "$R/proc" "$R/sys" "$R/tmp" "$R/lib/modules" "$R/usr/share"
cp /bin/busybox "$R/bin/busybox"
cp "$W/vmcheck" "$R/bin/vmcheck"
for p in $PROGS; do cp "$B/bin/$p" "$R/bin/$p"; done
# Copy each shared library at the path the loader expects.
for exe in "$W/vmcheck" $(for p in $PROGS; do printf '%s ' "$B/bin/$p"; done); do
    for lib in $(ldd "$exe" | awk '/=>/ { print $3 } /^\t\// { print $1 }'); do
        [ -e "$R$lib" ] && continue
        mkdir -p "$R$(dirname "$lib")"
        cp -L "$lib" "$R$lib"
    done
done
# alsa-lib reads its configuration to resolve "hw:0,0".
cp -r /usr/share/alsa "$R/usr/share/alsa"
for m in soundcore snd snd-timer snd-pcm snd-dummy snd-aloop; do
    f=$(find "$kmods/sound" -name "$m.ko*" | head -n 1)
    [ -n "$f" ] || { echo "kpatch-vmtest: module $m not in $kmods" >&2; exit 1; }
    case $f in
        *.ko) cp "$f" "$R/lib/modules/$m.ko" ;;
        *.ko.xz) xz -dc "$f" > "$R/lib/modules/$m.ko" ;;
        *.ko.zst) zstd -dcq "$f" > "$R/lib/modules/$m.ko" ;;
        *) echo "kpatch-vmtest: cannot unpack $f" >&2; exit 1 ;;
    esac
done
cp "$B/kpatch/ko/chorus_kpatch.ko" "$R/lib/modules/"

cp kpatch/vmtest/init.sh "$R/init"
chmod 755 "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.gz"

log=$W/console.log
echo "kpatch-vmtest: booting (software emulation; console log: $log)"
set +e
timeout 600 nice -n 19 qemu-system-x86_64 -nographic -no-reboot -m 1024 -smp 1 \
    -kernel "$kimg" -initrd "$W/initramfs.gz" \
    -append "console=ttyS0 rdinit=/init panic=-1 loglevel=4 tsc=reliable${VMTEST_SHORT:+ chorus_vmtest=short}${VMTEST_DUMMY:+ chorus_vmtest=dummy}${VMTEST_OBS:+ chorus_vmtest_obs}" \
    > "$log" 2>&1 </dev/null
qrc=$?
set -e
tr -d '\r' < "$log" | "$W/bracketfit" 48000
sh kpatch/vmtest/verdict.sh kpatch-vmtest "$log" "$start" "$qrc"
