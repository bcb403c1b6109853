# chorus — one Makefile for the whole tree (no recursive make into sub-trees).
#
# Every directory that builds something has a `module.mk` fragment (one or two
# levels deep), included
# below.  A fragment appends to these variables and writes its own link rules:
#   PROGS      programs installed to $(PREFIX)/bin        ($(B)/bin/NAME)
#   TESTS      Check test programs run by `make check`    ($(B)/tests/NAME)
#   BENCHES    benchmark programs run by `make bench`     ($(B)/bench/NAME)
#   INSTALL_HOOKS  extra phony targets run by `make install`
#   INSTALL_FILES  built files those hooks install (`make programs` builds
#              them with PROGS and nothing else: what a package build needs)
# Objects come from one pattern rule: foo/bar.c -> $(B)/foo/bar.o.
#
# Targets: all check bench bench-quick deps install clean (demo arrives with the apps);
# deb check-deb check-install (Debian packages and `make install`,
# dist/module.mk); arm64 check-arm64 kpatch-arm64 vmtest-arm64 (cross build,
# tests on an arm64 kernel under qemu-system-aarch64; cross/module.mk);
# check-be (big-endian: s390x under qemu-user; cross/s390x/module.mk);
# fuzz (every libFuzzer target for FUZZ_LONG_SECONDS; tests/fuzz/module.mk).
# `make check SANITIZE=1` builds in build-san/ with ASan + UBSan.

# Installation directories (`make install PREFIX=/usr DESTDIR=stage`).  The
# programs read /etc/chorus whatever PREFIX is, so SYSCONFDIR stays /etc.  The
# ALSA plugin goes to alsa-lib's multiarch plugin directory under PREFIX
# (/usr/lib/x86_64-linux-gnu/alsa-lib for PREFIX=/usr).
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
SYSCONFDIR ?= /etc
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/chorus
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
ALSA_PLUGIN_DIR ?= $(patsubst /usr/%,$(PREFIX)/%,$(shell pkg-config --variable=libdir alsa 2>/dev/null || echo /usr/lib))/alsa-lib
B       := build$(if $(SANITIZE),-san)

