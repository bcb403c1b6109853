# libsync: clocks, fits, conversion graph, ticker client, virtual clocks.
LIBSYNC_SRCS := $(wildcard libsync/*.c)
$(B)/libsync.a: $(patsubst %.c,$(B)/%.o,$(LIBSYNC_SRCS))
LIBSYNC_PKGS := gsl glib-2.0

# Tests and benchmark of the pure numerics (fits, conversions, graph).
TESTS += $(B)/tests/test_fit
$(B)/tests/test_fit: $(B)/tests/test_fit.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

TESTS += $(B)/tests/test_graph
$(B)/tests/test_graph: $(B)/tests/test_graph.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

BENCHES += $(B)/bench/sync
$(B)/bench/sync: $(B)/bench/sync.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,gsl glib-2.0) -lm

# syncd end to end through its devices, with synctool and chorus-ctl.
TESTS += $(B)/tests/test_synctool
$(B)/tests/test_synctool.o: CFLAGS += -DBINDIR='"$(abspath $(B))/bin"' -DSRCDIR='"$(CURDIR)"'
$(B)/tests/test_synctool: $(B)/tests/test_synctool.o $(B)/bin/syncd $(B)/bin/synctool $(B)/bin/chorus-ctl
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm

# Install libsync for other programs: static libraries, headers, pkg-config.
INSTALL_HOOKS += install-libsync
.PHONY: install-libsync
install-libsync: $(B)/libsync.a $(B)/libdev.a
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include/chorus/libsync $(DESTDIR)$(PREFIX)/include/chorus/libdev
	install -m 644 $(B)/libsync.a $(DESTDIR)$(LIBDIR)/libchorus_sync.a
	install -m 644 $(B)/libdev.a $(DESTDIR)$(LIBDIR)/libchorus_dev.a
	install -m 644 libsync/*.h $(DESTDIR)$(PREFIX)/include/chorus/libsync/
	install -m 644 libdev/*.h $(DESTDIR)$(PREFIX)/include/chorus/libdev/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' dist/libsync.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libsync.pc

# libsync's client against a real syncd, through a restart.
TESTS += $(B)/tests/test_syncclient
$(B)/tests/test_syncclient.o: CFLAGS += -DBINDIR='"$(abspath $(B))/bin"' -DSRCDIR='"$(CURDIR)"'
$(B)/tests/test_syncclient: $(B)/tests/test_syncclient.o $(B)/libsync.a $(B)/libdev.a $(B)/bin/syncd
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm
