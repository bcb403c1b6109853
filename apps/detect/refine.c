/* refine.c — best-of-templates onset refinement (see refine.h). */
#include "apps/detect/refine.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "apps/detect/classify.h"
#include "apps/dsp/synth.h"
#include "apps/dsp/wave.h"

/* The best match by ENR decides which template a call is while some
 * template's match explains at least this fraction of the energy under it;
 * below, the envelope's shape does, when its best correlation reaches
 * DET_CLASSIFY_MIN_SCORE and beats the ENR's choice's by
 * DET_CLASSIFY_MARGIN.  An exact call explains SNR / (1 + SNR) of it
 * alone (0.5 at 0 dB); varied pulse trains explain under 0.1 (85 %),
 * under 0.28 (95 %, mostly chirps, which the ENR names right anyway).  A
 * call under another, louder one explains little too, and the envelope
 * of the two blurs: in bench/field's exact row a pulse train 54 ms before
 * a louder chirp was named the chirp at three nodes by envelopes
 * correlating about 0.66 (the ENR had named it right, and the call was
 * lost) until the rest of the clip was asked too (the chirp there
 * explains much of its own span); with that, 0.5 names no exact call
 * wrong there, and a varied pulse train whose parameters vary apart (the
 * simulator's pulse count, length and interval each) correlates only
 * 0.52 with its template's best scale (variation row, 41.6 s). */
#define DET_CLASSIFY_EXPLAINED 0.2
#define DET_CLASSIFY_MIN_SCORE 0.5
#define DET_CLASSIFY_MARGIN 0.1
#define DET_CLASSIFY_SIGMAS 2.5 /* the classifier's scales span this many of the stated variation */
#define DET_CLASSIFY_LATER 2.0  /* a later match explains this many times its template's in the window */

/* An overlapping call's match must explain both halves of its template
 * alike: the smaller amplitude at least this fraction of the larger
 * (det_refine_halves).  A call that starts after the event, its first
 * pulses at the clip's end, matched 5 pulses early explains only its
 * template's second half (0.002-0.003 in tests/test_detect; the chaos
 * soak's "ghost" on node 3); true overlaps 0.92-1.0. */
#define DET_OVERLAP_HALVES 0.5

/* How far a template's edge may move between 30 and 10 dB for it to be
 * trusted, s. */
#define DET_EDGE_SPREAD_S 1e-3

/* Echoes come later: how far before a template's largest correlation
 * peak an earlier path of the call is looked for (onset.h
 * dsp_onset_set_first_arrival), s, for templates that resemble themselves
 * nowhere in that stretch (resembles_itself).  A room's first reflections
 * trail the direct sound by up to tens of ms (bench/field's aviary:
 * 3-12 ms). */
#define DET_FIRST_ARRIVAL_S 0.030

/* How far below the best match anywhere the best near the edge may be, dB
 * (the fitted amplitudes compared: one template, one noise). */
#define DET_EDGE_ENR_DB 10.0

struct det_refiner {
	int n;
	double bias[DET_REFINE_MAX];        /* onset bias under the stated variation, samples */
	double rate_shift[DET_REFINE_MAX];  /* onset shift per unit of stretch, samples */
	double edge[DET_REFINE_MAX];        /* the template's leading edge after its start, samples */
	double edge_spread[DET_REFINE_MAX]; /* … its move between 30 and 10 dB, samples */
	int edge_ok[DET_REFINE_MAX];        /* the edge is where the call starts at any SNR */
	int have_edge;                      /* det_refiner_set_band done */
	double rate_hz;                     /* … at this rate */
	dsp_onset *o[DET_REFINE_MAX];
	size_t m[DET_REFINE_MAX];
	float *h[DET_REFINE_MAX];  /* the templates, for subtraction */
	double eh[DET_REFINE_MAX]; /* their energies, sum h^2 */
	det_classifier *cls;       /* which template a call none fits is (classify.h; det_refiner_set_band) */
	double f_lo_hz, f_hi_hz;   /* its band (det_refiner_set_band) */
	double variation;          /* det_refiner_set_variation's: widens the classifier's scales */
	int classified;            /* det_refine's choices the classifier made */
	int halves_chosen;         /* det_refine's choices made for a match that explains both halves */
};

