# sim/score: scoring a simulated run against the world's truth (report.c) and
# chorus-demo (demo.c): chorus-sim's launcher + audiod, fft, detect, collab on
# every node, scored afterwards.  Nothing here is linked by a service.
$(B)/libscore.a: $(B)/sim/score/report.o $(B)/sim/score/match.o $(B)/sim/score/print.o $(B)/sim/score/chaos_calls.o $(B)/sim/score/demo_chaos.o
PROGS += $(B)/bin/chorus-demo
$(B)/bin/chorus-demo: $(B)/sim/score/demo.o $(B)/libscore.a $(B)/libcollab.a $(B)/libcsim.a $(B)/libsim.a $(B)/libcfg.a \
		$(B)/libdev.a $(B)/libsync.a $(B)/libdsp.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f sndfile json-glib-1.0) -lm

# chorus-calltrace: detect's pipeline (apps/detect/offline.h) on one
# simulated call at every node, against the world's truth (a developer's
# tool for tracing a bench/field row's lost calls; it reads the truth).
PROGS += $(B)/bin/chorus-calltrace
$(B)/bin/chorus-calltrace: $(B)/sim/score/calltrace.o $(B)/libdetect.a $(B)/libfftmsg.a $(B)/libsim.a $(B)/libdsp.a \
		$(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f sndfile) -lm
TESTS += $(B)/tests/test_calltrace
$(B)/tests/test_calltrace: tests/test_calltrace.sh | $(B)/bin/chorus-calltrace
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_calltrace.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@

# `make demo`: on a fresh machine install what is missing, build, run the
# default scenario for a minute, print and write the results to demo-out/;
# DEMO_WEB=PORT shows the live view (chorus-web) on 127.0.0.1:PORT meanwhile.
DEMO_SCENARIO ?= sim/scenarios/default.ini
DEMO_SECONDS ?= 60
.PHONY: demo
demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory -j2 $(PROGS) $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf \
		$(B)/sim/libchorus_sim_radio.so
	$(B)/bin/chorus-demo $(DEMO_SCENARIO) --duration $(DEMO_SECONDS) --out demo-out --bin $(B)/bin $(if $(DEMO_WEB),--web $(DEMO_WEB))

# bench/field: chorus-demo over the scenarios of sim/scenarios/field/, one
# table (issue 11; docs/localization.md "Field benchmark").  FIELD_ROWS="exact
# variation" runs a subset; each row is about 70 s of wall time.
BENCHES += $(B)/bench/field
$(B)/bench/field.o: CFLAGS += -DFIELD_SRC_DIR='"$(abspath .)"' -DFIELD_BUILD_DIR='"$(abspath $(B))"'
$(B)/bench/field: $(B)/bench/field.o | $(B)/bin/chorus-demo $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf \
		$(B)/sim/libchorus_sim_radio.so $(B)/bin/collab-survey
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl) -lm

# chorus-demo --chaos's judgement of the calls and the scorer's rule for
# superseded results (tests/test_chaos_calls.c).
TESTS += $(B)/tests/test_chaos_calls
$(B)/tests/test_chaos_calls: $(B)/tests/test_chaos_calls.o $(B)/tests/world_fixture.o $(B)/libscore.a $(B)/libcollab.a \
		$(B)/libsim.a $(B)/libdsp.a $(B)/libcfg.a $(B)/libdev.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl sndfile fftw3f json-glib-1.0) -lm
