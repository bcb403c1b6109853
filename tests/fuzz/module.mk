# Fuzz targets over the decoders of outside input (issue 15), beside
# libdev's fuzz_wire (libdev/module.mk, which defines CLANG and
# FUZZ_SECONDS): each is built with libFuzzer + ASan + UBSan from the
# sources it decodes with, and make check runs it for FUZZ_SECONDS from its
# committed seed corpus (tests/fuzz/corpus_NAME) through tests/fuzz/run.sh.
#   fuzz_rbs    syncd's RBS packets (syncd/rbs_wire.c), keyed and not
#   fuzz_share  collab's datagrams: shared detections, HAVE and WANT
#               (apps/collab/sharemsg.c, the event text of
#               apps/detect/event.c), keyed and not
#   fuzz_scenario  the scenario parser (sim/scenario.c, sim/outage.c) through
#               libcfg's tables and GKeyFile
#   fuzz_config syncd.conf (syncd/config.c) and detect's profiles
#               (apps/detect/profile.c), as files
#   fuzz_request the parameters of a request on audio/<k>/data
#               (audiod/request.c)
#   fuzz_kpatch the kernel module's (or side channel's) records and the
#               sequence tracker (kpatch/record.c)
#   fuzz_clip   the clip service's request and reply lines
#               (apps/collab/clipmsg.c)
#   fuzz_ticker the binary ticker in parts (libsync/ticker_wire.c,
#               ticker_asm.c) into a conversion graph
#   fuzz_frame  remote device streams: libdev's frame reassembler, the
#               messages in it and chorus-proxy's handshake lines
#   fuzz_history syncd's history file, read at its start
#               (syncd/history_store.c)
FUZZ_SRCS_rbs := tests/fuzz/fuzz_rbs.c syncd/rbs_wire.c libsync/conv.c libsync/clockid.c libdev/netkey.c libdev/common.c
FUZZ_PKGS_rbs := glib-2.0 gsl
FUZZ_SRCS_share := tests/fuzz/fuzz_share.c apps/collab/sharemsg.c apps/detect/event.c libdev/common.c libdev/netkey.c
FUZZ_PKGS_share := glib-2.0
FUZZ_SRCS_clip := tests/fuzz/fuzz_clip.c apps/collab/clipmsg.c
FUZZ_PKGS_clip := glib-2.0
FUZZ_SRCS_ticker := tests/fuzz/fuzz_ticker.c libsync/ticker_asm.c libsync/ticker_wire.c libsync/graph.c libsync/graph_edge.c libsync/bridge.c libsync/conv.c \
	libsync/clockid.c
FUZZ_PKGS_ticker := glib-2.0 gsl
FUZZ_SRCS_scenario := tests/fuzz/fuzz_scenario.c sim/scenario.c sim/scenario_node.c sim/outage.c sim/rng.c sim/acoustics.c \
	libcfg/cfg.c libcfg/spec.c libcfg/table.c libsync/now.c libsync/simwander.c libsync/simutc.c apps/dsp/air.c
FUZZ_PKGS_scenario := glib-2.0 sndfile gsl
FUZZ_SRCS_config := tests/fuzz/fuzz_config.c syncd/config.c apps/detect/profile.c apps/detect/event.c apps/dsp/detector.c apps/dsp/wave.c \
	apps/dsp/synth.c apps/dsp/wavefile.c libcfg/cfg.c libcfg/spec.c \
	libcfg/table.c
FUZZ_PKGS_config := glib-2.0 sndfile fftw3f
FUZZ_SRCS_request := tests/fuzz/fuzz_request.c audiod/request.c audiod/error.c libsync/clockid.c
FUZZ_PKGS_request := glib-2.0
FUZZ_SRCS_kpatch := tests/fuzz/fuzz_kpatch.c kpatch/record.c
FUZZ_PKGS_kpatch := glib-2.0
FUZZ_SRCS_frame := tests/fuzz/fuzz_frame.c libdev/frame.c libdev/wire.c libdev/proxy_wire.c libdev/path.c libdev/netkey.c \
	libdev/common.c
FUZZ_PKGS_frame := glib-2.0
FUZZ_SRCS_history := tests/fuzz/fuzz_history.c syncd/history_store.c libsync/ticker_wire.c libsync/graph.c libsync/graph_edge.c \
	libsync/bridge.c libsync/conv.c libsync/clockid.c
FUZZ_PKGS_history := glib-2.0 gsl
FUZZ_NAMES := rbs share clip ticker scenario config request kpatch frame history
TESTS += $(patsubst %,$(B)/tests/fuzz_%,$(FUZZ_NAMES))
ifneq ($(CLANG),)
define fuzz_rules
$(B)/fuzz/fuzz_$(1): $$(FUZZ_SRCS_$(1))
	@mkdir -p $$(dir $$@)
	$$(CLANG) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I. \
	  $$(shell pkg-config --cflags $$(FUZZ_PKGS_$(1))) -o $$@ $$(filter %.c,$$^) $$(call pkglibs,$$(FUZZ_PKGS_$(1))) -lm
$(B)/tests/fuzz_$(1): $(B)/fuzz/fuzz_$(1) tests/fuzz/run.sh
	@mkdir -p $$(dir $$@)
	printf '#!/bin/sh\nexec sh "%s/tests/fuzz/run.sh" "%s/$$<" "%s/tests/fuzz/corpus_$(1)" %s\n' \
	  "$$(CURDIR)" "$$(CURDIR)" "$$(CURDIR)" "$$(FUZZ_SECONDS)" >$$@ && chmod +x $$@
endef
else
define fuzz_rules
$(B)/tests/fuzz_$(1):
	@mkdir -p $$(dir $$@)
	printf '#!/bin/sh\necho "fuzz_$(1): $(FUZZ_MISSING_WORD) ($(FUZZ_SKIP_WHY))"\nexit $(FUZZ_MISSING_EXIT)\n' >$$@ && chmod +x $$@
endef
endif
$(foreach f,$(FUZZ_NAMES),$(eval $(call fuzz_rules,$(f))))

# bench/fuzz: every target for FUZZ_BENCH_SECONDS (60) with executions,
# coverage and crashes in a table and bench-out/fuzz.csv (bench/fuzz.sh).
ifneq ($(CLANG),)
BENCHES += $(B)/bench/fuzz
$(B)/bench/fuzz: bench/fuzz.sh $(B)/fuzz/fuzz_wire $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_NAMES))
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/bench/fuzz.sh" "%s/fuzz" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@
endif

# `make fuzz`: every target for FUZZ_LONG_SECONDS (default 60) each; a
# crash, leak or hang fails it (and keeps the input, tests/fuzz/run.sh).
FUZZ_LONG_SECONDS ?= 60
.PHONY: fuzz
ifneq ($(CLANG),)
fuzz: $(B)/fuzz/fuzz_wire $(patsubst %,$(B)/fuzz/fuzz_%,$(FUZZ_NAMES))
	@for f in wire $(FUZZ_NAMES); do \
	    sh tests/fuzz/run.sh $(B)/fuzz/fuzz_$$f tests/fuzz/corpus_$$f $(FUZZ_LONG_SECONDS) || exit 1; done
else
fuzz:
	@echo "fuzz: needs clang with libFuzzer (make deps installs clang and libclang-rt-14-dev)" >&2; exit 1
endif
