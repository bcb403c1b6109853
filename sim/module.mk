# sim: scenario parser, world model, the ALSA plugin (virtual microphone).
# The call waveforms are apps/dsp's (wave.h), shared with detect's templates:
# whatever links libsim.a links libdsp.a too.
SIM_LIB_SRCS := sim/acoustics.c sim/background.c sim/outage.c sim/rng.c sim/scenario.c sim/scenario_node.c sim/world.c sim/sidechan.c
SIM_PKGS     := glib-2.0 sndfile fftw3f
$(B)/libsim.a: $(patsubst %.c,$(B)/%.o,$(SIM_LIB_SRCS))

# The ALSA external plugin: -DPIC selects the shared-object entry points in
# alsa-lib's headers; the export map keeps libsim/libsync/libkpatch symbols
# private.  libkpatch gives the side channel's path (kpatch/sidechan_path.h).
SIM_PLUGIN := $(B)/sim/libasound_module_pcm_chorus_sim.so
$(B)/sim/pcm_chorus_sim.o: CFLAGS += -DPIC
$(SIM_PLUGIN): $(B)/sim/pcm_chorus_sim.o $(B)/sim/render_ahead.o $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsync.a $(B)/libkpatch.a sim/alsa/exports.map
	$(CC) $(LDFLAGS) -shared -Wl,--version-script=sim/alsa/exports.map -Wl,-z,defs -o $@ \
		$(filter %.o %.a,$^) $(call pkglibs,alsa $(SIM_PKGS)) -lm -lpthread

# The shipped ALSA config, with `lib` pointing at the plugin in the build tree
# (tests, and ALSA_CONFIG_PATH=... for trying it without installing).
SIM_CONF := $(B)/sim/chorus_sim.conf
sim_conf_lib = sed -e 's|lib ".*libasound_module_pcm_chorus_sim.so"|lib "$(1)"|' -e 's|@CHORUS_SIM_CONF@|$(2)|g'
$(SIM_CONF): sim/alsa/chorus_sim.conf
	@mkdir -p $(dir $@)
	$(call sim_conf_lib,$(abspath $(SIM_PLUGIN)),$(abspath $@)) $< > $@

# The simulated radio: syncd's receive filter (syncd/rxfilter.h) that
# chorus-sim installs, so syncd itself links nothing of the simulator.
SIM_RADIO := $(B)/sim/libchorus_sim_radio.so
$(SIM_RADIO): $(B)/sim/radio/radio.o $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsync.a sim/radio/exports.map
	$(CC) $(LDFLAGS) -shared -Wl,--version-script=sim/radio/exports.map -Wl,-z,defs -o $@ \
		$(filter %.o %.a,$^) $(call pkglibs,$(SIM_PKGS)) -lm

all: $(SIM_PLUGIN) $(SIM_CONF) $(SIM_RADIO)

SIM_TEST_LIBS = $(call pkglibs,check alsa $(SIM_PKGS) gsl) -lm -lpthread
SIM_TESTS := $(B)/tests/test_scenario $(B)/tests/test_acoustics $(B)/tests/test_world $(B)/tests/test_propagation \
	$(B)/tests/test_background $(B)/tests/test_simpcm $(B)/tests/test_render_ahead
TESTS += $(SIM_TESTS)
$(B)/tests/test_render_ahead: $(B)/tests/test_render_ahead.o $(B)/sim/render_ahead.o
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
$(B)/tests/test_scenario: $(B)/tests/test_scenario.o $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
$(B)/tests/test_acoustics: $(B)/tests/test_acoustics.o $(B)/libsim.a $(B)/libdsp.a
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
$(B)/tests/test_propagation: $(B)/tests/test_propagation.o $(B)/tests/world_fixture.o $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
$(B)/tests/test_world: $(B)/tests/test_world.o $(B)/tests/world_fixture.o $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
$(B)/tests/test_background: $(B)/tests/test_background.o $(B)/libsim.a
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
$(B)/tests/test_simpcm: $(B)/tests/test_simpcm.o $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libsync.a $(B)/libkpatch.a | $(SIM_PLUGIN) $(SIM_CONF)
	@mkdir -p $(dir $@)
	$(link) $(SIM_TEST_LIBS)
# The tests find the plugin, its config and the shipped scenarios by path;
# under SANITIZE, arecord (not instrumented) needs the sanitizer runtimes preloaded.
$(B)/tests/test_simpcm.o: CFLAGS += -DSIM_PLUGIN_SO='"$(abspath $(SIM_PLUGIN))"' \
	-DSIM_CONF_FILE='"$(abspath $(SIM_CONF))"' -DSIM_SRC_DIR='"$(abspath sim)"' \
	-DSIM_PRELOAD='"$(if $(SANITIZE),$(shell $(CC) -print-file-name=libasan.so):$(shell $(CC) -print-file-name=libubsan.so))"'
$(B)/tests/test_scenario.o: CFLAGS += -DSIM_SRC_DIR='"$(abspath sim)"'

INSTALL_HOOKS += sim-install
.PHONY: sim-install
sim-install: $(SIM_PLUGIN) $(SIM_RADIO)
	install -d $(DESTDIR)$(ALSA_PLUGIN_DIR) $(DESTDIR)$(PREFIX)/share/chorus/alsa \
		$(DESTDIR)$(PREFIX)/share/chorus/scenarios
	install -m 755 $(SIM_PLUGIN) $(DESTDIR)$(ALSA_PLUGIN_DIR)/
	install -d $(DESTDIR)$(LIBDIR)/chorus
	install -m 755 $(SIM_RADIO) $(DESTDIR)$(LIBDIR)/chorus/
	$(call sim_conf_lib,$(ALSA_PLUGIN_DIR)/libasound_module_pcm_chorus_sim.so,$(PREFIX)/share/chorus/alsa/chorus_sim.conf) \
		sim/alsa/chorus_sim.conf > $(DESTDIR)$(PREFIX)/share/chorus/alsa/chorus_sim.conf
	install -m 644 sim/scenarios/*.ini $(DESTDIR)$(PREFIX)/share/chorus/scenarios/
