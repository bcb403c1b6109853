# libcfg: table-driven GKeyFile configuration with file:line:key errors.
$(B)/libcfg.a: $(B)/libcfg/cfg.o $(B)/libcfg/spec.o $(B)/libcfg/table.o
TESTS += $(B)/tests/test_cfg
$(B)/tests/test_cfg: $(B)/tests/test_cfg.o $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm
