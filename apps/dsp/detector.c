/* detector.c — adaptive-floor hysteresis energy detector (see detector.h). */
#include "apps/dsp/detector.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

struct dsp_detector {
	dsp_det_params p;
	int size, hop;
	double alpha;        /* floor update weight per frame */
	int64_t warm_frames; /* frames of warmup */
	int64_t nframes;     /* frames fed */
	int64_t last_first;  /* previous frame's start */
	double floor;        /* F, squared sample units */
	double on, off;      /* thresholds as power ratios */
	/* call in progress */
	int busy, confirmed;
	int64_t c_first;   /* first frame above off */
	int64_t c_last;    /* last frame above off */
	int64_t run_first; /* first frame of the current unbroken run above off */
	int prev_above;    /* previous frame was above off */
	double c_peak;     /* largest E */
	double c_sum;      /* sum of E over the segment (floor re-learning) */
	int64_t c_n;
	/* idle frames in a row below the floor by off_db (floor too high) */
	int64_t q_n;
	double q_sum;
	uint64_t too_short, too_long, too_quiet;
};

void dsp_det_params_default(dsp_det_params *p)
{
	*p = (dsp_det_params){.rate_hz = 48000, .f_lo_hz = 1000, .f_hi_hz = 4000, .on_db = 8, .off_db = 4, .min_dur_s = 0.020, .max_dur_s = 2.0, .hangover_s = 0.040, .floor_tau_s = 5.0, .warmup_s = 0.5};
}

dsp_detector *dsp_detector_new(const dsp_det_params *p, int size, int hop, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	if (size < 1 || hop < 1 || !(p->rate_hz > 0)) {
		*why = "detector: size, hop and rate must be > 0";
		return NULL;
	}
	if (!(p->off_db >= 0) || !(p->on_db >= p->off_db)) {
		*why = "detector: need 0 <= off_db <= on_db";
		return NULL;
	}
	if (!(p->min_dur_s >= 0) || !(p->max_dur_s > p->min_dur_s) || !(p->hangover_s >= 0) ||
	    !(p->floor_tau_s > 0) || !(p->warmup_s >= 0)) {
		*why = "detector: need 0 <= min_dur < max_dur, hangover and warmup >= 0, floor_tau > 0";
		return NULL;
	}
	dsp_detector *d = calloc(1, sizeof *d);
	if (!d) {
		*why = "detector: out of memory";
		return NULL;
	}
	d->p = *p;
	d->size = size;
	d->hop = hop;
	d->alpha = 1.0 - exp(-hop / (p->floor_tau_s * p->rate_hz));
	d->warm_frames = (int64_t)ceil(p->warmup_s * p->rate_hz / hop);
	if (d->warm_frames < 1)
		d->warm_frames = 1;
	d->on = pow(10, p->on_db / 10);
	d->off = pow(10, p->off_db / 10);
	d->last_first = INT64_MIN;
	return d;
}

void dsp_detector_free(dsp_detector *d)
{
	free(d);
}

double dsp_detector_floor(const dsp_detector *d)
{
	return d->floor;
}

int dsp_detector_busy(const dsp_detector *d)
{
	return d->busy;
}

void dsp_detector_rejected(const dsp_detector *d, uint64_t *too_short, uint64_t *too_long)
{
	*too_short = d->too_short;
	*too_long = d->too_long;
}

uint64_t dsp_detector_relearned_low(const dsp_detector *d)
{
	return d->too_quiet;
}

/* Close the segment in progress; returns 1 with the call in *ev if it is one. */
static int finish(dsp_detector *d, dsp_event *ev)
{
	d->busy = 0;
	int64_t onset = d->c_first + d->size / 2, end = d->c_last + d->size / 2;
	double dur = (double)(end - onset + d->hop) / d->p.rate_hz;
	if (!d->confirmed)
		return 0;
	if (dur < d->p.min_dur_s) {
		d->too_short++;
		return 0;
	}
	double snr = d->c_peak > d->floor ? 10 * log10((d->c_peak - d->floor) / d->floor) : -INFINITY;
	*ev = (dsp_event){.onset = onset, .end = end + d->hop, .duration_s = dur, .peak_snr_db = snr, .floor = d->floor, .f_lo_hz = d->p.f_lo_hz, .f_hi_hz = d->p.f_hi_hz};
	return 1;
}

int dsp_detector_feed(dsp_detector *d, int64_t first, double E, dsp_event *ev)
{
	if (first <= d->last_first || !(E >= 0) || !isfinite(E))
		return -EINVAL;
	d->last_first = first;
	d->nframes++;
	if (d->nframes <= d->warm_frames) {
		/* running mean: the first estimate of the background */
		d->floor += (E - d->floor) / (double)d->nframes;
		return 0;
	}
	double F = d->floor > 0 ? d->floor : 1e-30;
	int above = E > F * d->off;
	if (!d->busy) {
		if (!above) {
			d->floor += d->alpha * (E - d->floor);
			/* Too quiet: band power off_db *below* the floor for a whole
			 * warm-up's worth of frames cannot be noise measured against
			 * a right floor (a loud call in the warm-up, a background
			 * that fell): re-learn the floor from those frames instead of
			 * waiting floor_tau_s per e-fold while calls go unheard. */
			if (E * d->off < F) {
				d->q_sum += E;
				if (++d->q_n >= d->warm_frames) {
					d->floor = d->q_sum / (double)d->q_n;
					d->too_quiet++;
					d->q_n = 0;
					d->q_sum = 0;
				}
			} else {
				d->q_n = 0;
				d->q_sum = 0;
			}
			return 0;
		}
		d->q_n = 0;
		d->q_sum = 0;
		d->busy = 1;
		d->confirmed = 0;
		d->c_first = d->c_last = first;
		d->prev_above = 0;
		d->c_peak = E;
		d->c_sum = 0;
		d->c_n = 0;
	}
	d->c_sum += E;
	d->c_n++;
	if (above) {
		if (!d->prev_above)
			d->run_first = first;
		d->c_last = first;
		if (E > d->c_peak)
			d->c_peak = E;
		if (E > F * d->on && !d->confirmed) {
			/* The call starts with the unbroken run that confirmed it; a
			 * noise blip bridged by the hangover before it is not the onset. */
			d->confirmed = 1;
			d->c_first = d->run_first;
		}
	}
	d->prev_above = above;
	if ((double)(first - d->c_first) > d->p.max_dur_s * d->p.rate_hz) {
		/* Too long: a new background, not a call.  Re-learn the floor. */
		d->too_long += d->confirmed;
		d->busy = 0;
		d->floor = d->c_sum / (double)d->c_n;
		return 0;
	}
	if (!above && (double)(first - d->c_last) >= d->p.hangover_s * d->p.rate_hz)
		return finish(d, ev);
	return 0;
}

int dsp_detector_flush(dsp_detector *d, dsp_event *ev)
{
	if (!d->busy)
		return 0;
	return finish(d, ev);
}
