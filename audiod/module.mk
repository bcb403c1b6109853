# audiod: ALSA capture, the ring, timestamp sources, sensor and status devices.
AUDIOD_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out audiod/main.c,$(wildcard audiod/*.c)))
$(B)/libaudiod.a: $(AUDIOD_OBJS)

TESTS += $(B)/tests/test_ring
$(B)/tests/test_ring: $(B)/tests/test_ring.o $(B)/libaudiod.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check) -lpthread
