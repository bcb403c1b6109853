# apps/mqtt: chorus-mqtt, the node's results to an MQTT broker (libmosquitto,
# json-glib; docs/mqtt.md).  Its parts: the disk queue (queue.c), the JSON
# payloads (payload.c), the broker connection (broker.c), the health
# message (health.c).
MQTT_OBJS := $(patsubst %.c,$(B)/%.o,$(filter-out apps/mqtt/main.c,$(wildcard apps/mqtt/*.c)))
$(B)/libmqtt.a: $(MQTT_OBJS)
PROGS += $(B)/bin/chorus-mqtt
$(B)/bin/chorus-mqtt: $(B)/apps/mqtt/main.o $(B)/libmqtt.a $(B)/libarchive.a $(B)/libdetect.a $(B)/libdev.a $(B)/libsync.a $(B)/libcfg.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 gsl json-glib-1.0 libmosquitto libsystemd) -lm

# The queue and payloads on their own (test_mqtt_parts), and chorus-mqtt
# against a real mosquitto broker started by the test, through a broker
# restart (tests/test_mqtt.sh, with the subscriber tests/mqtt_sub.c).
TESTS += $(B)/tests/test_mqtt_parts
$(B)/tests/test_mqtt_parts: $(B)/tests/test_mqtt_parts.o $(B)/tests/tmpdir.o $(B)/libmqtt.a $(B)/libarchive.a $(B)/libdetect.a $(B)/libdev.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check glib-2.0 gsl json-glib-1.0) -lm

$(B)/tests/mqtt_sub: $(B)/tests/mqtt_sub.o
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,glib-2.0 json-glib-1.0 libmosquitto)

TESTS += $(B)/tests/test_mqtt
$(B)/tests/test_mqtt: tests/test_mqtt.sh tests/sim_node.sh | $(B)/tests/mqtt_sub $(B)/bin/chorus-mqtt $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft $(B)/bin/detect $(B)/bin/chorus-cat $(B)/bin/synctool $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_mqtt.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@

# chorus-mqtt on every node of a simulated field with collab: every located
# call reaches the broker (tests/test_mqtt_field.sh).
TESTS += $(B)/tests/test_mqtt_field
$(B)/tests/test_mqtt_field: tests/test_mqtt_field.sh | $(B)/tests/mqtt_sub $(B)/bin/chorus-mqtt $(B)/bin/chorus-sim $(B)/bin/syncd $(B)/bin/audiod $(B)/bin/fft $(B)/bin/detect $(B)/bin/collab $(B)/sim/libasound_module_pcm_chorus_sim.so $(B)/sim/chorus_sim.conf $(B)/sim/libchorus_sim_radio.so
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec sh "%s/tests/test_mqtt_field.sh" "%s" "%s"\n' "$(CURDIR)" "$(abspath $(B))" "$(CURDIR)" >$@ && chmod +x $@