static int stretch_bias(det_refiner *r, int t, double stretch, double *bias);
static int new_classifier(det_refiner *r);

/* The stretch det_refiner_rate_shift differentiates over, about a card's
 * own rate error: the shift is linear there (at 1e-3 the fine structure
 * of the correlation already bends it: a pulse train's came out 10-15 %
 * off, the chirp's 5x), and the symmetric difference cancels the
 * interpolation of the stretched copy (tests/test_detect: +-40 ppm undone
 * to 0.01 us). */
#define RATE_SHIFT_STEP 1e-4

det_refiner *det_refiner_new(float *const *h, const size_t *m, int n, const char **why)
{
	if (n < 1 || n > DET_REFINE_MAX) {
		*why = "between 1 and DET_REFINE_MAX templates are needed";
		return NULL;
	}
	det_refiner *r = calloc(1, sizeof *r);
	if (!r) {
		*why = "out of memory";
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		r->o[i] = dsp_onset_new(h[i], m[i], why);
		if (!r->o[i]) {
			det_refiner_free(r);
			return NULL;
		}
		r->m[i] = m[i];
		r->h[i] = malloc(m[i] * sizeof(float));
		if (!r->h[i]) {
			*why = "out of memory";
			r->n = i + 1;
			det_refiner_free(r);
			return NULL;
		}
		memcpy(r->h[i], h[i], m[i] * sizeof(float));
		for (size_t k = 0; k < m[i]; k++)
			r->eh[i] += (double)h[i][k] * h[i][k];
		r->n = i + 1;
		double lo, hi;
		if (stretch_bias(r, i, 1 - RATE_SHIFT_STEP, &lo) == 0 && stretch_bias(r, i, 1 + RATE_SHIFT_STEP, &hi) == 0)
			r->rate_shift[i] = (hi - lo) / (2 * RATE_SHIFT_STEP);
	}
	return r;
}

double det_refiner_rate_shift(const det_refiner *r, int t)
{
	return t >= 1 && t <= r->n ? r->rate_shift[t - 1] : 0;
}

void det_refiner_free(det_refiner *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++) {
		dsp_onset_free(r->o[i]);
		free(r->h[i]);
	}
	det_classifier_free(r->cls);
	free(r);
}

/* The onset of template t found in itself stretched about its start by
 * `stretch` (y(k) = h(k / stretch)), less where it starts: samples. */
static int stretch_bias(det_refiner *r, int t, double stretch, double *bias)
{
	size_t m = r->m[t], pad = m / 2 + 64, my = (size_t)ceil((double)m * stretch) + 1, n = my + 2 * pad;
	float *x = calloc(n, sizeof *x);
	if (!x)
		return -ENOMEM;
	dsp_wave *w = dsp_wave_from_samples(r->h[t], m, 1.0, 1.0);
	for (size_t k = 0; k < my; k++)
		x[pad + k] = (float)dsp_wave_eval(w, (double)k / stretch);
	dsp_wave_free(w);
	dsp_onset_result res;
	const char *why;
	int rc = dsp_onset_refine(r->o[t], x, n, 0, (int)(n - m), &res, &why);
	free(x);
	if (rc < 0)
		return rc;
	*bias = res.tau - (double)pad;
	return 0;
}

int det_refiner_set_variation(det_refiner *r, double variation)
{
	if (!(variation >= 0 && variation <= 0.5))
		return -EINVAL;
	/* The RMS over calls spread evenly across +-variation (16 stretches,
	 * the template itself not among them). */
	enum { STEPS = 8 };
	for (int t = 0; t < r->n; t++) {
		double s2 = 0;
		for (int k = -STEPS; k <= STEPS && variation > 0; k++) {
			double b = 0;
			if (k == 0)
				continue;
			int rc = stretch_bias(r, t, 1 + variation * k / STEPS, &b);
			if (rc == -ENOMEM)
				return rc;
			/* no match at all: the call could be anywhere in the template */
			b = rc < 0 ? (double)r->m[t] / 2 : b;
			s2 += b * b;
		}
		r->bias[t] = sqrt(s2 / (2 * STEPS));
	}
	r->variation = variation;
	return new_classifier(r);
}

double det_refiner_variation_bias(const det_refiner *r, int t)
{
	return t >= 1 && t <= r->n ? r->bias[t - 1] : 0;
}

/* The stated variation's bias joins the onset's error. */
static void add_bias(const det_refiner *r, int t, dsp_onset_result *res)
{
	res->se = hypot(res->se, r->bias[t]);
}

/* Where template t's leading edge lies after its start, samples, under a
 * deterministic white noise snr_db below the template's RMS (the edge
 * finder needs a floor to rise from; a recorded template's own background,
 * cut out abruptly, must stay under it as under the field's noise). */
static int template_edge(const det_refiner *r, int t, double rate_hz, double f_lo_hz, double f_hi_hz, double snr_db,
			 double *offset)
{
	size_t m = r->m[t], pad = 1024, n = m + 2 * pad;
	float *x = calloc(n, sizeof *x);
	if (!x)
		return -ENOMEM;
	double sd = sqrt(r->eh[t] / (double)m) * pow(10, -snr_db / 20);
	uint32_t s = 12345u + (uint32_t)t;
	for (size_t k = 0; k < n; k++) {
		s = s * 1664525u + 1013904223u;
		x[k] = (float)(sd * ((double)(s >> 8) / 16777216.0 - 0.5) * sqrt(12.0));
	}
	for (size_t k = 0; k < m; k++)
		x[pad + k] += r->h[t][k];
	dsp_edge_params ep = {.rate_hz = rate_hz, .f_lo_hz = f_lo_hz, .f_hi_hz = f_hi_hz, .noise_lo = 0, .noise_hi = pad / 2, .search_lo = pad / 2, .search_hi = pad + m, .rise_s = DET_EDGE_RISE_S, .k_sd = DET_EDGE_K_SD};
	dsp_edge_result er;
	const char *why;
	int rc = dsp_edge_find(x, n, &ep, &er, &why);
	free(x);
	if (rc < 0)
		return rc;
	*offset = er.t - (double)pad;
	return 0;
}

/* Whether template t resembles itself (det_refiner_self_similarity at
 * least DSP_ONSET_FIRST_MIN) at some shift past its main lobe up to
 * `lead` samples: a pulse train a pulse off, a narrow-band call a few
 * carrier cycles off.  Such a template's earlier peaks are other
 * alignments, and its first path cannot be told from them (bench/field's
 * room: the 2.6 kHz train's first path taken 1.75 carrier cycles early,
 * its error 56 ms from the pulses before it); a chirp resembles itself
 * nowhere but at 0. */
static int resembles_itself(const det_refiner *r, int t, double lead)
{
	long ms = lround(1e-3 * r->rate_hz);
	int dropped = 0;
	for (long s = ms; s <= lround(lead); s += ms) {
		double sim = det_refiner_self_similarity(r, t, (double)s);
		if (sim < DSP_ONSET_FIRST_MIN)
			dropped = 1;
		else if (dropped)
			return 1;
	}
	return !dropped;
}

/* The classifier over the band set, its scales wide enough for the stated
 * variation: a call's interval drawn DET_CLASSIFY_SIGMAS relative s.d.
 * from its template's is still its template stretched (bench/field's
 * variation row, 9.91 s: a 2.6 kHz train's pulses 9 % closer, beyond the
 * fixed 6 %, scored 0.23 against its template's envelope and was named
 * the 1.8 kHz train at four nodes of six).  None before the band is set;
 * 0 or -ENOMEM. */
