# alsapcm: the ALSA PCM `type chorus` (pcm.chorus): any ALSA capture program
# reads audiod's ring through the sensor device (alsapcm/pcm_chorus.c).
# Built like the simulator's plugin (sim/module.mk): -DPIC for the
# shared-object entry points, an export map keeping the static libraries'
# symbols private, installed beside it in ALSA_PLUGIN_DIR.
ALSAPCM_PLUGIN := $(B)/alsapcm/libasound_module_pcm_chorus.so
ALSAPCM_OBJS := $(B)/alsapcm/pcm_chorus.o $(B)/alsapcm/feed.o
$(B)/alsapcm/pcm_chorus.o: CFLAGS += -DPIC
$(ALSAPCM_PLUGIN): $(ALSAPCM_OBJS) $(B)/libaudiod.a $(B)/libdev.a $(B)/libsync.a alsapcm/exports.map
	$(CC) $(LDFLAGS) -shared -Wl,--version-script=alsapcm/exports.map -Wl,-z,defs -o $@ \
		$(filter %.o,$^) -Wl,--start-group $(filter %.a,$^) -Wl,--end-group \
		$(call pkglibs,alsa glib-2.0) -lm -lpthread

# The shipped ALSA config with `lib` pointing at the plugin in the build tree
# (tests, and ALSA_CONFIG_PATH=... for trying it without installing).
ALSAPCM_CONF := $(B)/alsapcm/chorus.conf
alsapcm_conf_lib = sed -e 's|lib ".*libasound_module_pcm_chorus.so"|lib "$(1)"|' -e 's|@CHORUS_CONF@|$(2)|g'
$(ALSAPCM_CONF): alsapcm/chorus.conf
	@mkdir -p $(dir $@)
	$(call alsapcm_conf_lib,$(abspath $(ALSAPCM_PLUGIN)),$(abspath $@)) $< > $@

all: $(ALSAPCM_PLUGIN) $(ALSAPCM_CONF)
INSTALL_FILES += $(ALSAPCM_PLUGIN)

# Through arecord and alsa-lib against the real audiod + syncd on the
# simulated microphone (tests/audiod_harness.c), sample-exact against
# audiod's own data replies.
TESTS += $(B)/tests/test_alsapcm
# (audiod/module.mk, included after this file, names the harness's parts:
# prerequisites are expanded when read, so they are spelled out here.)
$(B)/tests/test_alsapcm.o: CFLAGS += $(AUDIOD_TEST_DEFS) -DALSAPCM_CONF_FILE='"$(abspath $(ALSAPCM_CONF))"' \
	-DALSAPCM_PRELOAD='"$(if $(SANITIZE),$(shell $(CC) -print-file-name=libasan.so):$(shell $(CC) -print-file-name=libubsan.so))"'
$(B)/tests/test_alsapcm: $(B)/tests/test_alsapcm.o $(B)/tests/audiod_harness.o $(B)/libaudiod.a $(B)/libdev.a \
		$(B)/libsync.a $(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a \
		| $(B)/bin/audiod $(B)/bin/syncd $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf \
		$(ALSAPCM_PLUGIN) $(ALSAPCM_CONF)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile alsa fftw3f) -lm -lpthread

INSTALL_HOOKS += alsapcm-install
.PHONY: alsapcm-install
alsapcm-install: $(ALSAPCM_PLUGIN)
	install -d $(DESTDIR)$(ALSA_PLUGIN_DIR) $(DESTDIR)$(PREFIX)/share/chorus/alsa
	install -m 755 $(ALSAPCM_PLUGIN) $(DESTDIR)$(ALSA_PLUGIN_DIR)/
	$(call alsapcm_conf_lib,$(ALSA_PLUGIN_DIR)/libasound_module_pcm_chorus.so,$(PREFIX)/share/chorus/alsa/chorus.conf) \
		alsapcm/chorus.conf > $(DESTDIR)$(PREFIX)/share/chorus/alsa/chorus.conf
