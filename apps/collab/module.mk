# apps/collab: collaborative localization (collab/events), the clip service,
# and `make demo` (the main job end to end, see below).
COLLAB_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out apps/collab/main.c apps/collab/demo.c,$(wildcard apps/collab/*.c)))
$(B)/libcollab.a: $(COLLAB_OBJS)
COLLAB_LIBS := $(B)/libcollab.a $(B)/libaudiod.a $(B)/libdetect.a $(B)/libdsp.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a $(B)/libsim.a
COLLAB_PKGS = glib-2.0 gsl fftw3f sndfile libsystemd
PROGS += $(B)/bin/collab
$(B)/bin/collab: $(B)/apps/collab/main.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,$(COLLAB_PKGS)) -lm -pthread

# chorus-demo: chorus-sim's launcher + audiod, fft, detect, collab on every
# node, scored against the world's truth (demo.c, report.c).
PROGS += $(B)/bin/chorus-demo
$(B)/bin/chorus-demo: $(B)/apps/collab/demo.o $(B)/libcollab.a $(B)/libcsim.a $(B)/libsim.a $(B)/libdev.a \
		$(B)/libsync.a $(B)/libdsp.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f sndfile) -lm

# `make demo`: on a fresh machine install what is missing, build, run the
# default scenario for a minute, print and write the results to demo-out/.
DEMO_SCENARIO ?= sim/scenarios/default.ini
DEMO_SECONDS ?= 60
.PHONY: demo
demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j2 $(PROGS) $(SIM_PLUGIN) $(SIM_CONF)
	$(B)/bin/chorus-demo $(DEMO_SCENARIO) --duration $(DEMO_SECONDS) --out demo-out --bin $(B)/bin

TESTS += $(B)/tests/test_collab
$(B)/tests/test_collab: $(B)/tests/test_collab.o $(COLLAB_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(COLLAB_PKGS)) -lm -pthread

# The pipeline end to end on four simulated nodes (about 30 s): runs the
# built programs, so it depends on them.
TESTS += $(B)/tests/test_collab_sim
$(B)/tests/test_collab_sim.o: CFLAGS += -DCHORUS_BIN_DIR='"$(abspath $(B)/bin)"'
$(B)/tests/test_collab_sim: $(B)/tests/test_collab_sim.o | $(B)/bin/chorus-demo $(B)/bin/syncd $(B)/bin/audiod \
		$(B)/bin/fft $(B)/bin/detect $(B)/bin/collab $(SIM_PLUGIN) $(SIM_CONF)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm

# bench/apps: fft + detect real-time factor, and accuracy/latency of the real
# services on three simulated fields through chorus-demo.
BENCHES += $(B)/bench/apps
$(B)/bench/apps: $(B)/bench/apps.o $(B)/libdetect.a $(B)/libfftmsg.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsim.a \
		| $(B)/bin/chorus-demo
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f sndfile) -lm
