# audiod: ALSA capture, the ring, timestamp sources, sensor and status devices.
AUDIOD_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out audiod/main.c,$(wildcard audiod/*.c)))
$(B)/libaudiod.a: $(AUDIOD_OBJS)

TESTS += $(B)/tests/test_ring
$(B)/tests/test_ring: $(B)/tests/test_ring.o $(B)/libaudiod.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check) -lpthread

AUDIOD_LIBS := $(B)/libaudiod.a $(B)/libdev.a $(B)/libsync.a $(B)/libtimehist.a $(B)/libcfg.a $(B)/libkpatch.a $(B)/libsim.a
PROGS += $(B)/bin/audiod
$(B)/bin/audiod: $(B)/audiod/main.o $(AUDIOD_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl alsa libsystemd sndfile) -lm -lpthread
