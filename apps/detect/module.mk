# apps/detect: the call detector (detect/events, detect/status).  The event
# codec (event.c) is shared with collab through libdetect.a.
DETECT_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out apps/detect/main.c,$(wildcard apps/detect/*.c)))
$(B)/libdetect.a: $(DETECT_OBJS)
DETECT_LIBS := $(B)/libdetect.a $(B)/libfftmsg.a $(B)/libdsp.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
PROGS += $(B)/bin/detect
$(B)/bin/detect: $(B)/apps/detect/main.o $(DETECT_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f sndfile libsystemd json-glib-1.0) -lm

TESTS += $(B)/tests/test_detect $(B)/tests/test_detect_overlap
$(B)/tests/test_detect: $(B)/tests/test_detect.o $(B)/tests/detect_rig.o $(B)/libdetect.a $(B)/libfftmsg.a $(B)/libdsp.a \
		$(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl fftw3f sndfile) -lm
$(B)/tests/test_detect_overlap: $(B)/tests/test_detect_overlap.o $(B)/tests/detect_rig.o $(B)/libdetect.a $(B)/libfftmsg.a \
		$(B)/libdsp.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl fftw3f sndfile) -lm

# `make install` also installs the shipped profiles where detect looks by
# default (/etc/chorus/profiles/frog.ini); the units are dist/module.mk's.
.PHONY: install-apps
INSTALL_HOOKS += install-apps
install-apps:
	install -d $(DESTDIR)$(SYSCONFDIR)/chorus/profiles
	install -m 644 apps/profiles/*.ini $(DESTDIR)$(SYSCONFDIR)/chorus/profiles/

# detect on a full disk: every lost line counted and said, no torn line, a
# non-zero exit (tests/test_jsonl_full.sh).
TESTS += $(B)/tests/test_jsonl_full
$(B)/tests/test_jsonl_full: tests/test_jsonl_full.sh tests/sim_node.sh | $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft $(B)/bin/detect $(B)/bin/chorus-cat $(B)/bin/synctool $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_jsonl_full.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@