static int new_classifier(det_refiner *r)
{
	det_classifier_free(r->cls);
	r->cls = NULL;
	if (!r->have_edge || r->n < 2)
		return 0;
	const char *why;
	r->cls = det_classifier_new(r->h, r->m, r->n, r->rate_hz, r->f_lo_hz, r->f_hi_hz,
				    fmin(0.5, DET_CLASSIFY_SIGMAS * r->variation), &why);
	return r->cls ? 0 : -ENOMEM;
}

int det_refiner_set_band(det_refiner *r, double rate_hz, double f_lo_hz, double f_hi_hz)
{
	int usable = 0;
	r->rate_hz = rate_hz;
	for (int t = 0; t < r->n; t++)
		if (!resembles_itself(r, t + 1, DET_FIRST_ARRIVAL_S * rate_hz))
			dsp_onset_set_first_arrival(r->o[t], (int)lround(DET_FIRST_ARRIVAL_S * rate_hz));
	for (int t = 0; t < r->n; t++) {
		/* The edge at 30 dB and at 10 dB: a call whose energy rises
		 * slowly or in steps (a weak first syllable) has its edge where
		 * it first clears the noise, which differs between a near node
		 * and a far one; such a template's edge says nothing reliable. */
		double hi = 0, lo = 0;
		int rc = template_edge(r, t, rate_hz, f_lo_hz, f_hi_hz, 30, &hi);
		if (rc == 0)
			rc = template_edge(r, t, rate_hz, f_lo_hz, f_hi_hz, 10, &lo);
		if (rc == -ENOMEM)
			return rc;
		r->edge[t] = hi;
		r->edge_spread[t] = rc == 0 ? fabs(hi - lo) : INFINITY;
		r->edge_ok[t] = rc == 0 && r->edge_spread[t] <= DET_EDGE_SPREAD_S * rate_hz;
		usable += r->edge_ok[t];
	}
	r->have_edge = 1;
	r->rate_hz = rate_hz;
	r->f_lo_hz = f_lo_hz;
	r->f_hi_hz = f_hi_hz;
	if (new_classifier(r) < 0)
		return -ENOMEM;
	return usable ? 0 : -EINVAL;
}

double det_refiner_edge_offset(const det_refiner *r, int t, double *spread, int *usable)
{
	if (spread)
		*spread = t >= 1 && t <= r->n ? r->edge_spread[t - 1] : INFINITY;
	if (usable)
		*usable = t >= 1 && t <= r->n && r->edge_ok[t - 1];
	return t >= 1 && t <= r->n ? r->edge[t - 1] : 0;
}

size_t det_refiner_max_len(const det_refiner *r)
{
	size_t m = 0;
	for (int i = 0; i < r->n; i++)
		if (r->m[i] > m)
			m = r->m[i];
	return m;
}

