#!/bin/sh
# cross/vm-kpatch-arm64.sh B ARM64_B — make vmtest-arm64: the module built
# for arm64 (make kpatch-arm64) loaded into Debian's arm64 kernel under
# qemu-system-aarch64, with chorus's arm64 syncd, audiod and tools: the
# short form of the amd64 VM test (kpatch/vmtest/run.sh, VMTEST_SHORT=1),
# with its own /init, kpatch/vmtest/init.sh: vmcheck (kpatch/vmtest/vmcheck.c,
# cross-compiled) on the module's records, then one loopback run of
# chorus-selftest with audiod on kpatch timestamps.  Debian's arm64 kernel
# has no snd-dummy (CONFIG_SND_DUMMY is not set), so vmcheck drives card 0,
# snd-aloop's loopback, whose capture runs on its own timer
# (chorus_vmtest=nodummy on the kernel command line tells init.sh).  Passes
# when the VM prints "KPATCH-VMTEST: PASS"; ARM64_VM_TIMEOUT (s, default
# 1200) bounds it.  Console log: ARM64_B/kpatch/vmtest/console.log.
set -eu
B=$1 AB=$2
W=$AB/kpatch/vmtest
triplet=aarch64-linux-gnu
kver=$(sh cross/arm64-kernel.sh "$B/arm64-kernel")
kroot=$B/arm64-kernel/root
kmods=$kroot/lib/modules/$kver/kernel
start=$(date +%s)
echo "vmtest-arm64: kernel $kver (qemu-system-aarch64, virt, cortex-a72 x2)"

PROGS="syncd audiod audioget synctool chorus-cat chorus-selftest"
rm -rf "$W"
mkdir -p "$W"
R=$(mktemp -d "${TMPDIR:-/tmp}/chorus-kpatch-arm64.XXXXXX")
trap 'rm -rf "$R"' EXIT
$triplet-gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -I. \
    -o "$W/vmcheck" kpatch/vmtest/vmcheck.c kpatch/reader.c kpatch/record.c \
    $(PKG_CONFIG_LIBDIR=/usr/lib/$triplet/pkgconfig pkg-config --cflags --libs alsa) -lm

mkdir -p "$R/bin" "$R/dev" "$R/proc" "$R/sys" "$R/tmp" "$R/lib/modules" "$R/usr/share"
cp "$kroot/bin/busybox" "$R/bin/busybox"
cp "$W/vmcheck" "$R/bin/vmcheck"
for p in $PROGS; do cp "$AB/bin/$p" "$R/bin/$p"; done
sh cross/elf-libs.sh "$triplet" "$R" "$R/bin/vmcheck" $(for p in $PROGS; do printf '%s ' "$R/bin/$p"; done)
cp -r /usr/share/alsa "$R/usr/share/alsa"
for m in soundcore snd snd-timer snd-pcm snd-aloop; do
    f=$(find "$kmods/sound" -name "$m.ko" | head -n 1)
    [ -n "$f" ] || { echo "vmtest-arm64: module $m not in $kmods" >&2; exit 1; }
    cp "$f" "$R/lib/modules/$m.ko"
done
cp "$AB/kpatch/ko/chorus_kpatch.ko" "$R/lib/modules/"
cp kpatch/vmtest/init.sh "$R/init"
chmod 755 "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.gz"

log=$W/console.log
echo "vmtest-arm64: booting (console log: $log)"
set +e
timeout "${ARM64_VM_TIMEOUT:-1200}" nice -n 10 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 1024 \
    -nographic -no-reboot -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$W/initramfs.gz" \
    -append "console=ttyAMA0 rdinit=/init panic=-1 loglevel=4 chorus_vmtest=short chorus_vmtest=nodummy" \
    > "$log" 2>&1 </dev/null
qrc=$?
set -e
sh kpatch/vmtest/verdict.sh vmtest-arm64 "$log" "$start" "$qrc"
