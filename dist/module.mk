# dist: what installs around the programs — the systemd units (made from
# dist/*.service.in with the installation paths), the services' system user
# (chorus.sysusers), the default configuration files (each program's own
# --print-config: every key commented with its default) and the docs; and
# the Debian packages (`make deb`, `make check-deb`; debian/, tests/check-deb.sh).

# The paths the units (and chorus-sim's fallbacks, sim/launch/module.mk) name are recorded in $(B)/dist/paths, rewritten only
# when they change, so `make install PREFIX=/usr` after a plain `make`
# remakes the units rather than installing ones that say /usr/local.
DIST_PATHS = PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) BINDIR=$(BINDIR) SYSCONFDIR=$(SYSCONFDIR) DOCDIR=$(DOCDIR)
.PHONY: dist-paths-check
$(B)/dist/paths: dist-paths-check
	@mkdir -p $(dir $@)
	@echo '$(DIST_PATHS)' | cmp -s - $@ || echo '$(DIST_PATHS)' > $@

DIST_UNITS := $(patsubst dist/%.in,$(B)/dist/%,$(wildcard dist/chorus-*.service.in))
$(B)/dist/%.service: dist/%.service.in $(B)/dist/paths
	@mkdir -p $(dir $@)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' $< > $@

# /etc/chorus/NAME.conf: the program's --print-config under a header; detect
# prints its profile's keys after its own ("# profile"), which stay out.
DIST_CONF_PROGS := syncd audiod fft detect collab chorus-archive
DIST_CONFS := $(patsubst %,$(B)/dist/etc/%.conf,$(DIST_CONF_PROGS)) $(B)/dist/etc/mqtt.conf $(B)/dist/etc/proxy.conf \
	$(B)/dist/etc/web.conf
$(B)/dist/etc/%.conf: $(B)/bin/% $(B)/dist/paths
	@mkdir -p $(dir $@)
	{ printf '# %s/chorus/%s.conf: %s'"'"'s configuration (docs/configuration.md).\n' $(SYSCONFDIR) $* $*; \
	  printf '# Every key, commented out, with its default (`%s --print-config`).\n\n' $*; \
	  env -u CHORUS_NODE $< --print-config | sed '/^# profile$$/,$$d'; } > $@.tmp && mv $@.tmp $@

# chorus-mqtt reads /etc/chorus/mqtt.conf (the program's name less "chorus-").
$(B)/dist/etc/mqtt.conf: $(B)/bin/chorus-mqtt $(B)/dist/paths
	@mkdir -p $(dir $@)
	{ printf '# %s/chorus/mqtt.conf: chorus-mqtt'"'"'s configuration (docs/mqtt.md).\n' $(SYSCONFDIR); \
	  printf '# Every key, commented out, with its default (`chorus-mqtt --print-config`).\n\n'; \
	  env -u CHORUS_NODE $< --print-config; } > $@.tmp && mv $@.tmp $@

# chorus-proxy reads /etc/chorus/proxy.conf (the same rule).
$(B)/dist/etc/proxy.conf: $(B)/bin/chorus-proxy $(B)/dist/paths
	@mkdir -p $(dir $@)
	{ printf '# %s/chorus/proxy.conf: chorus-proxy'"'"'s configuration (chorus-proxy(8), docs/protocol.md).\n' $(SYSCONFDIR); \
	  printf '# Every key, commented out, with its default (`chorus-proxy --print-config`).\n\n'; \
	  env -u CHORUS_NODE $< --print-config; } > $@.tmp && mv $@.tmp $@

# chorus-web reads /etc/chorus/web.conf (the same rule).
$(B)/dist/etc/web.conf: $(B)/bin/chorus-web $(B)/dist/paths
	@mkdir -p $(dir $@)
	{ printf '# %s/chorus/web.conf: chorus-web'"'"'s configuration (chorus-web(8), docs/protocol.md).\n' $(SYSCONFDIR); \
	  printf '# Every key, commented out, with its default (`chorus-web --print-config`).\n\n'; \
	  env -u CHORUS_NODE $< --print-config; } > $@.tmp && mv $@.tmp $@

INSTALL_FILES += $(DIST_UNITS) $(DIST_CONFS) $(B)/libsync.a $(B)/libdev.a \
	$(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/libchorus_sim_radio.so
all: $(DIST_UNITS) $(DIST_CONFS)

# An existing /etc/chorus/NAME.conf is the administrator's: never overwritten.
INSTALL_HOOKS += install-dist
.PHONY: install-dist
install-dist: $(DIST_UNITS) $(DIST_CONFS)
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)/chorus $(DESTDIR)$(DOCDIR)
	install -m 644 $(DIST_UNITS) $(DESTDIR)$(UNITDIR)/
	install -m 644 dist/chorus.sysusers $(DESTDIR)$(SYSUSERSDIR)/chorus.conf
	for f in $(DIST_CONFS); do t=$(DESTDIR)$(SYSCONFDIR)/chorus/$$(basename $$f); \
	    if [ -e $$t ]; then echo "install-dist: $$t exists, kept"; else install -m 644 $$f $$t; fi; done
	install -m 644 README.md docs/*.md $(DESTDIR)$(DOCDIR)/
	install -m 644 kpatch/README.md $(DESTDIR)$(DOCDIR)/kpatch.md

# --- Debian packages --------------------------------------------------------
# `make deb`: the packages of debian/ into $(B)/deb (dist/deb.sh), lintian
# clean; `make check-deb`: install them into a fresh Debian 12 root, run the
# programs from there, remove and purge (tests/check-deb.sh; 77 = could not run).
DEB_TOOL_PKGS := debhelper dh-dkms dh-python dpkg-dev fakeroot lintian debootstrap
DEB_OUT := $(B)/deb
.PHONY: deb deb-deps check-deb check-install
deb-deps:
	@sh tools/deps.sh $(DEB_PKGS) $(DEB_TOOL_PKGS)
deb: deb-deps
	@sh dist/deb.sh $(DEB_OUT)
check-deb: deb
	@nice -n 19 sh tests/check-deb.sh $(DEB_OUT)

# `make check-install`: `make install PREFIX=/usr` into a temporary DESTDIR
# and what it must have put there (tests/check-install.sh).
check-install:
	@sh tests/check-install.sh "$(MAKE)"
