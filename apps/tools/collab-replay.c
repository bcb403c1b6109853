/* collab-replay — run a kept solve again (apps/collab/dump.h): the clips
 * and numbers collab gave tdoa_locate when it solved a call, written to
 * its dump_dir, are solved again by this build's tdoa_locate and what it
 * answers is printed, beside what the kept case says was answered then.
 *
 *   collab-replay [--alpha A] [--onset-floor-ms F] CASE.ini...
 *
 * For each case: the status, the position and its standard deviations,
 * the arrivals used (and the node the solver rejected), where the steered
 * response put the source, and per arrival its node, arrival relative to
 * the reference (us), its sigma (us), its pair's coherence, and the
 * arrival its detected onset alone implies (us).  Options override the
 * kept parameters, to see what a setting would have done.
 * Exit: 0 every case solved ok; 1 a case did not end ok; 2 bad usage or a
 * case that cannot be read (which file, group, key, why).
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "apps/collab/dump.h"
#include "apps/collab/tdoa.h"

static const char *status_word(int rc, const tdoa_result *r)
{
	static const char *const names[] = {"ok", "too_few", "degenerate", "ill_conditioned", "inconsistent", "no_convergence", "untested"};
	if (rc < 0)
		return "failed";
	if (r->loc.status == DSP_LOC_OK && r->ambiguous)
		return "ambiguous";
	if (r->loc.status == DSP_LOC_OK && r->coarse)
		return "coarse";
	return (unsigned)r->loc.status < G_N_ELEMENTS(names) ? names[r->loc.status] : "failed";
}

/* Solve one case and print it; 0 ok, 1 not ok, 2 unreadable. */
static int replay(const char *path, double alpha, double floor_ms)
{
	tdoa_input in[TDOA_MAX];
	tdoa_params p;
	int n = 0;
	GError *e = NULL;
	if (tdoa_dump_read(path, in, &n, &p, &e) < 0) {
		fprintf(stderr, "collab-replay: %s\n", e->message);
		g_error_free(e);
		return 2;
	}
	if (alpha > 0)
		p.alpha = alpha;
	if (floor_ms >= 0)
		p.onset_floor_s = floor_ms * 1e-3;
	GKeyFile *kf = g_key_file_new();
	char *then = NULL;
	if (g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, NULL))
		then = g_key_file_get_string(kf, "result", "why", NULL);
	g_key_file_free(kf);
	tdoa_result r;
	int rc = tdoa_locate(in, n, &p, &r);
	const dsp_loc_result *L = &r.loc;
	printf("%s: %s, %d clips, %d used", path, status_word(rc, &r), n, rc < 0 ? r.n_ok : L->n_used);
	if (r.rejected_node >= 0)
		printf(", node %d rejected", r.rejected_node);
	if (rc == 0)
		printf("; at (%.3f, %.3f, %.3f) m, s.d. (%.3f, %.3f) m, chi2 %.2f on %d d.o.f. (p %.3g), c %.1f m/s", L->pos_m[0],
		       L->pos_m[1], L->pos_m[2], sqrt(L->cov[0][0]), sqrt(L->cov[1][1]), L->chi2, L->dof, L->p_value, L->c_m_s);
	printf("\n  srp at (%.3f, %.3f, %.3f) m, power %.3f%s%s\n", r.srp_pos_m[0], r.srp_pos_m[1], r.srp_pos_m[2], r.srp_power,
	       r.ambiguous ? "; ambiguous" : "", r.separated ? "; another sound taken out first" : "");
	if (*r.why)
		printf("  why: %s\n", r.why);
	if (then && *then)
		printf("  then: %s\n", then);
	g_free(then);
	const tdoa_input *R = &in[r.ref];
	for (int j = 0; j < n; j++) {
		double onset_us = (double)(in[j].onset_ns - R->onset_ns) * 1e-3;
		printf("  node %-3u %s a %+11.2f us  sigma %8.2f us  coherence %.3f  onsets say %+11.2f us (se %.2f)", in[j].node,
		       j == r.ref ? "ref" : (r.ok[j] ? "   " : " - "), r.a_s[j] * 1e6, r.sigma_s[j] * 1e6, r.coherence[j], onset_us,
		       in[j].onset_se_ns * 1e-3);
		/* a moving caller's Doppler scale against the reference's */
		if (r.doppler && j != r.ref)
			printf("  scale %.5f +- %.5f", r.rho[j], r.rho_sd[j]);
		printf("\n");
	}
	tdoa_dump_free(in, n);
	return rc == 0 && L->status == DSP_LOC_OK && !r.ambiguous && !r.coarse ? 0 : 1;
}

int main(int argc, char **argv)
{
	double alpha = 0, floor_ms = -1;
	GOptionEntry opts[] = {
		{"alpha", 0, 0, G_OPTION_ARG_DOUBLE, &alpha, "the chi-square test's level instead of the kept one", "A"},
		{"onset-floor-ms", 0, 0, G_OPTION_ARG_DOUBLE, &floor_ms, "the onsets' misfit floor instead of the kept one, ms", "F"},
		{NULL},
	};
	GOptionContext *ctx = g_option_context_new("CASE.ini... - solve kept collab cases again");
	g_option_context_add_main_entries(ctx, opts, NULL);
	GError *e = NULL;
	if (!g_option_context_parse(ctx, &argc, &argv, &e) || argc < 2) {
		fprintf(stderr, "collab-replay: %s\n", e ? e->message : "no case given (CASE.ini, written to collab's dump_dir)");
		g_clear_error(&e);
		g_option_context_free(ctx);
		return 2;
	}
	g_option_context_free(ctx);
	int worst = 0;
	for (int i = 1; i < argc; i++) {
		int rc = replay(argv[i], alpha, floor_ms);
		if (rc > worst)
			worst = rc;
	}
	return worst;
}
