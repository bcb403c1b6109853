# audiod: ALSA capture, the ring, timestamp sources, sensor and status devices.
AUDIOD_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out audiod/main.c,$(wildcard audiod/*.c)))
$(B)/libaudiod.a: $(AUDIOD_OBJS)

TESTS += $(B)/tests/test_ring
$(B)/tests/test_ring: $(B)/tests/test_ring.o $(B)/libaudiod.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check) -lpthread

TESTS += $(B)/tests/test_numbering
$(B)/tests/test_numbering: $(B)/tests/test_numbering.o $(B)/libaudiod.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

# libarchive.a: requests older than the ring, served from chorus-archive's
# segments (audiod/archived.h).
AUDIOD_LIBS := $(B)/libaudiod.a $(B)/libarchive.a $(B)/libdev.a $(B)/libsync.a $(B)/libtimehist.a $(B)/libcfg.a $(B)/libkpatch.a
PROGS += $(B)/bin/audiod
$(B)/bin/audiod: $(B)/audiod/main.o $(AUDIOD_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl alsa libsystemd sndfile) -lm -lpthread

PROGS += $(B)/bin/audioget
$(B)/bin/audioget: $(B)/apps/tools/audioget.o $(B)/libarchive.a $(B)/libaudiod.a $(B)/libsync.a $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 sndfile) -lm

# Integration tests of the real audiod + syncd on the simulated microphone
# (tests/test_audiod.c, helpers in tests/audiod_harness.c).  They run the
# built daemons of the same build (build/ or build-san/).
AUDIOD_TEST_DEFS = -DAH_BIN_DIR='"$(abspath $(B)/bin)"' -DAH_SIM_CONF='"$(abspath $(B)/sim/chorus_sim.conf)"' \
	-DAH_SRC_DIR='"$(abspath .)"'
AUDIOD_TEST_DEPS = $(B)/tests/audiod_harness.o $(B)/libaudiod.a $(B)/libdev.a $(B)/libsync.a $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a
AUDIOD_TEST_RUNTIME = $(B)/bin/audiod $(B)/bin/syncd $(B)/bin/audioget $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
$(B)/tests/audiod_harness.o $(B)/tests/test_audiod.o $(B)/tests/test_audiod_xrun.o $(B)/tests/test_audiod_obslog.o \
	$(B)/tests/test_audiod_follow.o $(B)/tests/test_audiod_past.o $(B)/bench/audio.o: CFLAGS += $(AUDIOD_TEST_DEFS)

TESTS += $(B)/tests/test_audiod
$(B)/tests/test_audiod: $(B)/tests/test_audiod.o $(AUDIOD_TEST_DEPS) | $(AUDIOD_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

# Overruns, a few and many under load (tests/test_audiod_xrun.c).
TESTS += $(B)/tests/test_audiod_xrun
$(B)/tests/test_audiod_xrun: $(B)/tests/test_audiod_xrun.o $(AUDIOD_TEST_DEPS) | $(AUDIOD_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

# Audio from before the audio pair's fit window, by time: through syncd's
# history of the pair (tests/test_audiod_past.c, 110 s of capture).
TESTS += $(B)/tests/test_audiod_past
$(B)/tests/test_audiod_past: $(B)/tests/test_audiod_past.o $(AUDIOD_TEST_DEPS) | $(AUDIOD_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

# audiod --obs-log: the observations fitted, and a log that cannot be written (tests/test_audiod_obslog.c).
TESTS += $(B)/tests/test_audiod_obslog
$(B)/tests/test_audiod_obslog: $(B)/tests/test_audiod_obslog.o $(AUDIOD_TEST_DEPS) $(B)/libtimehist.a | $(AUDIOD_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

# Ring followers: frames by shared memory, woken by the capture thread (tests/test_audiod_follow.c).
TESTS += $(B)/tests/test_audiod_follow
$(B)/tests/test_audiod_follow: $(B)/tests/test_audiod_follow.o $(AUDIOD_TEST_DEPS) | $(AUDIOD_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

# Benchmark: audiod CPU per client count, interrupt -> client latency, bulk
# reads vs memcpy, audio0 -> cpu accuracy (bench/audio.c, same harness).
BENCHES += $(B)/bench/audio
$(B)/bench/audio: $(B)/bench/audio.o $(B)/bench/csvout.o $(B)/bench/wakeref.o $(AUDIOD_TEST_DEPS) | $(AUDIOD_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

TESTS += $(B)/tests/test_request
$(B)/tests/test_request: $(B)/tests/test_request.o $(B)/libaudiod.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm
