/* calltrace.c — chorus-calltrace: what detect makes of one simulated call
 * at every node, against the world's truth.
 *
 *   chorus-calltrace SCENARIO PROFILE --source S --time T [--node N]
 *
 * For call of source S nearest time T (s since the world's epoch; the
 * `time_s` of chorus-demo's calls.csv), each node's microphone 0 is
 * rendered from the world (sim/world.h: exactly what the ALSA plugin
 * gives audiod, noise included) from --before s before the call's arrival
 * there to --after s after it, and detect's pipeline runs on it
 * (apps/detect/offline.h: fft's frames, the detector, the onset near the
 * leading edge, overlapping calls by matched filter and by band
 * envelope).  Printed per node: every call arriving in the window (source,
 * number, offset from the traced call's arrival), and every call detect
 * found — template, how (first of its event, overlap, envelope, coarse),
 * its onset's offset from the traced arrival, its stated s.e., and the
 * nearest true arrival with the error in s.e.
 *
 * A developer's tool, not a field one: it reads the simulator's truth.
 * It is how a bench/field row's lost or misplaced call is traced to the
 * nodes and the stage that lost it (docs/localization.md).  The window is
 * detect's only approximately: the stream starts --before s ahead, so the
 * detector's noise floor has that long to learn (detect's warm-up).
 */
#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "apps/detect/offline.h"
#include "apps/detect/onset_rate.h"
#include "sim/scenario.h"
#include "sim/world.h"

#define MAX_FOUND 64

static const char *how_name(det_found_how h)
{
	return h == DET_FOUND_FIRST ? "first" : h == DET_FOUND_OVERLAP ? "overlap"
					: h == DET_FOUND_ENVELOPE      ? "envelope"
								       : "coarse";
}

/* The true arrival at node nearest t_s (s): its source (0-based), call and
 * time into *src, *k; NAN when there is none. */
static double nearest_arrival(const sim_world *w, const sim_scenario *sc, int node, double t_s, size_t *src, size_t *k)
{
	double best = NAN;
	for (size_t s = 0; s < sim_scenario_n_sources(sc); s++)
		for (size_t j = 0; j < sim_world_n_calls(w, s); j++) {
			double a = sim_world_arrival_s(w, node, 0, s, j);
			if (isfinite(a) && (!isfinite(best) || fabs(a - t_s) < fabs(best - t_s))) {
				best = a;
				*src = s;
				*k = j;
			}
		}
	return best;
}

