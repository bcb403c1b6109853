# libdev: device patterns over AF_UNIX SOCK_SEQPACKET (server + client halves).
LIBDEV_SRCS := $(wildcard libdev/*.c)
$(B)/libdev.a: $(patsubst %.c,$(B)/%.o,$(LIBDEV_SRCS))
LIBDEV_PKGS := glib-2.0

# Tests: one program per area; each links the shared helper.
LIBDEV_TESTS := $(patsubst tests/test_libdev_%.c,%,$(wildcard tests/test_libdev_*.c))
LIBDEV_TEST_BINS := $(patsubst %,$(B)/tests/test_libdev_%,$(LIBDEV_TESTS))
TESTS += $(LIBDEV_TEST_BINS)
# a static pattern rule: it cannot capture the test objects themselves
$(LIBDEV_TEST_BINS): $(B)/tests/test_libdev_%: $(B)/tests/test_libdev_%.o $(B)/tests/libdev_testutil.o $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm
# the tools test runs chorus-cat and chorus-ctl from $(B)/bin
$(B)/tests/test_libdev_tools: | $(B)/bin/chorus-cat $(B)/bin/chorus-ctl

# Fuzzing: the wire decoder under libFuzzer (clang), run for a bounded time
# by `make check` through a generated wrapper in TESTS.  `make deps` installs
# clang and its fuzzer runtime; without them the wrapper says why and fails
# (issue 15: a missing fuzzer is a failure, not a skip) — except in a cross
# build, which passes FUZZ_MISSING_EXIT=77: the targets are the host's.
CLANG := $(shell command -v clang 2>/dev/null || command -v clang-14 2>/dev/null)
FUZZ_SECONDS ?= 10
# What the stubs say when there is no CLANG (a cross build passes its own:
# the fuzz targets are built for the host only).
FUZZ_SKIP_WHY ?= clang not found on PATH; make deps installs it
FUZZ_MISSING_EXIT ?= 1
FUZZ_MISSING_WORD = $(if $(filter 77,$(FUZZ_MISSING_EXIT)),SKIP,FAIL)
TESTS += $(B)/tests/fuzz_wire
ifneq ($(CLANG),)
$(B)/fuzz/fuzz_wire: tests/fuzz/fuzz_wire.c libdev/wire.c libdev/wire.h libdev/path.c libdev/path.h
	@mkdir -p $(dir $@)
	$(CLANG) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. \
	  $(shell pkg-config --cflags glib-2.0) -o $@ $(filter %.c,$^) $(call pkglibs,glib-2.0)
$(B)/tests/fuzz_wire: $(B)/fuzz/fuzz_wire tests/fuzz/run.sh
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/fuzz/run.sh" "%s/$<" "%s/tests/fuzz/corpus_wire" %s\n' \
	  "$(CURDIR)" "$(CURDIR)" "$(CURDIR)" "$(FUZZ_SECONDS)" >$@ && chmod +x $@
else
$(B)/tests/fuzz_wire:
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\necho "fuzz_wire: $(FUZZ_MISSING_WORD) ($(FUZZ_SKIP_WHY))"\nexit $(FUZZ_MISSING_EXIT)\n' >$@ && chmod +x $@
endif

# Benchmark: libdev against raw SOCK_SEQPACKET (bench/ipc.c).
BENCHES += $(B)/bench/ipc
$(B)/bench/ipc: $(B)/bench/ipc.o $(B)/bench/csvout.o $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0) -pthread -lm

# Every wire format's exact bytes (libdev messages and frames, RBS packets,
# the ticker, packed conversions, fft frames): tests/test_wire_bytes.c, the
# big-endian check's core (cross/s390x/module.mk).
TESTS += $(B)/tests/test_wire_bytes
$(B)/tests/test_wire_bytes: $(B)/tests/test_wire_bytes.o $(B)/libsyncd.a $(B)/libfftmsg.a $(B)/libdev.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
