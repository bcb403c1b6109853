/* chaos_clients.h — after chorus-sim --chaos: did every client reconnect
 * by itself?  (issue 15's chaos soak: "any client that did not reconnect
 * by itself" fails it.)
 *
 * The clients of the node's services, each judged by its own status
 * device: audiod (of syncd: `syncd connected`, `forwarded=` growing), fft
 * (of audiod: `connected=yes`, `frames computed=` growing) and detect (of
 * fft and syncd: `clocks ready`, `frames received=` growing).  After
 * CSIM_CLIENTS_SETTLE_S (a process the last fault restarted is starting),
 * each running one is read twice, CSIM_CLIENTS_GAP_S apart, with the main
 * context iterating meanwhile; a client that is not connected at the
 * second read, or whose counter did not grow, or whose status cannot be
 * read, did not reconnect.
 */
#ifndef CHORUS_SIM_CHAOS_CLIENTS_H
#define CHORUS_SIM_CHAOS_CLIENTS_H

#include <glib.h>

#include "sim/launch/launch.h"

#define CSIM_CLIENTS_SETTLE_S 5.0
#define CSIM_CLIENTS_GAP_S 4.0

/* Check every client program running on every node of s; a line per
 * failure and a summary line into out.  Returns the failures. */
int csim_chaos_clients_check(csim *s, GString *out);

#endif
