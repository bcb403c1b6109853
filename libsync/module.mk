# libsync: clocks, fits, conversion graph, ticker client, virtual clocks.
LIBSYNC_SRCS := $(wildcard libsync/*.c)
$(B)/libsync.a: $(patsubst %.c,$(B)/%.o,$(LIBSYNC_SRCS))
LIBSYNC_PKGS := gsl glib-2.0