int det_refine(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, double min_enr_db,
	       det_refine_result *out, const char **why)
{
	int best = -1;
	det_refine_result cur = {0}, each[DET_REFINE_MAX];
	double most = 0; /* the largest share of the energy under it any template's match explains */
	*why = "no template fits in the clip";
	for (int i = 0; i < r->n; i++) {
		each[i].template_id = 0;
		if (r->m[i] > n)
			continue;
		if (dsp_onset_refine(r->o[i], x, n, lag_lo, lag_hi, &cur.r, why) < 0)
			continue;
		add_bias(r, i, &cur.r);
		most = fmax(most, cur.r.explained);
		cur.template_id = i + 1;
		cur.length = r->m[i];
		cur.at_edge = 0;
		each[i] = cur;
		if (best < 0 || cur.r.enr_db > out->r.enr_db) {
			*out = cur;
			best = i;
		}
	}
	if (best < 0)
		return -EDOM;
	/* A match that explains little of what lies under it and only one half
	 * of its template is another sound passing through the template's
	 * band (bench/field's grass row: the 2.6 kHz train's template on a
	 * louder chirp's sweep, 7.6 ms from any call and stated at 3 us,
	 * while the 1.8 kHz train under the chirp was the call): the loudest
	 * match of a template that explains both halves alike is the call. */
	if (out->r.explained < DET_CLASSIFY_EXPLAINED && det_refine_halves(r, x, n, out) < DET_OVERLAP_HALVES) {
		int alt = -1;
		for (int i = 0; i < r->n; i++)
			if (i != best && each[i].template_id && det_refine_halves(r, x, n, &each[i]) >= DET_OVERLAP_HALVES &&
			    (alt < 0 || each[i].r.enr_db > each[alt].r.enr_db))
				alt = i;
		if (alt >= 0) {
			*out = each[alt];
			r->halves_chosen++;
		}
	}
	/* No template's match explains much of what lies under it (none of
	 * them is a call here: a call a per cent off a pulse train keeps none
	 * of its coherence): which template the call is, the envelope's shape
	 * says — unless one explains much of its span later in the clip (a
	 * louder call overlapping this one, starting beyond the window: the
	 * envelope of the two is not this call's; the ENR names it).  A later
	 * match counts only where it explains at least twice what the same
	 * template's match in the window does: a varied pulse train matches
	 * its own template a few pulses into itself about as well as at its
	 * start (bench/field's variation row, 57.82 s: 0.22-0.23 later against
	 * 0.18 in the window, and the call named the chirp at three nodes of
	 * six, which split its group). */
	for (int i = 0; r->cls && most < DET_CLASSIFY_EXPLAINED && i < r->n; i++) {
		dsp_onset_result o;
		const char *w;
		if (r->m[i] <= n && lag_hi < (int)(n - r->m[i]) &&
		    dsp_onset_refine(r->o[i], x, n, lag_hi, (int)(n - r->m[i]), &o, &w) == 0 &&
		    (!each[i].template_id || o.explained >= DET_CLASSIFY_LATER * each[i].r.explained))
			most = fmax(most, o.explained);
	}
	if (r->cls && most < DET_CLASSIFY_EXPLAINED) {
		double score[DET_REFINE_MAX];
		int t = det_classify(r->cls, x, n, lag_lo, lag_hi, score);
		g_debug("refine: no template explains a fifth (best %.2f, template %d): envelope scores %.2f %.2f %.2f, best %d",
			most, out->template_id, score[0], r->n > 1 ? score[1] : NAN, r->n > 2 ? score[2] : NAN, t);
		if (t > 0 && t != out->template_id && score[t - 1] >= DET_CLASSIFY_MIN_SCORE &&
		    score[t - 1] >= score[out->template_id - 1] + DET_CLASSIFY_MARGIN &&
		    dsp_onset_refine(r->o[t - 1], x, n, lag_lo, lag_hi, &cur.r, why) == 0) {
			add_bias(r, t - 1, &cur.r);
			cur.template_id = t;
			cur.length = r->m[t - 1];
			cur.at_edge = 0;
			*out = cur;
			r->classified++;
		}
	}
	if (out->r.enr_db < min_enr_db) {
		*why = "best template match below the ENR threshold";
		return -EDOM;
	}
	return 0;
}

int det_refiner_halves_chosen(const det_refiner *r)
{
	return r->halves_chosen;
}

int det_refiner_classified(const det_refiner *r)
{
	return r->classified;
}

