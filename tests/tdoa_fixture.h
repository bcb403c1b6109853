/* tdoa_fixture.h — what collab hands tdoa_locate for one node's clip, for
 * the solver's tests that render clips themselves (test_tdoa_onsets,
 * test_tdoa_doppler).  Times are seconds past TDOA_FIXTURE_T0_NS. */
#ifndef CHORUS_TESTS_TDOA_FIXTURE_H
#define CHORUS_TESTS_TDOA_FIXTURE_H

#include <stddef.h>

#include "apps/collab/tdoa.h"

#define TDOA_FIXTURE_T0_NS 1000000000000LL

/* Node's clip x[len] at rate_hz starting at start_s, its detected onset at
 * onset_s stated to se_s (its Cramer-Rao bound 2 us), the clip's start
 * converted to 0.5 us, microphone at mic. */
tdoa_input tdoa_fixture_input(int node, const float *x, size_t len, double rate_hz, double start_s, double onset_s,
			      double se_s, double snr_db, const double mic[3]);

/* The solver's parameters for the field's chirp (1.2-2.4 kHz): the band
 * detect states for it (1121-2552 Hz) and collab's unmeasured air (20 +-
 * 10 degrees C); everything else tdoa_params_default's. */
void tdoa_fixture_chirp_params(tdoa_params *p);

#endif