static int trace_node(const sim_world *w, const sim_scenario *sc, const det_profile *p, det_refiner *ref,
		      const det_overlap_env *oe, int node, size_t S, size_t K, double before, double after, double rate,
		      int size, int hop)
{
	double aS = sim_world_arrival_s(w, node, 0, S, K);
	if (!isfinite(aS))
		return 0;
	printf("node %d: source %zu call %zu arrives at %.6f s; in the window:", node, S + 1, K + 1, aS);
	for (size_t s = 0; s < sim_scenario_n_sources(sc); s++)
		for (size_t j = 0; j < sim_world_n_calls(w, s); j++) {
			double a = sim_world_arrival_s(w, node, 0, s, j);
			if (a >= aS - before && a <= aS + after)
				printf(" s%zu#%zu %+.1f ms", s + 1, j + 1, (a - aS) * 1e3);
		}
	printf("\n");
	int64_t f0 = (int64_t)floor(sim_world_frame_at(w, node, rate, aS - before));
	size_t n = (size_t)ceil((before + after) * rate);
	float *x = g_new(float, n);
	for (size_t i = 0; i < n; i++)
		x[i] = (float)sim_world_sample(w, node, 0, rate, f0 + (int64_t)i);
	det_found f[MAX_FOUND];
	int nf = det_offline_run(p, ref, oe, x, n, rate, size, hop, f, MAX_FOUND);
	g_free(x);
	if (nf < 0) {
		fprintf(stderr, "chorus-calltrace: node %d: detect's pipeline failed (%d)\n", node, nf);
		return -1;
	}
	if (nf == 0)
		printf("  nothing detected\n");
	/* detect moves each matched onset back by the card's stretch, measured
	 * against global (onset_rate.h); here the card's true rate stands for
	 * that measurement, and detect's default ruler error is stated. */
	double stretch = 1.0 / (sim_world_frame_time_s(w, node, rate, f0 + (int64_t)rate) -
				sim_world_frame_time_s(w, node, rate, f0));
	for (int i = 0; i < nf; i++)
		if (f[i].tmpl > 0 && f[i].how != DET_FOUND_ENVELOPE) {
			det_event e = {.onset_frame = f[i].onset, .onset_se = f[i].se, .rate_hz = rate};
			det_onset_rate_correct(&e, stretch, det_refiner_rate_shift(ref, f[i].tmpl), DETECT_RATE_SD_PPM * 1e-6);
			f[i].onset = e.onset_frame;
			f[i].se = e.onset_se;
		}
	for (int i = 0; i < nf; i++) {
		/* the card's own frame times: its skew over the seconds of audio
		 * before the call is tens of us */
		double fl = floor(f[i].onset);
		double t = sim_world_frame_time_s(w, node, rate, f0 + (int64_t)fl) + (f[i].onset - fl) / rate;
		size_t s = 0, j = 0;
		double a = nearest_arrival(w, sc, node, t, &s, &j);
		printf("  %-8s template %d at %+8.2f ms, s.e. %.3f ms; nearest s%zu#%zu: error %+.3f ms (%.1f s.e.); ENR %.1f dB, "
		       "explains %.2f\n",
		       how_name(f[i].how), f[i].tmpl, (t - aS) * 1e3, f[i].se / rate * 1e3, s + 1, j + 1, (t - a) * 1e3,
		       (t - a) * rate / f[i].se, f[i].enr_db, f[i].explained);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int source = 0, node = 0, size = 1024, hop = 256;
	double time_s = NAN, before = 3.0, after = 1.0, rate = 16000;
	GOptionEntry opts[] = {
		{"source", 's', 0, G_OPTION_ARG_INT, &source, "the call's source (K of [source.K])", "K"},
		{"time", 't', 0, G_OPTION_ARG_DOUBLE, &time_s, "the call's start, s since the world's epoch (calls.csv time_s)", "T"},
		{"node", 'n', 0, G_OPTION_ARG_INT, &node, "only this node (default: every node)", "N"},
		{"before", 0, 0, G_OPTION_ARG_DOUBLE, &before, "audio before the call's arrival, s (default 3: the detector's floor settles)", "S"},
		{"after", 0, 0, G_OPTION_ARG_DOUBLE, &after, "audio after it, s (default 1.0)", "S"},
		{"rate", 0, 0, G_OPTION_ARG_DOUBLE, &rate, "audio rate, Hz (default 16000, bench/field's)", "HZ"},
		{"size", 0, 0, G_OPTION_ARG_INT, &size, "fft frame size (default 1024)", "N"},
		{"hop", 0, 0, G_OPTION_ARG_INT, &hop, "fft hop (default 256)", "N"},
		{NULL},
	};
	GError *err = NULL;
	GOptionContext *ctx = g_option_context_new("SCENARIO PROFILE - what detect makes of one simulated call at every node");
	g_option_context_add_main_entries(ctx, opts, NULL);
	gboolean ok = g_option_context_parse(ctx, &argc, &argv, &err);
	g_option_context_free(ctx);
	if (!ok || argc != 3 || source < 1 || !isfinite(time_s) || !(before > 0) || !(after > 0) || !(rate > 0)) {
		fprintf(stderr, "chorus-calltrace: %s\n",
			err ? err->message : "usage: chorus-calltrace SCENARIO PROFILE --source K --time T [--node N]");
		g_clear_error(&err);
		return 2;
	}
	sim_scenario *sc = sim_scenario_load(argv[1], &err);
	sim_world *w = sc ? sim_world_new(sc, &err) : NULL;
	det_profile p;
	if (!w || !det_profile_load(&p, argv[2], &err)) {
		fprintf(stderr, "chorus-calltrace: %s\n", err->message);
		g_error_free(err);
		return 1;
	}
	size_t S = (size_t)source - 1, K = 0;
	if (S >= sim_scenario_n_sources(sc) || sim_world_n_calls(w, S) == 0) {
		fprintf(stderr, "chorus-calltrace: %s: no source %d, or it never calls\n", argv[1], source);
		return 1;
	}
	for (size_t j = 1; j < sim_world_n_calls(w, S); j++)
		if (fabs(sim_world_call_time_s(w, S, j) - time_s) < fabs(sim_world_call_time_s(w, S, K) - time_s))
			K = j;
	printf("source %d call %zu at %.6f s (asked %.6f)\n", source, K + 1, sim_world_call_time_s(w, S, K), time_s);
	dsp_wave_params wp;
	if (sim_world_call_params(w, S, K, &wp)) {
		if (wp.kind == DSP_WAVE_PULSE_TRAIN)
			printf("  drawn: pulse train, carrier %.1f Hz, %d pulses of %.2f ms every %.2f ms (%.1f ms)\n",
			       wp.carrier_hz, wp.pulses, wp.pulse_ms, wp.pulse_interval_ms, sim_world_call_length_s(w, S, K) * 1e3);
		else if (wp.kind == DSP_WAVE_CHIRP)
			printf("  drawn: chirp %.1f -> %.1f Hz, %.1f ms\n", wp.f0_hz, wp.f1_hz, sim_world_call_length_s(w, S, K) * 1e3);
		else
			printf("  drawn: %.1f ms\n", sim_world_call_length_s(w, S, K) * 1e3);
	}
	int nt = det_profile_n_templates(&p);
	float *h[DET_MAX_TEMPLATES] = {0};
	size_t len[DET_MAX_TEMPLATES] = {0};
	const char *calls[DET_MAX_TEMPLATES], *why = "no templates in the profile";
	for (int i = 0; i < nt; i++) {
		calls[i] = det_profile_call(&p, i);
		if (!(h[i] = det_profile_render(&p, i, rate, &len[i], &err))) {
			fprintf(stderr, "chorus-calltrace: %s: template %d: %s\n", argv[2], i + 1, err->message);
			return 1;
		}
	}
	det_refiner *ref = nt > 0 ? det_refiner_new(h, len, nt, &why) : NULL;
	if (!ref || det_refiner_set_variation(ref, det_profile_stretch(&p)) < 0 ||
	    det_refiner_set_band(ref, rate, p.f_lo_hz, p.f_hi_hz) == -ENOMEM) {
		fprintf(stderr, "chorus-calltrace: %s: templates: %s\n", argv[2], ref ? "out of memory" : why);
		return 1;
	}
	det_overlap_env *oe = nt > 1 ? det_overlap_env_new(ref, h, len, nt, rate, p.f_lo_hz, p.f_hi_hz, calls, &why) : NULL;
	int rc = 0;
	for (size_t i = 0; i < sim_scenario_n_nodes(sc) && !rc; i++) {
		int id = sim_scenario_node(sc, i)->id;
		if (!node || node == id)
			rc = trace_node(w, sc, &p, ref, oe, id, S, K, before, after, rate, size, hop);
	}
	det_overlap_env_free(oe);
	det_refiner_free(ref);
	for (int i = 0; i < nt; i++)
		g_free(h[i]);
	det_profile_clear(&p);
	sim_world_free(w);
	sim_scenario_free(sc);
	return rc ? 1 : 0;
}
