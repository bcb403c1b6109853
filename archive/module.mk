# archive: chorus-archive, every frame of audiod's devices kept in FLAC
# segments with their time (docs/archive.md); libarchive.a is also what
# chorus-export and audioget read the archive with.
ARCHIVE_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out archive/main.c,$(wildcard archive/*.c)))
$(B)/libarchive.a: $(ARCHIVE_OBJS)

ARCHIVE_LIBS := $(B)/libarchive.a $(B)/libaudiod.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
PROGS += $(B)/bin/chorus-archive
$(B)/bin/chorus-archive: $(B)/archive/main.o $(ARCHIVE_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl sndfile libsystemd) -lm

# The archive on the real audiod + syncd of a simulated node (the audiod
# tests' harness, tests/audiod_harness.c).
$(B)/tests/test_archive.o: CFLAGS += $(AUDIOD_TEST_DEFS)
TESTS += $(B)/tests/test_archive
# (audiod/module.mk is included after this file: its lists are spelt out.)
ARCHIVE_TEST_DEPS := $(B)/tests/audiod_harness.o $(B)/libarchive.a $(B)/libaudiod.a $(B)/libdev.a $(B)/libsync.a \
	$(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a
ARCHIVE_TEST_RUNTIME := $(B)/bin/audiod $(B)/bin/syncd $(B)/bin/chorus-archive $(B)/bin/chorus-export $(B)/bin/audioget \
	$(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
$(B)/tests/test_archive: $(B)/tests/test_archive.o $(ARCHIVE_TEST_DEPS) | $(ARCHIVE_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

PROGS += $(B)/bin/chorus-export
$(B)/bin/chorus-export: $(B)/apps/tools/chorus-export.o $(B)/libarchive.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 sndfile json-glib-1.0) -lm

# Benchmark: CPU and bytes per hour by FLAC level, a 2 s request an hour
# back, recovery after a kill -9, the live daemon's CPU (bench/archive.c).
$(B)/bench/archive.o: CFLAGS += $(AUDIOD_TEST_DEFS)
BENCHES += $(B)/bench/archive
$(B)/bench/archive: $(B)/bench/archive.o $(B)/bench/csvout.o $(B)/bench/cpuload.o $(ARCHIVE_TEST_DEPS) | $(ARCHIVE_TEST_RUNTIME)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

# The pure parts: index text, frame <-> global time, bridging outages.
TESTS += $(B)/tests/test_archive_time
$(B)/tests/test_archive_time: $(B)/tests/test_archive_time.o $(B)/libarchive.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
