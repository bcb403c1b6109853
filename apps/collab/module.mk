# apps/collab: collaborative localization (collab/events), the clip service,
# and `make demo` (the main job end to end, see below).
COLLAB_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out apps/collab/main.c apps/collab/demo.c,$(wildcard apps/collab/*.c)))
$(B)/libcollab.a: $(COLLAB_OBJS)
COLLAB_LIBS := $(B)/libcollab.a $(B)/libdetect.a $(B)/libdsp.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a $(B)/libsim.a
COLLAB_PKGS = glib-2.0 gsl fftw3f sndfile libsystemd
PROGS += $(B)/bin/collab
$(B)/bin/collab: $(B)/apps/collab/main.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,$(COLLAB_PKGS)) -lm -pthread
