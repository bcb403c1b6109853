/* offline.c — detect's pipeline on audio in memory (see offline.h). */
#include "apps/detect/offline.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "apps/dsp/band.h"
#include "apps/dsp/detector.h"
#include "apps/dsp/stft.h"
#include "apps/fft/frames.h"

/* The detector's events over x, by fft's frames: into a new array (*nev). */
static dsp_event *events_of(const det_profile *p, const float *x, size_t n, double rate_hz, int size, int hop,
			    size_t *nev)
{
	dsp_stft_params sp;
	dsp_stft_params_default(&sp);
	sp.size = size;
	sp.hop = hop;
	sp.rate_hz = rate_hz;
	dsp_stft *s = dsp_stft_new(&sp, 0, NULL);
	dsp_det_params dp;
	det_profile_detector(p, rate_hz, &dp);
	dsp_detector *det = dsp_detector_new(&dp, size, hop, NULL);
	int nb = size / 2 + 1;
	float *P = malloc((size_t)nb * sizeof *P);
	size_t cap = 64, k = 0;
	dsp_event *ev = malloc(cap * sizeof *ev);
	int ok = s && det && P && ev;
	double ss = 0;
	if (ok) {
		const float *w = dsp_stft_window(s);
		for (int i = 0; i < size; i++)
			ss += (double)w[i] * w[i];
	}
	for (size_t pos = 0; ok && pos < n;) {
		size_t m = n - pos < 4096 ? n - pos : 4096;
		ok = dsp_stft_push(s, x + pos, m) == 0;
		pos += m;
		dsp_frame f;
		while (ok && dsp_stft_next(s, &f) == 1) {
			/* fft's band-power density (apps/fft: one-sided, per bin) */
			for (int b = 0; b < f.nbins; b++) {
				double m2 = (double)f.X[b][0] * f.X[b][0] + (double)f.X[b][1] * f.X[b][1];
				P[b] = (float)((b == 0 || b == f.nbins - 1 ? 1 : 2) * m2 / (size * ss));
			}
			fft_frame_msg fm = {.first = f.first, .size = (uint32_t)size, .hop = (uint32_t)hop, .nbins = (uint32_t)f.nbins, .rate_hz = rate_hz, .P = P};
			if (k == cap) {
				dsp_event *more = realloc(ev, 2 * cap * sizeof *ev);
				if (!more) {
					ok = 0;
					break;
				}
				ev = more;
				cap *= 2;
			}
			if (dsp_detector_feed(det, f.first, fft_frame_band(&fm, p->f_lo_hz, p->f_hi_hz), &ev[k]) == 1)
				k++;
		}
	}
	/* an event still open at the end of the audio (room made for it) */
	if (ok && k == cap) {
		dsp_event *more = realloc(ev, (cap + 1) * sizeof *ev);
		ok = more != NULL;
		if (more)
			ev = more;
	}
	if (ok && dsp_detector_flush(det, &ev[k]) == 1)
		k++;
	dsp_detector_free(det);
	dsp_stft_free(s);
	free(P);
	if (!ok) {
		free(ev);
		return NULL;
	}
	*nev = k;
	return ev;
}

int det_offline_run(const det_profile *p, det_refiner *ref, const det_overlap_env *oe, const float *x, size_t n,
		    double rate_hz, int size, int hop, det_found *out, int max)
{
	if (size < 16 || hop < 1 || hop > size || !(rate_hz > 0))
		return -EINVAL;
	size_t nev = 0;
	dsp_event *ev = events_of(p, x, n, rate_hz, size, hop, &nev);
	if (!ev)
		return -ENOMEM;
	int got = 0, rc = 0;
	for (size_t e = 0; e < nev && got < max && !rc; e++) {
		/* The clip detect fetches and its lag windows (main.c on_call). */
		int pre = (int)ceil(p->pre_ms * 1e-3 * rate_hz);
		pre = pre < 64 ? 64 : pre;
		int64_t first = ev[e].onset - size - pre;
		int lag_lo = pre / 2, lag_hi = size * 3 / 2 + pre;
		int lag_all = (int)(ev[e].end - first) - (int)(p->min_dur_s * rate_hz);
		lag_all = lag_all < lag_hi ? lag_hi : lag_all;
		size_t cn = (size_t)lag_all + det_refiner_max_len(ref) + (size_t)pre;
		float *clip = calloc(cn, sizeof *clip);
		if (!clip) {
			rc = -ENOMEM;
			break;
		}
		for (size_t i = 0; i < cn; i++)
			if (first + (int64_t)i >= 0 && first + (int64_t)i < (int64_t)n)
				clip[i] = x[first + (int64_t)i];
		det_refine_result found[DET_REFINE_MAX + 1], env[DET_REFINE_MAX];
		const char *why;
		size_t noise_hi = (size_t)(size / 2 + pre - hop);
		if (dsp_band_pass(clip, cn, rate_hz, p->f_lo_hz, p->f_hi_hz) < 0) {
			rc = -ENOMEM;
		} else if (det_refine_clip(ref, clip, cn, lag_lo, lag_hi, noise_hi, (size_t)size, p->f_lo_hz, p->f_hi_hz,
					   p->min_enr_db, &found[0], NULL, &why) == 0) {
			out[got++] = (det_found){ev[e].onset, ev[e].end, (double)first + found[0].r.tau,
						 found[0].r.se, found[0].template_id, DET_FOUND_FIRST,
						 found[0].r.enr_db, found[0].r.explained};
			int nm = det_refine_overlaps(ref, clip, cn, lag_lo, lag_all, &found[0], p->overlap_enr_db,
						     p->overlap_explained, 0.002 * rate_hz, found + 1, DET_REFINE_MAX);
			int nv = oe && nm < DET_REFINE_MAX
					 ? det_overlap_env_find(oe, clip, cn, noise_hi, lag_lo, lag_all, (size_t)(ev[e].end - first),
								found, nm + 1, DET_OVERLAP_ENV_SEP_S * rate_hz, env, DET_REFINE_MAX - nm)
					 : 0;
			if (nv < 0)
				rc = nv;
			for (int i = 1; i <= nm + (nv > 0 ? nv : 0) && got < max; i++) {
				const det_refine_result *r = i <= nm ? &found[i] : &env[i - nm - 1];
				out[got++] = (det_found){ev[e].onset,
							 ev[e].end,
							 (double)first + r->r.tau,
							 r->r.se,
							 r->template_id,
							 i <= nm ? DET_FOUND_OVERLAP : DET_FOUND_ENVELOPE,
							 r->r.enr_db,
							 r->r.explained};
			}
		} else {
			out[got++] = (det_found){ev[e].onset, ev[e].end, (double)ev[e].onset, size / sqrt(12.0), 0,
						 DET_FOUND_COARSE, 0, 0};
		}
		free(clip);
	}
	free(ev);
	return rc < 0 ? rc : got;
}
