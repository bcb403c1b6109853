# fuse: chorus-fuse, the device tree as files (libfuse3 high-level API).
FUSE_OBJS := $(B)/fuse/main.o $(B)/fuse/devfile.o $(B)/fuse/creds.o
PROGS += $(B)/bin/chorus-fuse
$(B)/bin/chorus-fuse: $(FUSE_OBJS) $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,fuse3 glib-2.0) -lpthread

# Mounted for real over the simulated node's syncd and audiod
# (tests/audiod_harness.c) and devices the test serves itself.
TESTS += $(B)/tests/test_fuse
$(B)/tests/test_fuse.o: CFLAGS += -DAH_BIN_DIR='"$(abspath $(B)/bin)"' -DAH_SIM_CONF='"$(abspath $(B)/sim/chorus_sim.conf)"' \
	-DAH_SRC_DIR='"$(abspath .)"'
$(B)/tests/test_fuse: $(B)/tests/test_fuse.o $(B)/tests/audiod_harness.o $(B)/libaudiod.a $(B)/libdev.a \
		$(B)/libsync.a $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a \
		| $(B)/bin/chorus-fuse $(B)/bin/audiod $(B)/bin/syncd $(B)/sim/libasound_module_pcm_chorus_sim.so \
		$(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread
