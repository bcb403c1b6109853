# kpatch: the DMA period-interrupt timestamp module (kernel side, built with
# Kbuild by `make kpatch`), its user-space reader library, kpatch-dump, and
# the real-kernel test `make kpatch-vmtest`.  See kpatch/README.md.

# --- user space ----------------------------------------------------------------
KPATCH_LIB_OBJS := $(B)/kpatch/reader.o $(B)/kpatch/record.o $(B)/kpatch/sidechan_path.o
$(B)/libkpatch.a: $(KPATCH_LIB_OBJS)

PROGS += $(B)/bin/kpatch-dump
$(B)/bin/kpatch-dump: $(B)/kpatch/kpatch_dump.o $(B)/libkpatch.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0)

TESTS += $(B)/tests/test_kpatch_reader
$(B)/tests/test_kpatch_reader: $(B)/tests/test_kpatch_reader.o $(B)/libkpatch.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check)

# Which time of a record a lower envelope may take, on a model driver that
# reads its position when ALSA asks (tests/test_kpatch_bracket.c).
TESTS += $(B)/tests/test_kpatch_bracket
$(B)/tests/test_kpatch_bracket: $(B)/tests/test_kpatch_bracket.o $(B)/libkpatch.a $(B)/libtimehist.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

# --- kernel module ---------------------------------------------------------------
# Kbuild writes its objects next to the sources, so the module is built in a
# copy under $(B)/kpatch/ko; the source tree stays clean.
KDIR ?= /lib/modules/$(shell uname -r)/build
KPATCH_KO_DIR := $(B)/kpatch/ko
KPATCH_KO_SRCS := kpatch/Kbuild kpatch/chorus_kpatch.c kpatch/chorus_kpatch.h

.PHONY: kpatch kpatch-check kpatch-vmtest vmtest
kpatch:
	@test -d "$(KDIR)" || { echo "kpatch: no kernel build tree at KDIR=$(KDIR);" \
	  "install the headers of that kernel or run 'make kpatch-check'" >&2; exit 1; }
	@mkdir -p $(KPATCH_KO_DIR)
	@cp -p $(KPATCH_KO_SRCS) $(KPATCH_KO_DIR)/
	$(MAKE) -C $(KDIR) M=$(abspath $(KPATCH_KO_DIR)) $(KPATCH_KFLAGS) modules
	@echo "kpatch: built $(KPATCH_KO_DIR)/chorus_kpatch.ko"

# Debian's linux-headers-amd64 (installed when missing), W=1, warnings fail.
kpatch-check:
	@sh kpatch/check.sh "$(MAKE)" "$(B)"

# Boots Debian's kernel under qemu with snd-dummy, snd-aloop, the module and
# chorus's daemons and tools (kpatch/vmtest/init.sh); a few minutes.
kpatch-vmtest vmtest:
	@sh kpatch/vmtest/run.sh "$(MAKE)" "$(B)"
