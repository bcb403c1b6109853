/* simtime.h — ground-truth bookkeeping in simulation: a node cpu time as
 * seconds of the simulated world (chorus-sim sets CHORUS_SIM_CLOCK and
 * CHORUS_SIM_EPOCH_NS).  Used only to annotate events so a report can
 * match them with the truth; nothing in the pipeline reads it.
 */
#ifndef CHORUS_DETECT_SIMTIME_H
#define CHORUS_DETECT_SIMTIME_H

#include <stdint.h>

/* World seconds of node cpu time cpu_ns (fractional part frac_ns added), or
 * NAN outside simulation. */
double simtime_world_s(int64_t cpu_ns, double frac_ns);

#endif
