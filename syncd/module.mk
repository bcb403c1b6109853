# syncd: the node's time-conversion daemon.
SYNCD_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out syncd/main.c,$(wildcard syncd/*.c)))
$(B)/libsyncd.a: $(SYNCD_OBJS)
PROGS += $(B)/bin/syncd
$(B)/bin/syncd: $(B)/syncd/main.o $(B)/libsyncd.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl libsystemd) -lm

PROGS += $(B)/bin/synctool
$(B)/bin/synctool: $(B)/apps/tools/synctool.o $(B)/libsync.a $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl) -lm
