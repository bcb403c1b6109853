# syncd: the node's time-conversion daemon (local pairs, RBS between nodes).
# It links no simulator: chorus-sim installs its radio as a receive filter
# (syncd/rxfilter.h, loaded with dlopen).
SYNCD_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out syncd/main.c,$(wildcard syncd/*.c)))
$(B)/libsyncd.a: $(SYNCD_OBJS)
SYNCD_LIBS = $(call pkglibs,glib-2.0 gsl libsystemd) -ldl -lm
PROGS += $(B)/bin/syncd
$(B)/bin/syncd: $(B)/syncd/main.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(SYNCD_LIBS)

PROGS += $(B)/bin/synctool
$(B)/bin/synctool: $(B)/apps/tools/synctool.o $(B)/libsync.a $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl) -lm

# Unit tests of the pure parts (codec, RBS matching and fit, mesh), the
# pairs table, the conversion list, the command language, the
# receive-filter loader and the ticker's parts.
TESTS += $(B)/tests/test_rbs_wire $(B)/tests/test_rbs_core $(B)/tests/test_rbs_scope $(B)/tests/test_rbs_replay $(B)/tests/test_pairs $(B)/tests/test_pairs_history $(B)/tests/test_syncd_command \
	$(B)/tests/test_rxfilter $(B)/tests/test_conversions $(B)/tests/test_ticker_parts $(B)/tests/test_continuity $(B)/tests/test_rbs_paths
$(B)/tests/test_rbs_%: $(B)/tests/test_rbs_%.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
$(B)/tests/test_pairs: $(B)/tests/test_pairs.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
# A local pair's history: old audio frames converted honestly (history.h).
$(B)/tests/test_pairs_history: $(B)/tests/test_pairs_history.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
# The stated drift of a continued timescale (continuity.h).
$(B)/tests/test_continuity: $(B)/tests/test_continuity.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
$(B)/tests/test_conversions: $(B)/tests/test_conversions.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
# The ticker in parts: syncd's snapshot store and libsync's assembler.
$(B)/tests/test_ticker_parts: $(B)/tests/test_ticker_parts.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
$(B)/tests/test_syncd_command: $(B)/tests/test_syncd_command.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a \
		$(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -ldl -lm

# The loader's test loads test filters built here: a working one, one with
# a wrong ABI and one without the symbol (tests/rxfilter_test.c).
RXF_TEST_SOS := $(B)/tests/rxfilter_test.so $(B)/tests/rxfilter_badabi.so $(B)/tests/rxfilter_nosym.so
$(B)/tests/rxfilter_test.so: tests/rxfilter_test.c syncd/rxfilter.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -shared -o $@ $< $(LDFLAGS)
$(B)/tests/rxfilter_badabi.so: tests/rxfilter_test.c syncd/rxfilter.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DRXF_TEST_ABI=99 -shared -o $@ $< $(LDFLAGS)
$(B)/tests/rxfilter_nosym.so: tests/rxfilter_test.c syncd/rxfilter.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DRXF_TEST_NO_SYMBOL -shared -o $@ $< $(LDFLAGS)
$(B)/tests/test_rxfilter.o: CFLAGS += -DRXF_TEST_DIR='"$(abspath $(B)/tests)"'
$(B)/tests/test_rxfilter: $(B)/tests/test_rxfilter.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a \
		| $(RXF_TEST_SOS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -ldl -lm

# bench/utc: global - UTC over simulated days, syncd's steering loop on
# modelled clocks (bench/utcloop.h); test_steer the same loop for hours.
BENCHES += $(B)/bench/utc
$(B)/bench/utc: $(B)/bench/utc.o $(B)/bench/csvout.o $(B)/bench/utcloop.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl) -lm
TESTS += $(B)/tests/test_steer
$(B)/tests/test_steer: $(B)/tests/test_steer.o $(B)/bench/utcloop.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm

# The pieces of history kept across a restart of syncd (history_store.h,
# history_file.h): the store's encoding and checks, and the tables'
# export and restore.
TESTS += $(B)/tests/test_history_store
$(B)/tests/test_history_store: $(B)/tests/test_history_store.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
# syncd notices the realtime clock being set (needs CAP_SYS_TIME, else SKIP).
TESTS += $(B)/tests/test_syncd_rtstep
$(B)/tests/test_syncd_rtstep.o: CFLAGS += -DBINDIR='"$(abspath $(B))/bin"'
$(B)/tests/test_syncd_rtstep: $(B)/tests/test_syncd_rtstep.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a \
		| $(B)/bin/syncd $(B)/bin/synctool $(B)/bin/chorus-ctl
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
# ... and end to end: a restarted syncd publishes the pieces it had.
TESTS += $(B)/tests/test_syncd_restart
$(B)/tests/test_syncd_restart.o: CFLAGS += -DBINDIR='"$(abspath $(B))/bin"'
$(B)/tests/test_syncd_restart: $(B)/tests/test_syncd_restart.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a \
		| $(B)/bin/syncd $(B)/bin/synctool $(B)/bin/chorus-ctl
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
