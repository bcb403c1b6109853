/* simradio.h — the simulated radio, in one place on syncd's receive path
 * (DESIGN §5).  On loopback every receiver would get the same kernel
 * timestamp, so when running simulated (CHORUS_SIM_CLOCK and CHORUS_SCENARIO
 * both set) this applies the scenario's radio: packets from nodes farther
 * than [world] radio_range are dropped, any packet is lost with probability
 * radio_loss, and each receive timestamp gets Gaussian noise with this
 * node's radio_jitter_ns.  With CHORUS_SIM_NETNS=1 (chorus-sim --netns: each
 * node on its own network path) only range and loss are simulated.
 */
#ifndef CHORUS_SYNCD_SIMRADIO_H
#define CHORUS_SYNCD_SIMRADIO_H

#include <glib.h>
#include <stdint.h>

typedef struct simradio simradio;

/* The radio of node `self` when simulated; NULL (and no error) when not
 * simulated; NULL with *err when the scenario cannot be loaded or does not
 * describe `self`. */
simradio *simradio_new(uint32_t self, GError **err);

/* Free (NULL is fine). */
void simradio_free(simradio *r);

/* TRUE when a packet from `sender` reaches us (in range and not lost).
 * Unknown senders are out of range. */
gboolean simradio_delivers(simradio *r, uint32_t sender);

/* The receive-timestamp error to add, ns (0 with --netns). */
int64_t simradio_jitter_ns(simradio *r);

/* One line describing the radio (for the status device), appended to out. */
void simradio_describe(const simradio *r, GString *out);

#endif
