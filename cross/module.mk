# cross: the tree cross-built for arm64 (Raspberry Pi OS / Debian arm64) with
# Debian's cross toolchain and :arm64 libraries through multiarch, into
# $(B)/arm64, and its tests run under qemu-user through binfmt (issue 20
# item 2).  `make arm64-deps` (root) adds the arm64 architecture and installs
# the toolchain, qemu-user-static and the :arm64 -dev packages; libgsl-dev,
# which is not Multi-Arch: same, is unpacked beside the tree instead, and
# so is libsoup-3.0-dev's pkg-config file (cross/gsl-sysroot.sh).  `make check-arm64` runs ARM64_TESTS (default:
# every test; ARM64_TESTS=unit: those that start no daemon or simulation and
# that qemu-user can run) on a real arm64 kernel, Debian's linux-image-arm64,
# booted under qemu-system-aarch64 (cross/vm-arm64.sh; ARM64_RUN=vm, the
# default), or under qemu-user binfmt on this host's kernel (ARM64_RUN=user),
# with Check's timeouts 10 (user) or 20 (VM) times longer (emulation).  Tests
# that cannot run in the VM are in cross/vm-skip.txt, each with its reason,
# and are counted as skipped.  `make kpatch-arm64` builds the module against
# Debian's arm64 headers (cross/arm64-kernel.sh unpacks them).
ARM64_TRIPLET := aarch64-linux-gnu
ARM64_B := $(B)/arm64
ARM64_SYSROOT := $(abspath $(B))/arm64-sysroot
# libsoup-3.0-dev:arm64 is not installable beside the host's python3 (its
# gir1.2 dependency reaches python3:arm64): the runtime library is
# installed and cross/gsl-sysroot.sh supplies its libsoup-3.0.pc.
ARM64_DEV_PKGS := libglib2.0-dev libfftw3-dev libasound2-dev libsndfile1-dev check libsystemd-dev libjson-glib-dev libmosquitto-dev libfuse3-dev \
	libsoup-3.0-0
ARM64_ENV = PKG_CONFIG_LIBDIR=/usr/lib/$(ARM64_TRIPLET)/pkgconfig:/usr/share/pkgconfig \
	PKG_CONFIG_PATH=$$(sh cross/gsl-sysroot.sh $(ARM64_TRIPLET) arm64 $(ARM64_SYSROOT))
# No CLANG: the libFuzzer targets are the host's (a fuzz_* test of an arm64
# build used to run the host's amd64 binary); their stubs skip and say so.
ARM64_MAKE = $(ARM64_ENV) $(MAKE) --no-print-directory B=$(ARM64_B) CC=$(ARM64_TRIPLET)-gcc AR=$(ARM64_TRIPLET)-ar \
	CLANG= FUZZ_MISSING_EXIT=77 FUZZ_SKIP_WHY="libFuzzer targets are built for the host only, not cross-built for arm64"
# The tests that start daemons, simulations or other programs (and time them).
ARM64_SPAWNING := test_audiod test_audiod_xrun test_audiod_obslog test_audiod_follow test_background test_collab_sim test_collab_resume test_jsonl_full test_libdev_tools test_simpcm test_syncclient \
	test_syncd_net test_synctool fuzz_wire test_mqtt test_mqtt_field test_python test_libsync_installed test_ticker_field \
	test_web_api test_web_browser
# What qemu-user 7.2 (bookworm) does not emulate, so these fail under it
# (ARM64_RUN=user) and not on arm64 nor in the VM (ARM64_RUN=vm): setsockopt
# SO_TIMESTAMPNS (ENOPROTOOPT: syncd's RBS socket, test_rxfilter, and with it
# every RBS end-to-end test).  Debian 12 has no newer qemu-user (no
# backports of it), hence the VM.
ARM64_QEMU_LIMITED := test_rxfilter
ARM64_TESTS ?= all
ARM64_RUN ?= vm
ARM64_UNIT_NOTE = check-arm64: unit tests only; left out: $(ARM64_SPAWNING) (they start programs) and $(ARM64_QEMU_LIMITED) (qemu-user)
ARM64_ALL_TESTS = $(patsubst $(B)/%,$(ARM64_B)/%,$(filter-out %.so,$(TESTS)))

.PHONY: arm64 arm64-deps check-arm64 kpatch-arm64 deb-arm64 check-deb-arm64
# qemu-system-arm and cpio: the VM (its kernel and busybox are unpacked from
# the arm64 archive, not installed); linux-kbuild-6.1 and the headers' common
# part (arch: all): the module's cross build runs the host's Kbuild programs.
arm64-deps:
	@dpkg --print-foreign-architectures | grep -qx arm64 || { [ "$$(id -u)" = 0 ] && dpkg --add-architecture arm64 && apt-get update -qq; }
	@sh tools/deps.sh gcc-$(ARM64_TRIPLET) qemu-user-static binfmt-support qemu-system-arm cpio linux-headers-amd64 \
	    $(addsuffix :arm64,$(ARM64_DEV_PKGS) libgsl27)
	@# The build runs arm64 programs (each daemon's --print-config for
	@# dist/etc) through qemu-user: a machine (or container) without systemd
	@# leaves binfmt_misc unmounted and the package's entry disabled.
	@if [ "$$(id -u)" = 0 ] && [ -d /proc/sys/fs/binfmt_misc ]; then \
	    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc || true; \
	    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64 || true; \
	fi
