# fuse: chorus-fuse, the device tree as files (libfuse3 high-level API).
FUSE_OBJS := $(B)/fuse/main.o $(B)/fuse/devfile.o $(B)/fuse/creds.o
$(FUSE_OBJS): CFLAGS += $(shell pkg-config --cflags fuse3 2>/dev/null)
PROGS += $(B)/bin/chorus-fuse
$(B)/bin/chorus-fuse: $(FUSE_OBJS) $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,fuse3 glib-2.0) -lpthread
