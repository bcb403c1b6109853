/* demo_chaos.h — chorus-demo --chaos SEED: the chaos soak with collab and
 * scoring (issue 15).  The faults of chorus-sim --chaos (sim/launch/chaos.h:
 * kill -9 and restart, SIGSTOP, optionally CPU hogs and radio cuts) on
 * every program of every node, collab included, and afterwards, besides
 * chorus-sim's chaos checks (crashes, restarts, clients that did not
 * reconnect, unexplained audio gaps), the calls the faults left enough of
 * the field to locate (sim/score/chaos_calls.h).
 */
#ifndef CHORUS_SIM_SCORE_DEMO_CHAOS_H
#define CHORUS_SIM_SCORE_DEMO_CHAOS_H

#include <stdio.h>

#include "sim/launch/launch.h"
#include "sim/launch/truth.h"
#include "sim/score/report.h"
#include "sim/world.h"

typedef struct demo_chaos demo_chaos;

/* Start the faults on s from now (seeded; a fault every interval_s on
 * average); the truth is told of audiod restarts.  hog, radio: the
 * optional faults. */
demo_chaos *demo_chaos_start(csim *s, csim_truth *truth, guint64 seed, double interval_s, gboolean hog,
			     gboolean radio);

/* Stop the faults and run chorus-sim's chaos checks while the nodes still
 * run; the actions to csv_path.  Returns the failures, -1 when the CSV
 * could not be written. */
int demo_chaos_finish(demo_chaos *c, const char *csv_path);

/* After scoring: judge the calls heard by at least min_nodes up nodes
 * (chaos_calls.h) against the baseline's calls.csv (NULL: none) and the truth's conversions (none beyond 5
 * stated standard errors), and print the chaos report and the judgement
 * to f.  Returns the calls' failures plus the conversions beyond 5 s.e.
 * (plus 1 when none was measured), or -1 when the baseline cannot be read
 * (the reason printed). */
int demo_chaos_judge(demo_chaos *c, const sim_world *w, const demo_eval *ev, int min_nodes, const char *baseline, FILE *f);

void demo_chaos_free(demo_chaos *c);

#endif