int det_refine_at_edge(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, const dsp_edge_result *edge,
		       double min_enr_db, det_refine_result *out, const char **why)
{
	/* Which template: the best match anywhere (the template decides
	 * whether and what); where it starts: near the edge. */
	det_refine_result any;
	int rc = det_refine(r, x, n, lag_lo, lag_hi, -INFINITY, &any, why);
	if (rc < 0)
		return rc;
	any.at_edge = 0;
	*out = any;
	int i = any.template_id - 1;
	det_refine_result cur = any;
	if (r->have_edge && edge && r->edge_ok[i]) {
		double c = edge->t - r->edge[i];
		double w = 4 * edge->se + 0.25 * fabs(r->edge[i]) + 5e-4 * r->rate_hz;
		int lo = (int)floor(c - w), hi = (int)ceil(c + w);
		if (lo < lag_lo)
			lo = lag_lo;
		if (hi > lag_hi)
			hi = lag_hi;
		/* The matched filter found a path of the call before the edge
		 * (the best match anywhere was taken at an earlier path than its
		 * largest peak, and that path lies before the window): the edge
		 * rose on the echoes, the direct sound too weak for its threshold
		 * (bench/field's room: the edge 7.6 ms late at a far node, the
		 * matched filter's first path at the arrival).  Echoes come
		 * later: that path is the start. */
		if (any.r.lead > 0 && any.r.tau < lo)
			hi = lo;
		if (hi > lo && dsp_onset_refine(r->o[i], x, n, lo, hi, &cur.r, why) == 0 &&
		    cur.r.amp * cur.r.amp >= any.r.amp * any.r.amp * pow(10, -DET_EDGE_ENR_DB / 10)) {
			add_bias(r, i, &cur.r);
			/* Pinned to the window's end or climbed out of it: the
			 * template's best alignment lies beyond (a call a few per
			 * cent off it fits better shifted); its peak says nothing
			 * of the start, the edge does: the start the edge gives,
			 * uncertain by half the window. */
			if (fabs(cur.r.tau - c) > w - 1) {
				cur.r.tau = c;
				cur.r.se = 0.5 * w;
				cur.r.alternatives = 0;
				cur.r.n_alt = 0;
			}
			/* A call that is not this template has its own edge
			 * offset, anywhere from 0 to about twice the template's:
			 * the call's share the template leaves unexplained (its
			 * misfit beyond what the noise alone leaves over m
			 * samples, 3 s.d. of a variance so measured) times the
			 * offset joins the error.  An exact call keeps its
			 * bound. */
			double m_i = (double)r->m[i], v = cur.r.noise_sd * cur.r.noise_sd;
			double fit = cur.r.amp * cur.r.amp * r->eh[i],
			       mis = fmax(0, cur.r.misfit_sd * cur.r.misfit_sd - 3 * v * sqrt(2 / m_i)) * m_i;
			double unexplained = fit + mis > 0 ? mis / (fit + mis) : 1;
			/* … unless the match was taken at an earlier path than its
			 * largest peak (onset.h dsp_onset_set_first_arrival): the
			 * call is the template there, its echoes the misfit, and
			 * the start is that path's peak, its error stated with it. */
			if (!(cur.r.lead > 0))
				cur.r.se = sqrt(cur.r.se * cur.r.se + unexplained * r->edge[i] * r->edge[i]);
			cur.at_edge = 1;
			cur.explained = 0;
			*out = cur;
		}
	}
	if (out->r.enr_db < min_enr_db) {
		*why = "best template match below the ENR threshold";
		return -EDOM;
	}
	return 0;
}

int det_refine_clip(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, size_t noise_hi, size_t size,
		    double f_lo_hz, double f_hi_hz, double min_enr_db, det_refine_result *out, int *edge_found,
		    const char **why)
{
	dsp_edge_result edge;
	int found = 0;
	if (r->have_edge && noise_hi < n && lag_hi > 0) {
		size_t hi = (size_t)lag_hi + size / 4;
		dsp_edge_params ep = {.rate_hz = r->rate_hz,
				      .f_lo_hz = f_lo_hz,
				      .f_hi_hz = f_hi_hz,
				      .noise_lo = 0,
				      .noise_hi = noise_hi,
				      .search_lo = noise_hi,
				      .search_hi = hi < n ? hi : n,
				      .rise_s = DET_EDGE_RISE_S,
				      .k_sd = DET_EDGE_K_SD};
		const char *ewhy;
		found = ep.search_hi > ep.search_lo && dsp_edge_find(x, n, &ep, &edge, &ewhy) == 0;
	}
	if (edge_found)
		*edge_found = found;
	if (found)
		return det_refine_at_edge(r, x, n, lag_lo, lag_hi, &edge, min_enr_db, out, why);
	int rc = det_refine(r, x, n, lag_lo, lag_hi, min_enr_db, out, why);
	out->at_edge = 0;
	return rc;
}

