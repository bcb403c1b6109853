# libsync: clocks, fits, conversion graph, ticker client, virtual clocks.
LIBSYNC_SRCS := $(wildcard libsync/*.c)
$(B)/libsync.a: $(patsubst %.c,$(B)/%.o,$(LIBSYNC_SRCS))
LIBSYNC_PKGS := gsl glib-2.0

# The shared library for other people's programs (issue 18): libsync and the
# libdev it uses linked into libchorus-sync.so.1, exporting only sync_*
# (libsync/libsync.map).  LIBSYNC_SO_VERSION is the file's full version; its
# major number is the SONAME's and changes only with an incompatible ABI.
LIBSYNC_SO_MAJOR := 1
LIBSYNC_SO_VERSION := $(LIBSYNC_SO_MAJOR).0.0
LIBSYNC_SO := $(B)/lib/libchorus-sync.so.$(LIBSYNC_SO_VERSION)
$(LIBSYNC_SO): $(patsubst %.c,$(B)/%.o,$(LIBSYNC_SRCS) $(LIBDEV_SRCS)) libsync/libsync.map
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,libchorus-sync.so.$(LIBSYNC_SO_MAJOR) -Wl,--version-script=libsync/libsync.map \
	  -Wl,--no-undefined -o $@ $(filter %.o,$^) $(call pkglibs,gsl glib-2.0) -lm
	ln -sf $(notdir $@) $(B)/lib/libchorus-sync.so.$(LIBSYNC_SO_MAJOR)
	ln -sf $(notdir $@) $(B)/lib/libchorus-sync.so
all: $(LIBSYNC_SO)
INSTALL_FILES += $(LIBSYNC_SO)

# Tests and benchmark of the pure numerics (fits, conversions, graph).
TESTS += $(B)/tests/test_fit
$(B)/tests/test_fit: $(B)/tests/test_fit.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

TESTS += $(B)/tests/test_fit_wander
$(B)/tests/test_fit_wander: $(B)/tests/test_fit_wander.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

TESTS += $(B)/tests/test_graph
$(B)/tests/test_graph: $(B)/tests/test_graph.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

# A pair's history bridged across an outage, against seeded random-walk
# clocks (issue 16 item 3).
TESTS += $(B)/tests/test_graph_bridge
$(B)/tests/test_graph_bridge: $(B)/tests/test_graph_bridge.o $(B)/libsyncd.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm -pthread

BENCHES += $(B)/bench/sync
$(B)/bench/sync: $(B)/bench/sync.o $(B)/bench/csvout.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,gsl glib-2.0) -lm

# A fit carried beyond its data under a ramp of the rate (issue 13).
BENCHES += $(B)/bench/aging
$(B)/bench/aging: $(B)/bench/aging.o $(B)/bench/csvout.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,gsl glib-2.0) -lm

# A fit under a random walk of the rate, by its age (issue 13).
BENCHES += $(B)/bench/walk
$(B)/bench/walk: $(B)/bench/walk.o $(B)/bench/csvout.o $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,gsl glib-2.0) -lm

# The audio pairs' envelope fits: stated errors against their errors (issue 13).
BENCHES += $(B)/bench/envelope
$(B)/bench/envelope: $(B)/bench/envelope.o $(B)/bench/csvout.o $(B)/libsync.a
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
install-libsync: $(B)/libsync.a $(B)/libdev.a $(LIBSYNC_SO)
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(PREFIX)/include/chorus/libsync $(DESTDIR)$(PREFIX)/include/chorus/libdev
	install -m 644 $(B)/libsync.a $(DESTDIR)$(LIBDIR)/libchorus_sync.a
	install -m 644 $(B)/libdev.a $(DESTDIR)$(LIBDIR)/libchorus_dev.a
	install -m 644 $(LIBSYNC_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(LIBSYNC_SO)) $(DESTDIR)$(LIBDIR)/libchorus-sync.so.$(LIBSYNC_SO_MAJOR)
	ln -sf libchorus-sync.so.$(LIBSYNC_SO_MAJOR) $(DESTDIR)$(LIBDIR)/libchorus-sync.so
	install -m 644 docs/man/libsync.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 libsync/*.h $(DESTDIR)$(PREFIX)/include/chorus/libsync/
	install -m 644 libdev/*.h $(DESTDIR)$(PREFIX)/include/chorus/libdev/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' dist/libsync.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libsync.pc

# libsync's client against a real syncd, through a restart.
TESTS += $(B)/tests/test_syncclient
$(B)/tests/test_syncclient.o: CFLAGS += -DBINDIR='"$(abspath $(B))/bin"' -DSRCDIR='"$(CURDIR)"'
$(B)/tests/test_syncclient: $(B)/tests/test_syncclient.o $(B)/libsync.a $(B)/libdev.a $(B)/bin/syncd
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl) -lm

# The installed library as other programs use it: the tutorial's example
# compiled against `make install-libsync`'s headers and libsync.pc, run
# against a simulated node (tests/test_libsync_installed.sh); and the Python
# bindings (python/chorus) tested from Python (tests/test_python.sh).
TESTS += $(B)/tests/test_libsync_installed $(B)/tests/test_python
$(B)/tests/test_libsync_installed: tests/test_libsync_installed.sh tests/sim_node.sh $(LIBSYNC_SO) | $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/synctool $(B)/bin/chorus-cat $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	$(if $(SANITIZE),printf '#!/bin/sh\necho "test_libsync_installed: SKIP: SANITIZE=1 builds the library with ASan$(comma) which only ASan programs can load" >&2\nexit 77\n',printf '#!/bin/sh\nexec sh "%s/tests/test_libsync_installed.sh" "%s" "%s" "$(MAKE)"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)") >$@ && chmod +x $@
$(B)/tests/test_python: tests/test_python.sh tests/sim_node.sh $(LIBSYNC_SO) | $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/synctool $(B)/bin/chorus-cat $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	$(if $(SANITIZE),printf '#!/bin/sh\necho "test_python: SKIP: SANITIZE=1 builds the library with ASan$(comma) which python3 cannot load" >&2\nexit 77\n',printf '#!/bin/sh\nexec sh "%s/tests/test_python.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)") >$@ && chmod +x $@

# The Python module, for Debian's python3 (PYTHONDIR overrides).
PYTHONDIR ?= $(PREFIX)/lib/python3/dist-packages
INSTALL_HOOKS += install-python
.PHONY: install-python
install-python:
	install -d $(DESTDIR)$(PYTHONDIR)/chorus
	install -m 644 python/chorus/__init__.py $(DESTDIR)$(PYTHONDIR)/chorus/

# The simulated UTC source (libsync/simutc.h) and the realtime clock it
# disciplines (libsync/now.h), with the scenario keys that give it (sim/).
TESTS += $(B)/tests/test_simutc
$(B)/tests/test_simutc: $(B)/tests/test_simutc.o $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
