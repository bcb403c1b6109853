# apps/collab: collaborative localization (collab/events) and the clip
# service.  chorus-demo and `make demo` live in sim/score/module.mk.
COLLAB_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out apps/collab/main.c,$(wildcard apps/collab/*.c)))
$(B)/libcollab.a: $(COLLAB_OBJS)
# libsyncd.a for the receive-filter loader only (syncd/rxfilter_load.h);
# libarchive.a for its crash-safe file operations (archive/durable.h).
COLLAB_LIBS := $(B)/libcollab.a $(B)/libarchive.a $(B)/libaudiod.a $(B)/libdetect.a $(B)/libdsp.a $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
COLLAB_PKGS = glib-2.0 gsl fftw3f sndfile libsystemd json-glib-1.0
PROGS += $(B)/bin/collab
$(B)/bin/collab: $(B)/apps/collab/main.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,$(COLLAB_PKGS)) -lm -pthread -ldl

TESTS += $(B)/tests/test_collab
$(B)/tests/test_collab: $(B)/tests/test_collab.o $(COLLAB_LIBS) $(B)/libcsim.a $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# Grouping one call's detections across nodes (group.h).
TESTS += $(B)/tests/test_collab_group
$(B)/tests/test_collab_group: $(B)/tests/test_collab_group.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# Two callers' detections told apart by where they fit (partition.h).
TESTS += $(B)/tests/test_collab_partition
$(B)/tests/test_collab_partition: $(B)/tests/test_collab_partition.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# Shared detections and the clip service over real sockets (issue 15).
TESTS += $(B)/tests/test_collab_share
$(B)/tests/test_collab_share: $(B)/tests/test_collab_share.o $(B)/tests/collab_testutil.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# The clip service against a real syncd and audiod: slow clients.
TESTS += $(B)/tests/test_clip_serve
$(B)/tests/test_clip_serve.o: CFLAGS += $(AUDIOD_TEST_DEFS)
$(B)/tests/test_clip_serve: $(B)/tests/test_clip_serve.o $(B)/tests/audiod_harness.o $(B)/tests/collab_testutil.o $(COLLAB_LIBS) $(B)/libsim.a | $(B)/bin/audiod $(B)/bin/syncd $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS) alsa) -lm -pthread

# Catching up after an outage: queue, held ids, HAVE/WANT, late groups.
TESTS += $(B)/tests/test_collab_catchup
$(B)/tests/test_collab_catchup: $(B)/tests/test_collab_catchup.o $(B)/tests/collab_testutil.o $(B)/tests/tmpdir.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# The pipeline end to end on four simulated nodes (about 30 s): runs the
# built programs, so it depends on them.
TESTS += $(B)/tests/test_collab_sim
$(B)/tests/test_collab_sim.o: CFLAGS += -DCHORUS_BIN_DIR='"$(abspath $(B)/bin)"'
$(B)/tests/test_collab_sim: $(B)/tests/test_collab_sim.o | $(B)/bin/chorus-demo $(B)/bin/syncd $(B)/bin/audiod \
		$(B)/bin/fft $(B)/bin/detect $(B)/bin/collab $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm

# bench/apps: fft + detect real-time factor, and accuracy/latency of the real
# services on three simulated fields through chorus-demo.
BENCHES += $(B)/bench/apps
$(B)/bench/apps: $(B)/bench/apps.o $(B)/libdetect.a $(B)/libfftmsg.a $(B)/libdsp.a $(B)/libcfg.a \
		| $(B)/bin/chorus-demo
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f sndfile) -lm

# collab-survey: the nodes' positions refined from located calls (survey.h).
PROGS += $(B)/bin/collab-survey
$(B)/bin/collab-survey: $(B)/apps/tools/collab-survey.o $(B)/libcollab.a $(B)/libdsp.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,json-glib-1.0 glib-2.0 gsl fftw3f sndfile) -lm

# A node's two microphones: a broadband call's arrival difference within its
# stated error; an aliased carrier gives none (tdoa_pairs.h).
TESTS += $(B)/tests/test_tdoa_pairs
$(B)/tests/test_tdoa_pairs: $(B)/tests/test_tdoa_pairs.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# Two callers in the same clips: the answer is the detected call's or none.
TESTS += $(B)/tests/test_tdoa_overlap
$(B)/tests/test_tdoa_overlap: $(B)/tests/test_tdoa_overlap.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# collab restarts while detect detects on: it resumes detect/events from its
# cursor and shares what it missed, late (tests/test_collab_resume.sh).
TESTS += $(B)/tests/test_collab_resume
$(B)/tests/test_collab_resume: tests/test_collab_resume.sh tests/sim_node.sh | $(B)/bin/collab $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft $(B)/bin/detect $(B)/bin/chorus-cat $(B)/bin/synctool $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_collab_resume.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@

# collab-replay: a solve kept in collab's dump_dir solved again (dump.h).
PROGS += $(B)/bin/collab-replay
$(B)/bin/collab-replay: $(B)/apps/tools/collab-replay.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,$(COLLAB_PKGS)) -lm -pthread -ldl

# A solve's inputs kept and read back exactly (dump.h).
TESTS += $(B)/tests/test_collab_dump
$(B)/tests/test_collab_dump: $(B)/tests/test_collab_dump.o $(B)/tests/tmpdir.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# A pair picked on a side lobe of its correlation is repaired (tdoa.c).
TESTS += $(B)/tests/test_tdoa_slip
$(B)/tests/test_tdoa_slip: $(B)/tests/test_tdoa_slip.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# The onsets as a check on the correlation and as the timing where the clips
# do not correlate (tdoa_onsets.h): the room row's aviary rendered by sim/.
TESTS += $(B)/tests/test_tdoa_onsets
$(B)/tests/test_tdoa_onsets: $(B)/tests/test_tdoa_onsets.o $(B)/tests/world_fixture.o $(B)/tests/tdoa_fixture.o $(COLLAB_LIBS) $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# A moving caller's Doppler taken out of the clips (tdoa_doppler.h): the
# moving row's flying chirp rendered by sim/.
TESTS += $(B)/tests/test_tdoa_doppler
$(B)/tests/test_tdoa_doppler: $(B)/tests/test_tdoa_doppler.o $(B)/tests/world_fixture.o $(B)/tests/tdoa_fixture.o $(COLLAB_LIBS) $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# The solver run once at start: its one-time state made then (warmup.h).
TESTS += $(B)/tests/test_collab_warmup
$(B)/tests/test_collab_warmup: $(B)/tests/test_collab_warmup.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread
