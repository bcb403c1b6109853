#!/bin/busybox sh
# /init of the arm64 test VM (cross/vm-arm64.sh builds the initramfs around
# it): a real arm64 Debian kernel under qemu-system-aarch64, where syncd's
# RBS socket gets SO_TIMESTAMPNS from the kernel itself (qemu-user 7.2 does
# not emulate it).  The tree sits at the same absolute path as on the host
# (the tests name their programs by absolute paths), its arm64 build beside
# it; /chorus-vm/tests lists the tests to run and /chorus-vm/skip the ones
# that cannot run here ("NAME reason..."), which run as a stub that says why
# and exits 77.  Every line meant for the host starts with "arm64-vm:" or is
# tests/run's output between the BEGIN and END lines; the VM powers off.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mkdir -p /dev/shm /dev/pts /run /tmp
mount -t tmpfs tmpfs /dev/shm
mount -t devpts devpts /dev/pts
# A tmpfs on /tmp, unless the tree itself lies under /tmp (a worktree
# there): the mount would hide it, and the initramfs's own root is memory
# already.
case $(cat /chorus-vm/top) in
/tmp/*) ;;
*) mount -t tmpfs -o size=1g tmpfs /tmp ;;
esac
ip link set lo up
# CHORUS_EMULATED: the tests that hold audio clocks to a sound card's
# precision print it instead (tests/test_syncd_net.c), test_proxy paces its
# flood for an emulated proxy.
export PATH=/bin:/usr/bin HOME=/root LANG=C.UTF-8 CHORUS_EMULATED=qemu-system-aarch64
mkdir -p /root
top=$(cat /chorus-vm/top)
cd "$top" || { echo "arm64-vm: FAIL no $top"; poweroff -f; }
echo "arm64-vm: kernel $(uname -r) $(uname -m), $(nproc) cpus, $(sed -n 's/MemTotal: *//p' /proc/meminfo)"
for m in $(cat /chorus-vm/modules 2>/dev/null); do
    insmod "/lib/modules/$m.ko" 2>/dev/null || echo "arm64-vm: insmod $m failed"
done
# Every test runs through a stub of its own name: a skipped one prints its
# reason and exits 77; any other says how long it took (emulated seconds).
mkdir -p /chorus-vm/stubs
list=""
for t in $(cat /chorus-vm/tests); do
    name=$(basename "$t")
    why=$(sed -n "s/^$name //p" /chorus-vm/skip)
    if [ -n "$why" ]; then
        printf '#!/bin/sh\necho "%s: SKIP under the arm64 VM: %s"\nexit 77\n' "$name" "$why" > "/chorus-vm/stubs/$name"
    else
        printf '#!/bin/sh\ns=$(cut -d. -f1 /proc/uptime)\n%s\nrc=$?\necho "arm64-vm: %s took $(($(cut -d. -f1 /proc/uptime) - s)) s (exit $rc)"\nexit $rc\n' \
            "$t" "$name" > "/chorus-vm/stubs/$name"
    fi
    chmod +x "/chorus-vm/stubs/$name"
    list="$list /chorus-vm/stubs/$name"
done
start=$(cut -d. -f1 /proc/uptime)
echo "arm64-vm: BEGIN"
# shellcheck disable=SC2086
CK_TIMEOUT_MULTIPLIER=$(cat /chorus-vm/ck_mult) TEST_TIMEOUT=$(cat /chorus-vm/test_timeout) sh tests/run $list 2>&1
echo "arm64-vm: END (exit $?, $(($(cut -d. -f1 /proc/uptime) - start)) s)"
poweroff -f
