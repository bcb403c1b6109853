#!/bin/sh
# cross/vm-arm64.sh B ARM64_B TEST... — make check-arm64: the arm64 build's
# tests on a real arm64 Linux kernel, Debian's own (linux-image-arm64),
# booted under qemu-system-aarch64 (software emulation of a Cortex-A72
# "virt" board, 2 CPUs, no KVM).  Unlike qemu-user, the kernel there is a
# real arm64 kernel: SO_TIMESTAMPNS, socket filters, ioctls and signals are
# its own, so syncd's RBS path and the simulated end-to-end tests run as
# they would on a Raspberry Pi.
#
# The initramfs holds an arm64 busybox (the shell and tools of the tests'
# scripts), the tree's files (git ls-files) and its arm64 build (no objects)
# at the same absolute path as here, the arm64 shared libraries they need
# (cross/elf-libs.sh), alsa-lib's configuration, and cross/vm-init.sh as
# /init.  Tests named in cross/vm-skip.txt run as stubs that print the
# reason and exit 77 (skipped, never passed).  Passes when the VM's
# tests/run reports no failure.
#
# ARM64_VM_TIMEOUT (s, default 5400) bounds the whole VM; TEST_TIMEOUT (s,
# default 1500) each test; CK_TIMEOUT_MULTIPLIER (default 20) Check's
# per-test timeouts.  The console log is kept in ARM64_B/vm/console.log.
set -eu
B=$1 AB=$2
shift 2
top=$(pwd)
W=$AB/vm
triplet=aarch64-linux-gnu
VM_TOOL_PKGS="python3-minimal python3.11-minimal libpython3.11-minimal libpython3.11-stdlib python3 python3.11 python3-numpy
    libblas3 liblapack3 libgfortran5 libexpat1 libncursesw6 libtinfo6 libbz2-1.0 libdb5.3 libreadline8
    mosquitto libcjson1 libdlt2 libwrap0 openssl"
kver=$(sh cross/arm64-kernel.sh "$B/arm64-kernel")
kroot=$B/arm64-kernel/root
echo "check-arm64: kernel $kver (qemu-system-aarch64, virt, cortex-a72 x2)"

rm -rf "$W"
mkdir -p "$W"
R=$(mktemp -d "${TMPDIR:-/tmp}/chorus-arm64-vm.XXXXXX")
trap 'rm -rf "$R"' EXIT
# R becomes the VM's / (cpio's "." entry): mktemp's 0700 would keep every
# user but root out of the whole tree (test_fuse's uid 65534 could open
# nothing: exit 11).
chmod 755 "$R"
mkdir -p "$R/bin" "$R/dev" "$R/proc" "$R/sys" "$R/tmp" "$R/etc" "$R/usr/share" "$R/chorus-vm" "$R/lib/modules" "$R$top"
cp "$kroot/bin/busybox" "$R/bin/busybox"
# The tree as git knows it (sources, scripts, scenarios, test data), then its arm64 build.
git ls-files -z | xargs -0 cp --parents -t "$R$top" 2>/dev/null || true
# (not the VMs' own images: this one's, make vmtest-arm64's; nor make
# deb-arm64's packages and the arm64 root check-deb-arm64 keeps)
build_files() {
    find "$AB" \( -path "$W" -o -path "$AB/kpatch/vmtest" -o -path "$AB/kpatch/ko" -o -path "$AB/deb" \
        -o -path "$AB/deb-root" \) -prune -o "$@"
}
build_files -type f ! -name '*.o' ! -name '*.d' ! -name '*.a' -print0 | xargs -0 cp -P --parents -t "$R$top"
build_files -type l -print0 | xargs -0 -r cp -P --parents -t "$R$top"
sh cross/elf-libs.sh "$triplet" "$R" $(build_files -type f -perm -u+x -print -o -name '*.so*' -type f -print)
# The tools tests run besides the tree's programs (each test skips without
# its own): python3 with numpy (test_python, test_proxy_node, test_web_api,
# test_mqtt), mosquitto and mosquitto_passwd (test_mqtt, test_mqtt_field),
# openssl (test_mqtt's certificates).  python3:arm64 cannot be installed
# beside the host's, so these arm64 packages are unpacked
# (cross/sysroot.sh, once, into B/arm64-vmtools) and copied into the VM's
# /usr with the libraries they need; the alternatives links the packages'
# postinst would make (libblas.so.3, liblapack.so.3) are made here, and
# openssl's configuration is the host's (the same on every architecture).
vt=$B/arm64-vmtools
sh cross/sysroot.sh arm64 "$vt" $VM_TOOL_PKGS >/dev/null
for d in usr lib; do
    [ -d "$vt/$d" ] && cp -a "$vt/$d" "$R/"
