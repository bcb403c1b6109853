# proxy: chorus-proxy, this node's devices for other machines over TCP
# (issue 19 item 1; docs/protocol.md "Remote devices").  The client half
# is in libdev (remote.c, frame.c, proxy_wire.c): every libdev client
# reaches nodeN:NAME through it.
PROXY_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out proxy/main.c,$(wildcard proxy/*.c)))
$(B)/libproxy.a: $(PROXY_OBJS)
PROGS += $(B)/bin/chorus-proxy
$(B)/bin/chorus-proxy: $(B)/proxy/main.o $(B)/libproxy.a $(B)/libdev.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 libsystemd)

# Over loopback TCP against a real chorus-proxy child (tests/test_proxy.c,
# its node in tests/proxy_fixture.c).
TESTS += $(B)/tests/test_proxy
$(B)/tests/test_proxy: $(B)/tests/test_proxy.o $(B)/tests/proxy_fixture.o $(B)/tests/libdev_testutil.o $(B)/libdev.a | $(B)/bin/chorus-proxy $(B)/bin/chorus-cat $(B)/bin/chorus-ctl
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm

# Nodes found by their sync packets (sync/peers), the same fixture.
TESTS += $(B)/tests/test_proxy_peers
$(B)/tests/test_proxy_peers: $(B)/tests/test_proxy_peers.o $(B)/tests/proxy_fixture.o $(B)/tests/libdev_testutil.o $(B)/libdev.a | $(B)/bin/chorus-proxy
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0) -lm

# The tools on another machine against a simulated node's real syncd and
# audiod through its proxy (tests/test_proxy_node.sh).
TESTS += $(B)/tests/test_proxy_node
$(B)/tests/test_proxy_node: tests/test_proxy_node.sh tests/sim_node.sh | $(B)/bin/chorus-proxy $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/chorus-cat $(B)/bin/chorus-ctl $(B)/bin/synctool $(B)/bin/audioget $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_proxy_node.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@

# Benchmark: remote against local device access in one run (bench/proxy.c).
BENCHES += $(B)/bench/proxy
$(B)/bench/proxy: $(B)/bench/proxy.o $(B)/bench/csvout.o $(B)/bench/cpuload.o $(B)/tests/proxy_fixture.o $(B)/libdev.a | $(B)/bin/chorus-proxy
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0) -pthread -lm
