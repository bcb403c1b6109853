/* chaos.h — chorus-sim --chaos: faults injected into a running simulation
 * (issue 15's chaos soak).
 *
 * At random times (exponential gaps of mean interval_s, from a seeded
 * generator, so a seed replays the same schedule) one process of one node
 * is hit: killed with SIGKILL and started again a second later, as
 * systemd's Restart=on-failure with RestartSec=1 would (60 %), or stopped
 * with SIGSTOP for 1-5 s and continued (40 %) — or, with csim_chaos_hog,
 * the host's cores are hogged for a few seconds, and with csim_chaos_radio
 * a node's radio is cut for a few seconds.  Every tick it also looks
 * for processes that died without being killed (a crash: counted, and
 * restarted as systemd would) and samples each process instance's resident
 * memory and open descriptors (/proc).  Afterwards the report lists every
 * action, and the failures: crashes, restarts that did not come up,
 * processes not running at the end, clients that did not reconnect by
 * themselves (chaos_clients.h), audio gaps that neither an overrun audiod
 * reported nor its downtime explain (chaos_audio.h: chorus-sim reads every
 * node's audio itself from the first fault on), and RSS or descriptor
 * growth over 5 % between the first and last 10 minutes of an instance
 * that lived 20 minutes or more (growth.h; a shorter life is reported, not
 * judged).
 */
#ifndef CHORUS_SIM_CHAOS_H
#define CHORUS_SIM_CHAOS_H

#include <glib.h>
#include <stdint.h>

#include "sim/launch/launch.h"

typedef struct csim_chaos csim_chaos;

/* Told after a program was started again (node, program name). */
typedef void (*csim_chaos_restarted_fn)(void *user, int node, const char *prog);

/* Start injecting into s (on the default main context) from now on;
 * restarted (may be NULL) is told of every restart. */
csim_chaos *csim_chaos_new(csim *s, guint64 seed, double interval_s, csim_chaos_restarted_fn restarted, void *user);

/* From now on one fault in five is a CPU hog instead: a process that spins
 * on the host for 2-6 s at normal priority (on a node every service shares
 * the cores with whatever else runs; in simulation every node shares the
 * host's).  chorus-sim --chaos-hog, bench/soak. */
void csim_chaos_hog(csim_chaos *c, gboolean on);

/* From now on one fault in five cuts a node's radio for 3-15 s instead (it
 * hears and is heard by no one; its services keep running): the cuts go to
 * $CHORUS_RUN/radio-cuts, which every node's simulated radio reads
 * (sim/radio/radio.c).  chorus-sim --chaos-radio, bench/soak. */
void csim_chaos_radio(csim_chaos *c, gboolean on);

/* Stop injecting; continue every stopped process, start every killed one. */
void csim_chaos_finish(csim_chaos *c);

/* A fault's span on the world's clock (s from csim_epoch_ns): program
 * `prog` of `node` killed (or crashed) until it was running again, or
 * stopped until it was continued; prog "radio": the node's radio cut. */
typedef struct {
	int node;
	const char *prog; /* static or owned by the chaos object */
	double from_s, to_s;
} csim_chaos_span;

/* Every fault's span so far (one still open ends now): a new GArray of
 * csim_chaos_span (g_array_free it). */
GArray *csim_chaos_spans(const csim_chaos *c);

/* The report: a table of actions and a summary into out; the actions as
 * CSV (t_s,node,program,action,detail,world_s) to csv_path.  Returns the failures
 * (0: none), or -1 when the CSV could not be written. */
int csim_chaos_report(csim_chaos *c, GString *out, const char *csv_path);

void csim_chaos_free(csim_chaos *c);

#endif
