# web: chorus-web, the field's live view in a browser (issue 19 item 2;
# docs/protocol.md "chorus-web", chorus-web(8)).  An HTTP server (libsoup 3)
# on the GLib main loop that reads every node through remote device access
# (libdev nodeN:NAME, chorus-proxy); its page (web/static: HTML, JS, CSS, no
# build step) is installed under share/chorus/web.
WEB_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out web/main.c,$(wildcard web/*.c)))
WEB_PKGS = glib-2.0 gio-2.0 libsoup-3.0 json-glib-1.0 fftw3f sndfile libsystemd
# libsoup's flags for chorus-web's objects only (not in PKGS: nothing else
# needs its include paths, and a cross build without it fails here alone).
$(WEB_OBJS) $(B)/web/main.o $(B)/tests/test_web_parts.o: CFLAGS += $(shell pkg-config --cflags libsoup-3.0 2>/dev/null)
$(B)/libweb.a: $(WEB_OBJS)
PROGS += $(B)/bin/chorus-web
$(B)/bin/chorus-web: $(B)/web/main.o $(B)/libweb.a $(B)/apps/collab/nodes.o $(B)/libdev.a $(B)/libcfg.a $(B)/libaudiod.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,$(WEB_PKGS)) -lm

# The page's files, installed to $(PREFIX)/share/chorus/web.
WEB_ASSETS := $(wildcard web/static/*)
INSTALL_HOOKS += install-web
.PHONY: install-web
install-web:
	install -d $(DESTDIR)$(PREFIX)/share/chorus/web
	install -m 644 $(WEB_ASSETS) $(DESTDIR)$(PREFIX)/share/chorus/web/

# The pure parts: token, text forms, detections, spectrogram bytes, WAV
# (tests/test_web_parts.c).
TESTS += $(B)/tests/test_web_parts
$(B)/tests/test_web_parts: $(B)/tests/test_web_parts.o $(B)/libweb.a $(B)/libdev.a $(B)/libaudiod.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(WEB_PKGS)) -lm

# Tests on a simulated field with chorus-sim --web (tests/web_field.sh):
# the API and its refusals (tests/test_web_api.sh, tests/web_api.py) and
# the page in headless Chromium (tests/test_web_browser.sh,
# tests/web_browser.py; SKIP without chromium and chromium-driver).
WEB_FIELD_DEPS := $(B)/bin/chorus-web $(B)/bin/chorus-proxy $(B)/bin/chorus-sim $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft \
	$(B)/bin/detect $(B)/bin/collab $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf \
	$(B)/sim/libchorus_sim_radio.so
TESTS += $(B)/tests/test_web_api $(B)/tests/test_web_browser
$(B)/tests/test_web_%: tests/test_web_%.sh tests/web_field.sh | $(WEB_FIELD_DEPS)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_web_$*.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@

# bench/web: page open time, update latency, CPU of chorus-web + proxies
# per node (bench/web.sh, bench/web_measure.py), as `make bench` runs it.
BENCHES += $(B)/bench/web
$(B)/bench/web: bench/web.sh bench/web_measure.py | $(WEB_FIELD_DEPS)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nWEB_BENCH_BIN=%s WEB_BENCH_SRC=%s exec sh %s\n' "$(abspath $(B))" "$(CURDIR)" "$(abspath $<)" > $@ && chmod +x $@