double det_refine_halves(const det_refiner *r, const float *x, size_t n, const det_refine_result *res)
{
	int t = res->template_id - 1;
	if (t < 0 || t >= r->n)
		return 0;
	/* each half's amplitude by least squares, the halves split where
	 * half the template's energy lies before */
	double a[2] = {0, 0}, e[2] = {0, 0}, c = 0;
	int64_t k0 = (int64_t)llround(res->r.tau);
	for (size_t j = 0; j < r->m[t]; j++) {
		double h = r->h[t][j];
		int side = c >= 0.5 * r->eh[t];
		c += h * h;
		e[side] += h * h;
		int64_t k = k0 + (int64_t)j;
		if (k >= 0 && k < (int64_t)n)
			a[side] += h * x[k];
	}
	if (!(e[0] > 0) || !(e[1] > 0))
		return 1;
	a[0] /= e[0];
	a[1] /= e[1];
	double hi = fmax(a[0], a[1]), lo = fmin(a[0], a[1]);
	return hi > 0 ? fmax(0.0, lo / hi) : 0;
}

int det_refine_all(det_refiner *r, const float *x, size_t n, int lag_lo, int lag_hi, det_refine_result *all)
{
	const char *why;
	for (int i = 0; i < r->n; i++) {
		all[i].template_id = 0;
		all[i].length = r->m[i];
		all[i].explained = 0;
		all[i].halves = 0;
		if (r->m[i] <= n && dsp_onset_refine(r->o[i], x, n, lag_lo, lag_hi, &all[i].r, &why) == 0) {
			all[i].template_id = i + 1;
			add_bias(r, i, &all[i].r);
			all[i].explained = all[i].r.explained; /* the onset's own misfit accounting */
			all[i].halves = det_refine_halves(r, x, n, &all[i]);
		}
	}
	return r->n;
}

int det_refine_subtract(det_refiner *r, float *x, size_t n, const det_refine_result *res)
{
	int t = res->template_id - 1;
	if (t < 0 || t >= r->n)
		return -EINVAL;
	/* The template with margins, delayed by the fractional part of tau
	 * (circular phase shift: the margins keep it from wrapping). */
	size_t m = r->m[t], pad = 16, len = m + 2 * pad;
	float *y = calloc(len, sizeof(float));
	if (!y)
		return -ENOMEM;
	memcpy(y + pad, r->h[t], m * sizeof(float));
	double base = floor(res->r.tau);
	if (dsp_delay_exact(y, len, res->r.tau - base, y) < 0) {
		free(y);
		return -ENOMEM;
	}
	for (size_t i = 0; i < len; i++) {
		int64_t k = (int64_t)base - (int64_t)pad + (int64_t)i;
		if (k >= 0 && k < (int64_t)n)
			x[k] -= (float)(res->r.amp * y[i]);
	}
	/* What is left of the call is mostly first order: a slightly wrong
	 * amplitude and shift, and the sound card's rate error (tens of ppm
	 * stretch the call by a fraction of a sample over its length, which at
	 * 60 dB ENR leaves a residual a template could match at 40 dB).  Fit the
	 * residual on y, y' and j*y' (amplitude, shift, stretch) by least
	 * squares and subtract that too. */
	double G[3][3] = {{0}}, v[3] = {0};
	for (size_t i = 1; i + 1 < len; i++) {
		int64_t k = (int64_t)base - (int64_t)pad + (int64_t)i;
		if (k < 0 || k >= (int64_t)n)
			continue;
		double d = 0.5 * ((double)y[i + 1] - y[i - 1]), b[3] = {y[i], d, d * ((double)i - pad)};
		for (int a = 0; a < 3; a++) {
			v[a] += b[a] * x[k];
			for (int c = 0; c < 3; c++)
				G[a][c] += b[a] * b[c];
		}
	}
	/* 3x3 solve by Cramer's rule (well conditioned: the bases are nearly
	 * orthogonal for an oscillating call) */
	double det = G[0][0] * (G[1][1] * G[2][2] - G[1][2] * G[2][1]) - G[0][1] * (G[1][0] * G[2][2] - G[1][2] * G[2][0]) +
		     G[0][2] * (G[1][0] * G[2][1] - G[1][1] * G[2][0]);
	if (fabs(det) > 0) {
		double cf[3];
		for (int c = 0; c < 3; c++) {
			double M[3][3];
			memcpy(M, G, sizeof M);
			for (int a = 0; a < 3; a++)
				M[a][c] = v[a];
			cf[c] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
				 M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) /
				det;
		}
		for (size_t i = 1; i + 1 < len; i++) {
			int64_t k = (int64_t)base - (int64_t)pad + (int64_t)i;
			if (k < 0 || k >= (int64_t)n)
				continue;
			double d = 0.5 * ((double)y[i + 1] - y[i - 1]);
			x[k] -= (float)(cf[0] * y[i] + cf[1] * d + cf[2] * d * ((double)i - pad));
		}
	}
	free(y);
	return 0;
}

