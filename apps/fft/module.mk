# apps/fft: the short-time FFT service (fft/<k>/frames, fft/<k>/status).
$(B)/libfftmsg.a: $(B)/apps/fft/frames.o
PROGS += $(B)/bin/fft
$(B)/bin/fft: $(B)/apps/fft/main.o $(B)/libfftmsg.a $(B)/libaudiod.a $(B)/libdsp.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f libsystemd) -lm
# fft stalled by SIGSTOP catches up without keeping the backlog's size
# (tests/test_fft_stall.sh).
TESTS += $(B)/tests/test_fft_stall
$(B)/tests/test_fft_stall: tests/test_fft_stall.sh tests/sim_node.sh | $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft $(B)/bin/detect $(B)/bin/chorus-cat $(B)/bin/synctool $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_fft_stall.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@