arm64: arm64-deps
	@$(ARM64_MAKE) -j2 all
# ARM64_TESTS: all, unit, or test names.  In the VM the RBS and simulated
# end-to-end tests go first (ARM64_VM_FIRST), what the VM is for.
ARM64_VM_FIRST := $(addprefix $(ARM64_B)/tests/,test_rxfilter test_syncd_net test_synctool test_syncclient test_collab_sim \
	test_kpatch_reader test_wire_bytes)
ARM64_LISTED = $(if $(filter unit,$(ARM64_TESTS)),$(filter-out $(addprefix $(ARM64_B)/tests/,$(ARM64_SPAWNING) $(ARM64_QEMU_LIMITED)),$(ARM64_ALL_TESTS)),$(if $(filter all,$(ARM64_TESTS)),$(ARM64_ALL_TESTS),$(addprefix $(ARM64_B)/tests/,$(ARM64_TESTS))))
ARM64_SELECTED = $(filter $(ARM64_VM_FIRST),$(ARM64_LISTED)) $(filter-out $(ARM64_VM_FIRST),$(ARM64_LISTED))
# 77 (skipped) when an arm64 program does not run here (ARM64_RUN=user
# without qemu-user binfmt; ARM64_RUN=vm without qemu-system-aarch64).
check-arm64: arm64
	@$(if $(filter unit,$(ARM64_TESTS)),echo "$(ARM64_UNIT_NOTE)";) true
ifeq ($(ARM64_RUN),user)
	@printf 'int main(void) { return 42; }\n' | $(ARM64_TRIPLET)-gcc -x c -o $(ARM64_B)/probe -; \
	    $(ARM64_B)/probe 2>/dev/null; [ $$? = 42 ] || { echo "check-arm64: SKIP (arm64 programs do not run: no qemu-user binfmt)"; exit 77; }
	@CK_TIMEOUT_MULTIPLIER=10 sh tests/run $(ARM64_SELECTED)
else
	@command -v qemu-system-aarch64 >/dev/null || { echo "check-arm64: SKIP (no qemu-system-aarch64: make arm64-deps as root)"; exit 77; }
	@sh cross/vm-arm64.sh $(B) $(ARM64_B) $(ARM64_SELECTED)
endif
# The module against Debian's arm64 headers (W=1, warnings fail), into
# $(ARM64_B)/kpatch/ko; the host's own Kbuild programs do the host side.
kpatch-arm64: arm64-deps
	@kver=$$(sh cross/arm64-kernel.sh $(B)/arm64-kernel) && \
	    sh tools/deps.sh linux-headers-$${kver%-arm64}-common && \
	    $(MAKE) --no-print-directory kpatch B=$(ARM64_B) KDIR=$(abspath $(B))/arm64-kernel/root/usr/src/linux-headers-$$kver \
	    KPATCH_KFLAGS="ARCH=arm64 CROSS_COMPILE=$(ARM64_TRIPLET)- W=1 CHORUS_KPATCH_WERROR=1"
# The module loaded into Debian's arm64 kernel under qemu-system-aarch64
# with the arm64 daemons: vmcheck and one loopback chorus-selftest run
# (cross/vm-kpatch-arm64.sh; the short form of make vmtest).
.PHONY: vmtest-arm64
vmtest-arm64: kpatch-arm64 arm64
	@sh cross/vm-kpatch-arm64.sh $(B) $(ARM64_B)

# `make deb-arm64`: the Debian packages cross-built for arm64 (a Raspberry
# Pi's Debian 12 or Raspberry Pi OS) into $(ARM64_B)/deb, lintian clean
# (dist/deb.sh with the arch; pkg-config as for make arm64).
deb-arm64: arm64-deps deb-deps
	@$(ARM64_ENV) sh dist/deb.sh $(ARM64_B)/deb arm64
# `make check-deb-arm64`: tests/check-deb.sh on them in a fresh arm64 Debian
# 12 root, run through qemu-user binfmt.  The installed chorus-sim's field
# is left out (CHORUS_DEB_SIM=0): qemu-user 7.2 has no SO_TIMESTAMPNS, so
# syncd's RBS socket fails there (make check-arm64 runs RBS in the VM).
check-deb-arm64: deb-arm64
	@CHORUS_DEB_ARCH=arm64 CHORUS_DEB_SIM=0 nice -n 19 sh tests/check-deb.sh $(ARM64_B)/deb
