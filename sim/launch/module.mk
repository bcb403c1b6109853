# chorus-sim: the scenario launcher with ground truth (sim/launch/).
CSIM_OBJS := $(B)/sim/launch/launch.o $(B)/sim/launch/truth.o
$(B)/libcsim.a: $(CSIM_OBJS)
CSIM_LIBS = $(call pkglibs,glib-2.0 gsl sndfile) -lm
PROGS += $(B)/bin/chorus-sim
$(B)/bin/chorus-sim: $(B)/sim/launch/main.o $(B)/libcsim.a $(B)/libsim.a $(B)/libdev.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(CSIM_LIBS)