double det_refiner_self_similarity(const det_refiner *r, int template_id, double shift)
{
	if (template_id < 1 || template_id > r->n || !(r->eh[template_id - 1] > 0))
		return 0;
	const float *h = r->h[template_id - 1];
	long m = (long)r->m[template_id - 1], d = labs(lround(shift));
	long w = (long)ceil(1e-3 * (r->rate_hz > 0 ? r->rate_hz : 16000)); /* (the band not set: 16 kHz) */
	double best = 0;
	for (long e = MAX(d - w, 0); e <= d + w && e < m; e++) {
		double acc = 0;
		for (long i = 0; i + e < m; i++)
			acc += (double)h[i] * h[i + e];
		best = fmax(best, fabs(acc));
	}
	return best / r->eh[template_id - 1];
}

/* Whether a match of template_id at tau is the side of a call of the same
 * template found at tau_found (see DET_OVERLAP_SELF), or within min_sep. */
static int side_of(const det_refiner *r, int template_id, double tau, int found_id, double tau_found, double min_sep)
{
	double d = fabs(tau - tau_found);
	if (d < min_sep)
		return 1;
	return template_id == found_id && det_refiner_self_similarity(r, template_id, d) >= DET_OVERLAP_SELF;
}

int det_refine_overlaps(det_refiner *r, float *x, size_t n, int lag_lo, int lag_hi, const det_refine_result *primary,
			double min_enr_db, double min_explained, double min_sep, det_refine_result *out, int max)
{
	det_refine_result cur = *primary, all[DET_REFINE_MAX];
	int found = 0;
	while (found < max && det_refine_subtract(r, x, n, &cur) == 0) {
		int nt = det_refine_all(r, x, n, lag_lo, lag_hi, all), best = -1;
		for (int i = 0; i < nt; i++) {
			if (!all[i].template_id || all[i].r.enr_db < min_enr_db || all[i].explained < min_explained ||
			    all[i].halves < DET_OVERLAP_HALVES)
				continue;
			/* Not where the same template resembles itself shifted from a
			 * call found (DET_OVERLAP_SELF). */
			int near = side_of(r, all[i].template_id, all[i].r.tau, primary->template_id, primary->r.tau, min_sep);
			for (int k = 0; k < found; k++)
				near |= side_of(r, all[i].template_id, all[i].r.tau, out[k].template_id, out[k].r.tau, min_sep);
			if (!near && (best < 0 || all[i].r.enr_db > all[best].r.enr_db))
				best = i;
		}
		if (best < 0)
			break;
		cur = out[found++] = all[best];
	}
	return found;
}

int det_refine_alternatives(const det_refiner *r, const det_refine_result *res, double *off, int max)
{
	double sep = 1e-3 * (r->rate_hz > 0 ? r->rate_hz : 16000);
	int k = 0;
	for (int i = 0; i < res->r.n_alt && k < max; i++) {
		double d = res->r.alt_tau[i] - res->r.tau;
		int near = fabs(d) <= sep;
		for (int j = 0; j < k && !near; j++)
			near = fabs(d - off[j]) <= sep;
		if (!near)
			off[k++] = d;
	}
	return k;
}