CC      ?= cc
CSTD    := -std=c11 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
OPT     ?= -O2 -g
comma   := ,
SAN     := $(if $(SANITIZE),-fsanitize=address$(comma)undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
# Every dependency comes through pkg-config; `=` keeps the shell calls lazy so
# `make deps` works before the packages exist.
PKGS     = glib-2.0 gsl fftw3f alsa sndfile check libsystemd json-glib-1.0 libmosquitto fuse3
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
pkglibs  = $(shell pkg-config --libs $(1))
CFLAGS  += $(CSTD) $(WARN) $(OPT) $(SAN) -fPIC -MMD -MP -I. $(PKG_CFLAGS)
LDFLAGS += $(SAN)
link     = $(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group

PROGS   :=
TESTS   :=
BENCHES :=
INSTALL_HOOKS :=
INSTALL_FILES :=

.PHONY: all programs check test bench bench-quick deps install clean format format-check
# Keep intermediate objects (test and bench objects are made by chained rules).
.SECONDARY:
all:

include $(sort $(wildcard */module.mk) $(wildcard */*/module.mk))

all: $(PROGS) $(TESTS) $(BENCHES)
programs: $(PROGS) $(INSTALL_FILES)

# G_LOG_DOMAIN: one per program (its messages read "syncd-WARNING **: ..."),
# one per library for what the library logs itself (docs/STYLE.md).  A tool
# under apps/tools is named after its file.
LOG_DOMAIN_syncd        := syncd
LOG_DOMAIN_audiod       := audiod
LOG_DOMAIN_apps/fft     := fft
LOG_DOMAIN_apps/detect  := detect
LOG_DOMAIN_apps/collab  := collab
LOG_DOMAIN_apps/mqtt    := chorus-mqtt
LOG_DOMAIN_apps/dsp     := chorus-dsp
LOG_DOMAIN_libdev       := chorus-dev
LOG_DOMAIN_libsync      := chorus-sync
LOG_DOMAIN_libcfg       := chorus-cfg
LOG_DOMAIN_timehist     := chorus-timehist
LOG_DOMAIN_kpatch       := chorus-kpatch
LOG_DOMAIN_sim          := chorus-sim
LOG_DOMAIN_alsapcm      := chorus-alsapcm
LOG_DOMAIN_fuse         := chorus-fuse
LOG_DOMAIN_sim/radio    := chorus-sim-radio
LOG_DOMAIN_sim/launch   := chorus-sim
LOG_DOMAIN_sim/score    := chorus-demo
LOG_DOMAIN_tests        := chorus-test
LOG_DOMAIN_bench        := chorus-bench
LOG_DOMAIN_selftest     := chorus-selftest
LOG_DOMAIN_archive      := chorus-archive
LOG_DOMAIN_proxy        := chorus-proxy
LOG_DOMAIN_web          := chorus-web
log_domain = $(if $(filter apps/tools/%,$(1)),$(basename $(notdir $(1))),$(or $(LOG_DOMAIN_$(patsubst %/,%,$(dir $(1)))),chorus-$(basename $(notdir $(1)))))

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -DG_LOG_DOMAIN='"$(call log_domain,$<)"' -c -o $@ $<

$(B)/%.a:
	@mkdir -p $(dir $@)
	rm -f $@ && $(AR) rcs $@ $^

# --- dependencies -------------------------------------------------------------
# Debian package names; `make deps` installs the missing ones when root.
DEB_PKGS := build-essential pkg-config libglib2.0-dev libgsl-dev libfftw3-dev \
            libasound2-dev libsndfile1-dev check libsystemd-dev alsa-utils \
            gnuplot-nox iproute2 clang libclang-rt-14-dev clang-format locales-all \
            libjson-glib-dev libmosquitto-dev mosquitto openssl python3-numpy \
            libfuse3-dev fuse3 libsoup-3.0-dev chromium chromium-driver \
            qemu-system-x86 linux-image-amd64 linux-headers-amd64 busybox-static cpio
# (libmosquitto-dev … python3-numpy: chorus-mqtt, and make check's broker and
# Python tests, tests/test_mqtt.sh and tests/test_python.sh; libfuse3-dev fuse3:
# chorus-fuse and tests/test_fuse.c; libsoup-3.0-dev: chorus-web; chromium
# chromium-driver: its browser test, tests/test_web_browser.sh; the last line:
# make check's short VM test, tests/test_vmtest.sh, which skips without them)
deps:
	@sh tools/deps.sh $(DEB_PKGS)

# --- tests --------------------------------------------------------------------
# `check` first makes sure the packages are there, then builds and runs.
# The kernel module is built against Debian's headers too (issue 7) when apt
# can install them; elsewhere that step says why it was skipped.
check:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory format-check
	@$(MAKE) --no-print-directory test
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    $(MAKE) --no-print-directory kpatch-check; \
	else echo "kpatch-check: skipped (needs root and apt-get to install kernel headers)"; fi

# Formatting (.clang-format, docs/STYLE.md): every C file but the kernel
# module's, which follows the kernel's own style.
FORMAT_SRCS = $(filter-out kpatch/chorus_kpatch.c kpatch/chorus_kpatch.h,$(patsubst ./%,%,$(shell git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')))
format:
	clang-format -i $(FORMAT_SRCS)
format-check:
	@clang-format --dry-run -Werror $(FORMAT_SRCS) && echo "format-check: $(words $(FORMAT_SRCS)) files follow .clang-format"

# Under SANITIZE=1 (ASan, 2-3x slower) each test program gets 900 s, not 300.
# The long programs (simulations of a minute or more, the VM) run in one
# lane, the rest in another (tests/run; TEST_LANES=1 runs one at a time).
# Under SANITIZE=1 one lane: ASan's programs run 2-3x slower, and two at
# once overloaded the two cores (audiod overran in test_collab_sim's
# outage case, which then found the frames after the overrun unconvertible:
# syncd/history.c now keeps the new run's first fit at once).  The
# six-node fields go in the long lane however short they are (the web
# tests): test_web_browser (six nodes and Chromium, 25 s alone) beside test_chaos
# overran 20-36 times per node and located no call in 120 s.
TESTS_LONG = test_chaos test_collab_sim test_audiod_past test_syncd_net test_archive_outage \
	test_archive test_ticker_field test_web_browser test_web_api
# Run alone after the two lanes (tests/run): the VM under qemu needs a core
# to itself.
TESTS_SOLO = test_vmtest
test: $(TESTS) $(PROGS)
	@$(if $(SANITIZE),TEST_TIMEOUT=$${TEST_TIMEOUT:-900} TEST_LANES=$${TEST_LANES:-1} )TESTS_LONG="$(TESTS_LONG)" TESTS_SOLO="$(TESTS_SOLO)" sh tests/run $(TESTS)

bench:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory $(BENCHES) $(PROGS)
	@sh bench/run $(BENCHES)
	@$(MAKE) --no-print-directory kpatch-vmtest

# The benchmarks that take seconds, not minutes (about a minute in all):
# the fit's efficiency and honesty, aging and walks, the envelope, UTC's
# day, DSP and IPC speed.  Run it after touching libsync, syncd or the
# DSP: bench/sync failed unseen for a week once because only `make bench`
# (over an hour with the soak, outage and field runs) ran it.
BENCHES_QUICK = $(B)/bench/dsp $(B)/bench/ipc $(B)/bench/sync $(B)/bench/aging $(B)/bench/walk $(B)/bench/envelope \
		$(B)/bench/utc
bench-quick:
	@$(MAKE) --no-print-directory $(BENCHES_QUICK)
	@sh bench/run $(BENCHES_QUICK)

install: $(PROGS) $(INSTALL_HOOKS)
	install -d $(DESTDIR)$(BINDIR)
	$(if $(PROGS),install -m 755 $(PROGS) $(DESTDIR)$(BINDIR)/)
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8
	install -m 644 $(wildcard docs/man/*.1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(wildcard docs/man/*.7) $(DESTDIR)$(MANDIR)/man7/
	install -m 644 $(wildcard docs/man/*.8) $(DESTDIR)$(MANDIR)/man8/

clean:
	rm -rf build build-san

-include $(shell find $(B) -name '*.d' 2>/dev/null)
