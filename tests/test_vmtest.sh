#!/bin/sh
# test_vmtest — make check's short form of `make vmtest` (kpatch/vmtest/run.sh
# with VMTEST_SHORT=1: vmcheck, one loopback run of chorus-selftest with
# kpatch and an overrun, and one on snd-dummy at 48 kHz with 1024-frame
# periods and an overrun; about a minute and a half under qemu).
# It never installs anything itself (`make deps`, which make check runs
# first, installs qemu-system-x86, the kernel, its headers and busybox):
# without root or one of them it says which and exits 77 (skipped, never a
# pass); `make vmtest` runs the whole test.
# Installed as build/tests/test_vmtest by selftest/module.mk; run from the
# top of the tree (tests/run does).
skip() { echo "test_vmtest: skipped: $*"; exit 77; }
[ -n "$VMTEST_SANITIZE" ] && skip "not under SANITIZE=1 (the VM runs the plain build; make vmtest)"
[ "$(id -u)" = 0 ] || skip "needs root (to build the module against Debian's headers); run make vmtest as root"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (make vmtest installs it)"
kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
       sed -n 's/.*linux-image-\([0-9][^ ,]*\).*/\1/p')
[ -n "$kver" ] && [ -r "/boot/vmlinuz-$kver" ] || skip "linux-image-amd64 not installed (make vmtest installs it)"
[ -d "/usr/src/linux-headers-$kver" ] || skip "linux-headers-$kver not installed (make vmtest installs it)"
command -v busybox >/dev/null && [ -x /bin/busybox ] || skip "busybox-static not installed (make vmtest installs it)"
VMTEST_SHORT=1 exec sh kpatch/vmtest/run.sh "${MAKE:-make}" build
