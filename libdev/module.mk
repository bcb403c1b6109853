# libdev: device patterns over AF_UNIX SOCK_SEQPACKET (server + client halves).
LIBDEV_SRCS := $(wildcard libdev/*.c)
$(B)/libdev.a: $(patsubst %.c,$(B)/%.o,$(LIBDEV_SRCS))
LIBDEV_PKGS := glib-2.0
