# apps/fft: the short-time FFT service (fft/<k>/frames, fft/<k>/status).
$(B)/libfftmsg.a: $(B)/apps/fft/frames.o
PROGS += $(B)/bin/fft
$(B)/bin/fft: $(B)/apps/fft/main.o $(B)/libfftmsg.a $(B)/libaudiod.a $(B)/libdsp.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl fftw3f libsystemd) -lm
