# archive: chorus-archive, every frame of audiod's devices kept in FLAC
# segments with their time (docs/archive.md); libarchive.a is also what
# chorus-export and audioget read the archive with.
ARCHIVE_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out archive/main.c,$(wildcard archive/*.c)))
$(B)/libarchive.a: $(ARCHIVE_OBJS)

ARCHIVE_LIBS := $(B)/libarchive.a $(B)/libaudiod.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
PROGS += $(B)/bin/chorus-archive
$(B)/bin/chorus-archive: $(B)/archive/main.o $(ARCHIVE_LIBS)
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl sndfile libsystemd) -lm
