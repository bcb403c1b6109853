# chorus-sim: the scenario launcher with ground truth (sim/launch/).
CSIM_OBJS := $(B)/sim/launch/launch.o $(B)/sim/launch/truth.o $(B)/sim/launch/outliers.o $(B)/sim/launch/timescale.o $(B)/sim/launch/utc_truth.o $(B)/sim/launch/past_truth.o $(B)/sim/launch/chaos.o $(B)/sim/launch/chaos_clients.o $(B)/sim/launch/chaos_audio.o $(B)/sim/launch/gapcheck.o $(B)/sim/launch/growth.o $(B)/sim/launch/nodeenv.o \
	$(B)/sim/launch/outages.o $(B)/sim/launch/web.o
$(B)/libcsim.a: $(CSIM_OBJS)
CSIM_LIBS = $(call pkglibs,glib-2.0 gsl sndfile fftw3f) -lm
PROGS += $(B)/bin/chorus-sim
# Where `make install` puts the plugin's config and the radio: the launcher's
# fallback when its --bin is not a build tree's (remade when they change).
$(B)/sim/launch/launch.o: CFLAGS += -DCSIM_INSTALLED_SIM_CONF='"$(PREFIX)/share/chorus/alsa/chorus_sim.conf"' \
	-DCSIM_INSTALLED_RADIO='"$(LIBDIR)/chorus/libchorus_sim_radio.so"'
$(B)/sim/launch/launch.o: $(B)/dist/paths
$(B)/bin/chorus-sim: $(B)/sim/launch/main.o $(B)/libcsim.a $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libdev.a $(B)/libsync.a | $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	$(link) $(CSIM_LIBS)

# Integration tests of syncd's RBS through the launcher (tests/test_syncd_net.c):
# they run the built syncd, so they depend on it and find it in $(B)/bin.
# test_syncd_scope: scoped advertisements ([rbs] advert_hops) on a line.
# test_syncd_partition: the field split in two and rejoined ([world] partition).
# test_syncd_delay: a delay attack on one link ([node.N] radio_delay_from).
TESTS += $(B)/tests/test_syncd_net $(B)/tests/test_syncd_scope $(B)/tests/test_syncd_utc $(B)/tests/test_syncd_partition $(B)/tests/test_syncd_delay
$(B)/tests/test_syncd_net.o $(B)/tests/test_syncd_scope.o $(B)/tests/test_syncd_utc.o $(B)/tests/test_syncd_partition.o $(B)/tests/test_syncd_delay.o $(B)/tests/syncd_net_util.o: CFLAGS += -DCSIM_BIN_DIR='"$(abspath $(B)/bin)"'
$(B)/tests/test_syncd_net $(B)/tests/test_syncd_scope $(B)/tests/test_syncd_utc $(B)/tests/test_syncd_partition $(B)/tests/test_syncd_delay: $(B)/tests/%: $(B)/tests/%.o $(B)/tests/syncd_net_util.o $(B)/libcsim.a $(B)/libsyncd.a $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libdev.a \
		$(B)/libsync.a $(B)/libcfg.a | $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/audioget $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile fftw3f) -lm

# The archive across a radio outage (tests/test_archive_outage.c): times that
# improve after the node hears the field again (issue 21).
TESTS += $(B)/tests/test_archive_outage
$(B)/tests/test_archive_outage.o: CFLAGS += -DCSIM_BIN_DIR='"$(abspath $(B)/bin)"'
$(B)/tests/test_archive_outage: $(B)/tests/test_archive_outage.o $(B)/libcsim.a $(B)/libarchive.a $(B)/libaudiod.a \
		$(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libdev.a $(B)/libsync.a | $(B)/bin/syncd $(B)/bin/audiod \
		$(B)/bin/audioget $(B)/bin/chorus-archive $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf \
		$(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile fftw3f) -lm

# The ticker of a 48-node dense field through synctool, libsync and the truth
# (tests/test_ticker_field.c).
TESTS += $(B)/tests/test_ticker_field
$(B)/tests/test_ticker_field.o: CFLAGS += -DCSIM_BIN_DIR='"$(abspath $(B)/bin)"'
$(B)/tests/test_ticker_field: $(B)/tests/test_ticker_field.o $(B)/libcsim.a $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libdev.a \
		$(B)/libsync.a | $(B)/bin/syncd $(B)/bin/synctool $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile fftw3f) -lm

# bench/rbs: RBS accuracy and scale through the launcher (real processes).
BENCHES += $(B)/bench/rbs
$(B)/bench/rbs.o: CFLAGS += -DCSIM_BIN_DIR='"$(abspath $(B)/bin)"'
$(B)/bench/rbs: $(B)/bench/rbs.o $(B)/bench/cpuload.o $(B)/libcsim.a $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libdev.a $(B)/libsync.a | $(B)/bin/syncd $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	$(link) $(CSIM_LIBS)

# bench/honesty: stated uncertainties against chorus-sim's truth over a matrix
# of latency shapes, timestamp sources, receive jitter and clock wander,
# seeds pooled, runs in parallel (issue 13).
BENCHES += $(B)/bench/honesty
$(B)/bench/honesty.o: CFLAGS += -DCSIM_BIN_DIR='"$(abspath $(B)/bin)"'
$(B)/bench/honesty: $(B)/bench/honesty.o $(B)/bench/csvout.o $(B)/bench/cpuload.o $(B)/libsync.a | $(B)/bin/chorus-sim $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/audioget $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,gio-2.0 glib-2.0 gsl) -lm

# The chaos soak's judges of audio gaps and growth (pure; tests/test_gapcheck.c).
TESTS += $(B)/tests/test_gapcheck
$(B)/tests/test_gapcheck: $(B)/tests/test_gapcheck.o $(B)/sim/launch/gapcheck.o $(B)/sim/launch/growth.o
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm

# make check's two minutes of chorus-sim --chaos (tests/test_chaos.sh).
TESTS += $(B)/tests/test_chaos
$(B)/tests/test_chaos: tests/test_chaos.sh | $(B)/bin/chorus-sim $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft \
		$(B)/bin/detect $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nCHAOS_BIN=%s exec sh %s\n' "$(abspath $(B)/bin)" "$(abspath $<)" > $@ && chmod +x $@

# bench/soak: the chaos soak for 30 minutes with collab and scoring
# (bench/soak.sh: chorus-demo --chaos).
BENCHES += $(B)/bench/soak
$(B)/bench/soak: bench/soak.sh | $(B)/bin/chorus-demo $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft $(B)/bin/detect $(B)/bin/collab \
		$(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nSOAK_BIN=%s exec sh %s\n' "$(abspath $(B)/bin)" "$(abspath $<)" > $@ && chmod +x $@

# bench/outage: conversions before, during and after outages, and the root's
# hand-overs (bench/outage.sh, sim/scenarios/outage/).
BENCHES += $(B)/bench/outage
$(B)/bench/outage: bench/outage.sh | $(B)/bin/chorus-sim $(B)/bin/syncd $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nOUTAGE_BIN=%s exec sh %s\n' "$(abspath $(B)/bin)" "$(abspath $<)" > $@ && chmod +x $@
