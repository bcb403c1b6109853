# apps/dsp: the pure signal-processing and localization maths of the apps
# (STFT, detector, onset refinement, GCC-PHAT, TDOA solver, call waveforms).
# No I/O except FFTW wisdom files and recorded calls (wavefile.c); fft, detect and collab link libdsp.a.
DSP_SRCS := $(wildcard apps/dsp/*.c)
$(B)/libdsp.a: $(patsubst %.c,$(B)/%.o,$(DSP_SRCS))
DSP_PKGS := fftw3f gsl sndfile glib-2.0

DSP_TESTS := $(patsubst tests/%.c,%,$(wildcard $(patsubst %,tests/test_%.c,stft detector gccphat locate srp nullsteer edge)))
TESTS += $(patsubst %,$(B)/tests/%,$(DSP_TESTS))
$(patsubst %,$(B)/tests/%,$(DSP_TESTS)): $(B)/tests/%: $(B)/tests/%.o $(B)/libdsp.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check $(DSP_PKGS)) -lm

BENCHES += $(if $(wildcard bench/dsp.c),$(B)/bench/dsp)
$(B)/bench/dsp: $(B)/bench/dsp.o $(B)/bench/csvout.o $(B)/libdsp.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,$(DSP_PKGS)) -lm
