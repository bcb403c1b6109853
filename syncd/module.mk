# syncd: the node's time-conversion daemon (local pairs, RBS between nodes).
# The simulated radio reads the scenario through libsim (sim/module.mk).
SYNCD_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out syncd/main.c,$(wildcard syncd/*.c)))
$(B)/libsyncd.a: $(SYNCD_OBJS)
SYNCD_LIBS = $(call pkglibs,glib-2.0 gsl libsystemd sndfile) -lm
PROGS += $(B)/bin/syncd
$(B)/bin/syncd: $(B)/syncd/main.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsim.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(SYNCD_LIBS)

PROGS += $(B)/bin/synctool
$(B)/bin/synctool: $(B)/apps/tools/synctool.o $(B)/libsync.a $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl) -lm

# Unit tests of the pure parts (codec, RBS matching and fit, mesh).
TESTS += $(B)/tests/test_rbs_wire $(B)/tests/test_rbs_core
$(B)/tests/test_rbs_%: $(B)/tests/test_rbs_%.o $(B)/libsyncd.a $(B)/libsim.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile) -lm
