# timehist: piecewise clock history (pure; uses libsync's fit and conv).
TIMEHIST_SRCS := $(wildcard timehist/*.c)
$(B)/libtimehist.a: $(patsubst %.c,$(B)/%.o,$(TIMEHIST_SRCS))

TESTS += $(B)/tests/test_timehist
$(B)/tests/test_timehist: $(B)/tests/test_timehist.o $(B)/libtimehist.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm

# Bridging an outage against seeded random-walk clocks (issue 16 item 3).
TESTS += $(B)/tests/test_timehist_bridge
$(B)/tests/test_timehist_bridge: $(B)/tests/test_timehist_bridge.o $(B)/libtimehist.a $(B)/libsync.a
	@mkdir -p $(dir $@)
	$(link) $(call pkglibs,check gsl glib-2.0) -lm -pthread
