# cross: the tree cross-built for arm64 (Raspberry Pi OS / Debian arm64) with
# Debian's cross toolchain and :arm64 libraries through multiarch, into
# $(B)/arm64, and its tests run under qemu-user through binfmt (issue 20
# item 2).  `make arm64-deps` (root) adds the arm64 architecture and installs
# the toolchain, qemu-user-static and the :arm64 -dev packages; libgsl-dev,
# which is not Multi-Arch: same, is unpacked beside the tree instead
# (cross/gsl-sysroot.sh).  `make check-arm64` runs ARM64_TESTS (default:
# every test; ARM64_TESTS=unit: those that start no daemon or simulation and
# that qemu-user can run), with Check's timeouts 10 times longer (emulation).
ARM64_TRIPLET := aarch64-linux-gnu
ARM64_B := $(B)/arm64
ARM64_SYSROOT := $(abspath $(B))/arm64-sysroot
ARM64_DEV_PKGS := libglib2.0-dev libfftw3-dev libasound2-dev libsndfile1-dev check libsystemd-dev libjson-glib-dev libmosquitto-dev libfuse3-dev \
	libsoup-3.0-dev
ARM64_ENV = PKG_CONFIG_LIBDIR=/usr/lib/$(ARM64_TRIPLET)/pkgconfig:/usr/share/pkgconfig \
	PKG_CONFIG_PATH=$$(sh cross/gsl-sysroot.sh $(ARM64_TRIPLET) arm64 $(ARM64_SYSROOT))
ARM64_MAKE = $(ARM64_ENV) $(MAKE) --no-print-directory B=$(ARM64_B) CC=$(ARM64_TRIPLET)-gcc AR=$(ARM64_TRIPLET)-ar
# The tests that start daemons, simulations or other programs (and time them).
ARM64_SPAWNING := test_audiod test_background test_collab_sim test_libdev_tools test_simpcm test_syncclient \
	test_syncd_net test_synctool fuzz_wire test_mqtt test_mqtt_field test_python test_libsync_installed test_ticker_field \
	test_web_api test_web_browser
# What qemu-user 7.2 (bookworm) does not emulate, so these fail under it and
# not on arm64: setsockopt SO_TIMESTAMPNS (ENOPROTOOPT: syncd's RBS socket,
# test_rxfilter, and with it every RBS end-to-end test), and an ioctl the
# kernel answers ENOTTY, which qemu answers ENOSYS (test_kpatch_reader).
ARM64_QEMU_LIMITED := test_rxfilter test_kpatch_reader
ARM64_TESTS ?= all
ARM64_UNIT_NOTE = check-arm64: unit tests only; left out: $(ARM64_SPAWNING) (they start programs) and $(ARM64_QEMU_LIMITED) (qemu-user)
ARM64_ALL_TESTS = $(patsubst $(B)/%,$(ARM64_B)/%,$(filter-out %.so,$(TESTS)))

.PHONY: arm64 arm64-deps check-arm64
arm64-deps:
	@dpkg --print-foreign-architectures | grep -qx arm64 || { [ "$$(id -u)" = 0 ] && dpkg --add-architecture arm64 && apt-get update -qq; }
	@sh tools/deps.sh gcc-$(ARM64_TRIPLET) qemu-user-static binfmt-support $(addsuffix :arm64,$(ARM64_DEV_PKGS) libgsl27)
arm64: arm64-deps
	@$(ARM64_MAKE) -j2 all
# 77 (skipped) when an arm64 program does not run here (no qemu-user binfmt).
check-arm64: arm64
	@printf 'int main(void) { return 42; }\n' | $(ARM64_TRIPLET)-gcc -x c -o $(ARM64_B)/probe -; \
	    $(ARM64_B)/probe 2>/dev/null; [ $$? = 42 ] || { echo "check-arm64: SKIP (arm64 programs do not run: no qemu-user binfmt)"; exit 77; }
	@$(if $(filter unit,$(ARM64_TESTS)),echo "$(ARM64_UNIT_NOTE)";) \
	    CK_TIMEOUT_MULTIPLIER=10 sh tests/run $(if $(filter unit,$(ARM64_TESTS)),$(filter-out $(addprefix $(ARM64_B)/tests/,$(ARM64_SPAWNING) $(ARM64_QEMU_LIMITED)),$(ARM64_ALL_TESTS)),$(ARM64_ALL_TESTS))
