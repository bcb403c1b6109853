# libdev: device patterns over AF_UNIX SOCK_SEQPACKET (server + client halves).
LIBDEV_SRCS := $(wildcard libdev/*.c)
$(B)/libdev.a: $(patsubst %.c,$(B)/%.o,$(LIBDEV_SRCS))
LIBDEV_PKGS := glib-2.0

# Tests: one program per area; each links the shared helper.
LIBDEV_TESTS := $(patsubst tests/test_libdev_%.c,%,$(wildcard tests/test_libdev_*.c))
LIBDEV_TEST_BINS := $(patsubst %,$(B)/tests/test_libdev_%,$(LIBDEV_TESTS))
TESTS += $(LIBDEV_TEST_BINS)
# a static pattern rule: it cannot capture the test objects themselves
$(LIBDEV_TEST_BINS): $(B)/tests/test_libdev_%: $(B)/tests/test_libdev_%.o $(B)/tests/libdev_testutil.o $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm
# the tools test runs chorus-cat and chorus-ctl from $(B)/bin
$(B)/tests/test_libdev_tools: | $(B)/bin/chorus-cat $(B)/bin/chorus-ctl
