# apps/tools: small command-line tools.  Each tool adds itself here:
# append its program to PROGS and give its link rule.
TOOLS_DEV_LIBS = $(call pkglibs,glib-2.0) -lm

PROGS += $(B)/bin/chorus-cat $(B)/bin/chorus-ctl
$(B)/bin/chorus-cat: $(B)/apps/tools/chorus-cat.o $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(TOOLS_DEV_LIBS)
$(B)/bin/chorus-ctl: $(B)/apps/tools/chorus-ctl.o $(B)/libdev.a
	@mkdir -p $(dir $@)
	$(link) $(TOOLS_DEV_LIBS)
