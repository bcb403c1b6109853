# selftest: chorus-selftest, the capture path's end-to-end check (a field
# self-test; the VM test `make vmtest` runs it on snd-aloop and snd-dummy).
# See selftest/main.c and docs/man/chorus-selftest.1.
SELFTEST_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard selftest/*.c))
PROGS += $(B)/bin/chorus-selftest
$(B)/bin/chorus-selftest: $(SELFTEST_OBJS) $(B)/libtimehist.a $(B)/libsync.a $(B)/libkpatch.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gio-2.0 gsl alsa sndfile) -lm -lpthread

# make check's short form of the VM test (tests/test_vmtest.sh): skipped
# (exit 77, with the reason) where qemu or Debian's kernel is missing.
TESTS += $(B)/tests/test_vmtest
$(B)/tests/test_vmtest: tests/test_vmtest.sh
	@mkdir -p $(dir $@)
	$(if $(SANITIZE),printf '#!/bin/sh\nVMTEST_SANITIZE=1 exec sh $(abspath tests/test_vmtest.sh)\n' > $@,cp $< $@)
	chmod 755 $@
