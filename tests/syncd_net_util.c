/* syncd_net_util.c — helpers of the launcher-based RBS tests (see
 * syncd_net_util.h). */
#include "tests/syncd_net_util.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "libdev/link.h"
#include "libsync/conv.h"

/* Fast protocol timers so each case runs in seconds. */
const char tsn_fast[] = "[rbs]\nbeacon_interval_s = 0.1\nreport_interval_s = 0.1\nadvert_interval_s = 0.2\n"
			"peer_timeout_s = 1.5\nnode_timeout_s = 2\nedge_expire_s = 2.5\n"
			"[realtime]\ninterval_s = 0.1\n";

static char *g_dir;

const char *tsn_dir(void)
{
	return g_dir;
}


csim *tsn_start(const char *name, const char *scenario, const char *extra, gboolean audio)
{
	const char *run = getenv("CHORUS_RUN");
	g_dir = g_build_filename(run ? run : "/tmp", name, NULL);
	g_mkdir_with_parents(g_dir, 0755);
	char *sc = g_build_filename(g_dir, "scenario.ini", NULL);
	ck_assert(g_file_set_contents(sc, scenario, -1, NULL));
	char *conf = g_strconcat(tsn_fast, extra ? extra : "", NULL);
	csim_opts o = {.scenario = sc, .out_dir = g_dir, .bin_dir = CSIM_BIN_DIR, .syncd_extra = conf, .audio = audio, .audio_rate_hz = 16000};
	GError *err = NULL;
	csim *s = csim_start(&o, &err);
	ck_assert_msg(s != NULL, "chorus-sim: %s", err ? err->message : "?");
	g_free(sc);
	g_free(conf);
	return s;
}

/* One conversion (csim_truth_convert): error, standard error and hops; the
 * standard error as the 5-s.e. checks use it, i.e. scaled by the t-quantile
 * rule for its degrees of freedom (sync_tail_k(dof, 5) / 5), so that
 * `fabs(err) <= 5 * sd` is csim_meas_beyond's test. */
int tsn_convert(csim_truth *t, int via, int a, int b, double *err, double *sd, unsigned *hops, char *why,
		size_t len)
{
	csim_meas m;
	int rc = csim_truth_convert(t, via, a, b, &m, why, len);
	if (rc == 0) {
		*err = m.err_ns;
		*sd = m.sd_ns * sync_tail_k(m.dof, 5.0) / 5.0;
		*hops = m.hops;
	}
	return rc;
}

/* Wait (iterating nothing: the nodes are other processes) until `via`
 * converts node a's cpu to node b's (b < 0: global), or deadline_s passes.
 * Returns the result code. */
int tsn_wait_convert(csim_truth *t, int via, int a, int b, double deadline_s, double *err, double *sd,
		     unsigned *hops)
{
	char why[200] = "";
	int64_t end = g_get_monotonic_time() + (int64_t)(deadline_s * 1e6);
	int rc;
	while ((rc = tsn_convert(t, via, a, b, err, sd, hops, why, sizeof why)) < 0 &&
	       g_get_monotonic_time() < end)
		g_usleep(100000);
	if (rc < 0)
		fprintf(stderr, "node%d: node%d -> node%d: %s\n", via, a, b, why);
	return rc;
}

/* The text of node n's sync/rbs status. */
char *tsn_rbs_status(csim *s, int n)
{
	char id[16];
	g_snprintf(id, sizeof id, "%d", n);
	char *old = g_strdup(g_getenv("CHORUS_RUN"));
	g_setenv("CHORUS_NODE", id, TRUE);
	g_setenv("CHORUS_RUN", csim_run_dir(s), TRUE);
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync("sync/rbs", FALSE, b, 2000);
	g_unsetenv("CHORUS_NODE");
	if (old)
		g_setenv("CHORUS_RUN", old, TRUE);
	g_free(old);
	ck_assert_msg(rc == 0, "sync/rbs of node%d: %s", n, b->len ? (char *)b->data : "?");
	return (char *)g_byte_array_free(b, FALSE);
}

guint64 tsn_counter(const char *text, const char *name)
{
	char *key = g_strdup_printf(" %s=", name);
	const char *p = strstr(text, key);
	g_free(key);
	ck_assert_msg(p != NULL, "no counter %s in:\n%s", name, text);
	return g_ascii_strtoull(p + strlen(name) + 2, NULL, 10);
}

/* The number after `key` in text, or NAN. */
double tsn_number_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	return p ? g_ascii_strtod(p + strlen(key), NULL) : NAN;
}

/* Node n's sync/rbs text once it contains `needle` (fails after secs). */
char *tsn_wait_rbs(csim *s, int n, const char *needle, double secs)
{
	char *st = NULL;
	int64_t end = g_get_monotonic_time() + (int64_t)(secs * G_USEC_PER_SEC);
	do {
		g_free(st);
		g_usleep(500000);
		st = tsn_rbs_status(s, n);
	} while (!strstr(st, needle) && g_get_monotonic_time() < end);
	ck_assert_msg(strstr(st, needle), "no \"%s\" on node%d's sync/rbs:\n%s", needle, n, st);
	return st;
}