done
for l in blas lapack; do
    ln -sf "$l/lib$l.so.3" "$R/usr/lib/$triplet/lib$l.so.3"
done
mkdir -p "$R/etc/ssl" && cp /etc/ssl/openssl.cnf "$R/etc/ssl/"
sh cross/elf-libs.sh "$triplet" "$R" "$R/usr/bin/python3.11" "$R/usr/sbin/mosquitto" "$R/usr/bin/mosquitto_passwd" \
    "$R/usr/bin/openssl" $(find "$R/usr/lib/python3.11/lib-dynload" "$R/usr/lib/python3/dist-packages/numpy" -name '*.so')
cp -r /usr/share/alsa "$R/usr/share/alsa"
# The locales the tests use (test_cfg: reals read alike in de_DE.UTF-8); glibc's
# compiled locales are the same on arm64 as here (64-bit, little-endian).
for l in C.utf8 de_DE.utf8; do
    [ -d "/usr/lib/locale/$l" ] && mkdir -p "$R/usr/lib/locale" && cp -rL "/usr/lib/locale/$l" "$R/usr/lib/locale/"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$R/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$R/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$R/etc/hosts"
# fuse (test_fuse) is a module in Debian's arm64 kernel.
mods=""
for m in fuse; do
    f=$(find "$kroot/lib/modules/$kver" -name "$m.ko" | head -n 1)
    [ -n "$f" ] && cp "$f" "$R/lib/modules/" && mods="$mods $m"
done
echo "$mods" > "$R/chorus-vm/modules"
echo "$top" > "$R/chorus-vm/top"
for t in "$@"; do echo "$t"; done > "$R/chorus-vm/tests"
grep -v '^#' cross/vm-skip.txt > "$R/chorus-vm/skip" || true
echo "${CK_TIMEOUT_MULTIPLIER:-20}" > "$R/chorus-vm/ck_mult"
echo "${TEST_TIMEOUT:-1500}" > "$R/chorus-vm/test_timeout"
cp cross/vm-init.sh "$R/init"
chmod 755 "$R/init"
(cd "$R" && find . | cpio -o -H newc --quiet | gzip -1) > "$W/initramfs.gz"
echo "check-arm64: initramfs $(du -h "$W/initramfs.gz" | cut -f1), $# tests; booting (console log: $W/console.log)"

start=$(date +%s)
set +e
timeout "${ARM64_VM_TIMEOUT:-5400}" nice -n 10 qemu-system-aarch64 -M virt -cpu cortex-a72 -smp 2 -m 3072 \
    -nographic -no-reboot -kernel "$kroot/boot/vmlinuz-$kver" -initrd "$W/initramfs.gz" \
    -append "console=ttyAMA0 rdinit=/init panic=-1 loglevel=3" > "$W/console.log" 2>&1 </dev/null
qrc=$?
set -e
tr -d '\r' < "$W/console.log" > "$W/out.log"
grep '^arm64-vm: kernel' "$W/out.log" || true
sed -n '/^arm64-vm: BEGIN/,/^arm64-vm: END/p' "$W/out.log" | sed '1d;$d'
grep '^arm64-vm: END' "$W/out.log" || true
dur=$(($(date +%s) - start))
tally=$(grep -E '^tests: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$W/out.log" | tail -n 1)
if [ -z "$tally" ]; then
    echo "check-arm64: FAIL in ${dur}s: the VM gave no tally (qemu exit $qrc; 124: ARM64_VM_TIMEOUT); see $W/console.log" >&2
    exit 1
fi
echo "check-arm64 (arm64 VM, kernel $kver): $tally in ${dur}s"
case $tally in
*" 0 failed"*) exit 0 ;;
*) exit 1 ;;
esac
