/* syncd_net_util.h — helpers of the RBS tests that run syncd through
 * chorus-sim's launcher (test_syncd_net, test_syncd_scope): start a field
 * with fast protocol timers, convert against the ground truth, read a
 * node's sync/rbs status.  Failures are Check assertions.
 */
#ifndef CHORUS_TESTS_SYNCD_NET_UTIL_H
#define CHORUS_TESTS_SYNCD_NET_UTIL_H

#include <glib.h>

#include "sim/launch/launch.h"
#include "sim/launch/truth.h"

#ifndef CSIM_BIN_DIR
#define CSIM_BIN_DIR "build/bin"
/* The number after `key` in text, or NAN. */
double tsn_number_after(const char *text, const char *key);

/* Node n's sync/rbs text (g_free it) once it contains `needle`; asserts
 * it does within secs. */
char *tsn_wait_rbs(csim *s, int n, const char *needle, double secs);

#endif

/* Fast protocol timers so each case runs in seconds (prepended to every
 * field's syncd configuration). */
extern const char tsn_fast[];

/* Start `scenario` (ini text) as case `name` under $CHORUS_RUN (or /tmp),
 * syncd configured with tsn_fast then `extra` (may be NULL); audiod at
 * 16 kHz on every node when `audio`.  Asserts it started. */
csim *tsn_start(const char *name, const char *scenario, const char *extra, gboolean audio);

/* The directory of the case last started. */
const char *tsn_dir(void);

/* One conversion (csim_truth_convert): error, standard error and hops; the
 * standard error as the 5-s.e. checks use it, i.e. scaled by the t-quantile
 * rule for its degrees of freedom (sync_tail_k(dof, 5) / 5), so that
 * `fabs(err) <= 5 * sd` is csim_meas_beyond's test.  Returns its code. */
int tsn_convert(csim_truth *t, int via, int a, int b, double *err, double *sd, unsigned *hops, char *why, size_t len);

/* Wait (iterating nothing: the nodes are other processes) until `via`
 * converts node a's cpu to node b's (b < 0: global), or deadline_s passes.
 * Returns the result code (the reason of a failure goes to stderr). */
int tsn_wait_convert(csim_truth *t, int via, int a, int b, double deadline_s, double *err, double *sd, unsigned *hops);

/* The text of node n's sync/rbs status (g_free it); asserts it was read. */
char *tsn_rbs_status(csim *s, int n);

/* The number after " name=" in text; asserts it is there. */
guint64 tsn_counter(const char *text, const char *name);

/* The number after `key` in text, or NAN. */
double tsn_number_after(const char *text, const char *key);

/* Node n's sync/rbs text (g_free it) once it contains `needle`; asserts
 * it does within secs. */
char *tsn_wait_rbs(csim *s, int n, const char *needle, double secs);

#endif
