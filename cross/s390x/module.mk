# cross/s390x: the wire formats and codecs tested big-endian (issue 20 item
# 2): `make check-be` (= check-s390x) cross-builds BE_TESTS for s390x, the
# one big-endian architecture Debian 12 has, with gcc-s390x-linux-gnu, and
# runs them under qemu-user (qemu-s390x from qemu-user-static, through
# binfmt).  Debian 12's security archive has no s390x, so the :s390x
# libraries cannot be installed beside the host's through multiarch (their
# versions lag the host's); cross/sysroot.sh unpacks them into
# $(S390X_SYSROOT) instead, the compiler's pkg-config sysroot and qemu's -L
# prefix.  `make be-deps` (root) adds the s390x architecture and installs
# the toolchain and qemu.  BE_TESTS: the unit tests of every wire format and
# codec that start no daemon (libdev messages, RBS packets, the ticker and
# its parts, the conversions' packing, fft frames, kpatch records, the
# archive's index, the golden bytes of tests/test_wire_bytes.c) and a few
# more that need only GLib, GSL, FFTW and Check.
S390X_TRIPLET := s390x-linux-gnu
S390X_B := $(B)/s390x
S390X_SYSROOT := $(abspath $(B))/s390x-sysroot
S390X_PKGS := libc6 libgcc-s1 libglib2.0-0 libglib2.0-dev libpcre2-8-0 libpcre2-dev check libsubunit0 libsubunit-dev \
	libgsl27 libgslcblas0 libgsl-dev libfftw3-single3 libfftw3-double3 libfftw3-dev
BE_TESTS := test_libdev_wire test_libdev_packet test_libdev_status test_libdev_malformed test_rbs_wire test_rbs_core \
	test_ticker_parts test_conversions test_kpatch_reader test_archive_time test_timehist test_numbering test_ring \
	test_fit test_request test_wire_bytes
S390X_LIBDIRS := $(S390X_SYSROOT)/usr/lib/$(S390X_TRIPLET):$(S390X_SYSROOT)/lib/$(S390X_TRIPLET)
S390X_MAKE = PKG_CONFIG_SYSROOT_DIR=$(S390X_SYSROOT) \
	PKG_CONFIG_LIBDIR=$(S390X_SYSROOT)/usr/lib/$(S390X_TRIPLET)/pkgconfig:$(S390X_SYSROOT)/usr/share/pkgconfig \
	$(MAKE) --no-print-directory B=$(S390X_B) CC=$(S390X_TRIPLET)-gcc AR=$(S390X_TRIPLET)-ar \
	PKGS="glib-2.0 gsl fftw3f check" LDFLAGS=-Wl,-rpath-link=$(S390X_LIBDIRS)

.PHONY: be-deps check-be check-s390x
be-deps:
	@dpkg --print-foreign-architectures | grep -qx s390x || { [ "$$(id -u)" = 0 ] && dpkg --add-architecture s390x && apt-get update -qq; }
	@sh tools/deps.sh gcc-$(S390X_TRIPLET) qemu-user-static binfmt-support
	@sh cross/sysroot.sh s390x $(S390X_SYSROOT) $(S390X_PKGS) >/dev/null
# 77 (skipped) when an s390x program does not run here (no qemu-s390x binfmt,
# which update-binfmts enables when root).  Each test runs through a stub
# that points qemu at the sysroot (QEMU_LD_PREFIX).
check-be check-s390x: be-deps
	@$(S390X_MAKE) -j2 $(addprefix $(S390X_B)/tests/,$(BE_TESTS))
	@[ -e /proc/sys/fs/binfmt_misc/qemu-s390x ] || { [ "$$(id -u)" = 0 ] && update-binfmts --enable qemu-s390x; } >/dev/null 2>&1; \
	    printf 'int main(void) { return 42; }\n' | $(S390X_TRIPLET)-gcc -x c -o $(S390X_B)/probe -; \
	    QEMU_LD_PREFIX=$(S390X_SYSROOT) $(S390X_B)/probe 2>/dev/null; \
	    [ $$? = 42 ] || { echo "check-be: SKIP (s390x programs do not run: no qemu-s390x binfmt)"; exit 77; }
	@mkdir -p $(S390X_B)/run && for t in $(BE_TESTS); do \
	    printf '#!/bin/sh\nQEMU_LD_PREFIX=%s exec %s\n' "$(S390X_SYSROOT)" "$(abspath $(S390X_B))/tests/$$t" > $(S390X_B)/run/$$t; \
	    chmod +x $(S390X_B)/run/$$t; done
	@echo "check-be: $(words $(BE_TESTS)) tests, s390x (big-endian) under qemu-user"
	@CK_TIMEOUT_MULTIPLIER=10 sh tests/run $(addprefix $(S390X_B)/run/,$(BE_TESTS))
