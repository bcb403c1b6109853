/* outages.h — applying the scenario's `[node.N] down = T0-T1` windows to a
 * running simulation (issue 16): at T0 (s since the world's epoch) every
 * process of the node is killed, as by a power blip, and at T1 they are
 * started again; the node's simulated clocks run on meanwhile, as a node's
 * with a real-time clock would.  (`radio_down` needs nothing here: the
 * simulated radio, sim/radio/radio.c, drops the node's packets itself.)
 */
#ifndef CHORUS_SIM_OUTAGES_H
#define CHORUS_SIM_OUTAGES_H

#include <glib.h>

#include "sim/launch/launch.h"

typedef struct csim_outages csim_outages;

/* Told when node `node` went down (up = FALSE) or came back (up = TRUE). */
typedef void (*csim_outage_fn)(void *user, int node, gboolean up);

/* A csim_outage_fn for a csim_truth (user): it skips the node while it is
 * down and finds its audiod's numbering again after; each event is also
 * said on stderr. */
void csim_outage_truth(void *truth, int node, gboolean up);

/* Schedule every down window of s's scenario on the default main context;
 * told (may be NULL) hears of each.  Windows already past are skipped and
 * a node inside one now is stopped at once.  NULL when the scenario has
 * no down window. */
csim_outages *csim_outages_new(csim *s, csim_outage_fn told, void *user);

/* Cancel what is pending and free (a node still down stays down; csim_stop
 * copes). */
void csim_outages_free(csim_outages *o);

/* How many stops and starts were applied, and how many starts failed
 * (each failure is also logged with its reason). */
void csim_outages_counts(const csim_outages *o, int *stops, int *starts, int *failed);

#endif
