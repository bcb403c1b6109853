/* numbering.c — frame numbering across overruns and restarts (see
 * numbering.h). */
#include "audiod/numbering.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_sf_erf.h>

#include "libsync/fit.h"

struct numbering {
	numbering_params p;
	sync_fit *fit;          /* recent (cpu, frame) upper envelope, for overrun accounting */
	int64_t abs_next;       /* absolute index of the next frame written */
	int have_hw_base;       /* hw_base valid for the current run */
	int hw0_known;          /* every run starts at hw_ptr hw0 (numbering_set_hw_start) */
	uint64_t hw0;           /* ... that hw_ptr */
	int64_t hw_base;        /* unwrapped hw_ptr of the run's first frame */
	int64_t abs_base;       /* absolute index of the run's first frame */
	uint64_t last_hw;       /* last raw hw_ptr */
	int64_t hw_unwrapped;   /* last hw_ptr, unwrapped */
	int restarting;         /* waiting for the first timestamps of the new run */
	int continuing;         /* the first run continues an earlier run's numbering */
	int64_t restart_cpu_ns; /* node cpu time when the run restarted, ns */
	int restart_wakeups;    /* wakeups since the restart */
	/* Interrupt records of the restarted run held back until its start is
	 * known: each one's latency makes the pre-overrun fit predict a start
	 * late by latency * rate, so the start is the least of their
	 * predictions (a single record was often 2-5 frames late).  The frames
	 * of the new run read meanwhile wait in the caller's buffer. */
	struct {
		int64_t rel;    /* frames since the run's first frame at the interrupt */
		int64_t cpu_ns; /* node cpu time of the interrupt, ns */
	} pend[NUMBERING_RESTART_RECORDS];
	int npend;
	int restart_need; /* records to hold before settling, <= NUMBERING_RESTART_RECORDS */
	uint64_t hold;    /* frames of the new run held by the caller */
	int have_last;    /* the newest observation, for the plausibility bound */
	int64_t last_frame, last_cpu_ns;
};

/* How far a card's rate can be from nominal (a crystal's tolerance, with
 * room), and what a restart's start may differ from the start the
 * newest observation and the nominal rate give before the fit's prediction
 * is taken for a broken fit rather than the card's drift. */
#define RATE_TOLERANCE 1e-3

numbering *numbering_new(const numbering_params *p, const char **why)
{
	if (!p->rate_hz || !p->period || !p->buffer || !p->boundary) {
		*why = "numbering: rate, period, buffer and boundary must be > 0";
		return NULL;
	}
	sync_fit_params fp;
	sync_fit_params_default(&fp);
	fp.mode = SYNC_FIT_UPPER; /* x = cpu (late by latency), y = frame: frames look early */
	fp.window = 256;
	fp.nominal_slope = p->rate_hz * 1e-9;
	sync_fit *fit = sync_fit_new(&fp, why);
	if (!fit)
		return NULL;
	numbering *n = calloc(1, sizeof *n);
	if (!n) {
		sync_fit_free(fit);
		*why = "numbering: out of memory";
		return NULL;
	}
	n->p = *p;
	n->fit = fit;
	return n;
}

void numbering_free(numbering *n)
{
	if (!n)
		return;
	sync_fit_free(n->fit);
	free(n);
}

int numbering_continue(numbering *n, const int64_t *cpu, const int64_t *frame, int n_pts)
{
	const char *why;
	if (n_pts < 2)
		return -EINVAL;
	sync_fit_reset(n->fit);
	for (int i = 0; i < n_pts; i++)
		if (sync_fit_add(n->fit, cpu[i], frame[i], &why) < 0) {
			sync_fit_reset(n->fit);
			return -EINVAL;
		}
	n->continuing = 1;
	return 0;
}

/* The restart set-up, after an overrun or at the first start of a
 * continued numbering: the run's first frame is unknown until settled. */
static void restart(numbering *n, int64_t now_ns)
{
	uint64_t need = n->p.buffer / n->p.period;
	n->restart_cpu_ns = now_ns;
	n->restarting = 1;
	n->restart_wakeups = 0;
	n->npend = 0;
	n->hold = 0;
	n->restart_need = need < 1 ? 1 : need > NUMBERING_RESTART_RECORDS ? NUMBERING_RESTART_RECORDS
									  : (int)need;
	n->have_hw_base = 0;
}

void numbering_set_hw_start(numbering *n, uint64_t hw0)
{
	n->hw0_known = 1;
	n->hw0 = hw0 % n->p.boundary;
}

void numbering_start(numbering *n, int64_t now_ns)
{
	if (n->continuing)
		restart(n, now_ns);
}

void numbering_overrun(numbering *n, int64_t now_ns)
{
	restart(n, now_ns);
}

int numbering_restarting(const numbering *n)
{
	return n->restarting;
}

int64_t numbering_next(const numbering *n)
{
	return n->abs_next;
}

/* Take one observation into the fit and the output. */
static void add_obs(numbering *n, int64_t frame, int64_t cpu_ns, numbering_out *out)
{
	const char *why;
	out->obs[out->nobs].frame = frame;
	out->obs[out->nobs].cpu_ns = cpu_ns;
	out->nobs++;
	n->have_last = 1;
	n->last_frame = frame;
	n->last_cpu_ns = cpu_ns;
	if (sync_fit_add(n->fit, cpu_ns, frame, &why) < 0) {
		/* cpu_ns time went backwards: only after a source restart. */
		sync_fit_reset(n->fit);
		sync_fit_add(n->fit, cpu_ns, frame, &why);
	}
}

/* The restarted run has its first frame at absolute index `start`; the
 * ring is at abs_next.  Write the difference as a gap, then the hold. */
static void settle(numbering *n, int64_t start, numbering_out *out)
{
	out->settled = 1;
	out->start = start;
	out->gap_from = out->gap_to = n->abs_next;
	if (n->continuing) {
		/* The first run, numbered on from the last one: nothing was
		 * lost here, the ring simply starts at `start`. */
		n->continuing = 0;
		out->continued = 1;
		n->abs_next = start;
	} else if (start > n->abs_next) {
		out->gap_from = n->abs_next;
		out->gap_to = start;
		n->abs_next = start;
	}
	n->abs_base = n->abs_next;
	n->restarting = 0;
	out->flush = n->hold;
	n->abs_next += (int64_t)n->hold;
	n->hold = 0;
}

/* The absolute frame index the pre-overrun fit predicts at cpu time t. */
static int predict_frame(numbering *n, int64_t cpu, int64_t *frame)
{
	sync_conv c;
	const char *why;
	if (sync_fit_solve(n->fit, &c, &why) < 0)
		return -EAGAIN;
	sync_tval f = sync_conv_apply(&c, sync_tval_of(cpu));
	*frame = f.i + (int64_t)llround(f.f);
	return 0;
}

/* The start of the run the newest observation and the nominal rate give
 * for a record rel frames into the run at cpu time t, and how far a card
 * within RATE_TOLERANCE may differ from it (plus a buffer of timestamp
 * latency).  0, or -EAGAIN without an observation. */
static int nominal_start(const numbering *n, int64_t cpu_ns, int64_t rel, int64_t *start, double *tol)
{
	if (!n->have_last || cpu_ns < n->last_cpu_ns)
		return -EAGAIN;
	double frames = (double)(cpu_ns - n->last_cpu_ns) * n->p.rate_hz * 1e-9;
	*start = n->last_frame + (int64_t)llround(frames) - rel;
	*tol = frames * RATE_TOLERANCE + (double)n->p.buffer;
	return 0;
}

/* qsort order of doubles. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The least latency's expected excess over the latencies' floor (frames)
 * among n records whose predictions' median lies `spread` above the least:
 * for exponential excesses of mean theta the k-th least of n is expected
 * at theta (1/n + 1/(n-1) + ... + 1/(n-k+1)), so the least at theta / n and
 * the median (mean of the middle ones for even n) above it by `spread`
 * gives theta.  At least MIN_EXCESS. */
#define MIN_EXCESS 0.02
static double least_excess(int n, double spread)
{
	if (n < 2 || !(spread > 0))
		return MIN_EXCESS;
	double h = 0, lo = 0, hi = 0;
	for (int k = 1; k <= n; k++) {
		h += 1.0 / (n - k + 1);
		if (k == (n + 1) / 2)
			lo = h;
		if (k == n / 2 + 1)
			hi = h;
	}
	double med = n % 2 ? lo : 0.5 * (lo + hi), least = 1.0 / n;
	return fmax(MIN_EXCESS, spread / (med - least) * least);
}

/* Log density at e of the least prediction's excess over the run's true
 * first frame: the least latency (exponential of mean mu, >= 0) plus the
 * fit's error (normal, s.d. sf) — an exponentially modified Gaussian. */
static double log_excess_density(double e, double mu, double sf)
{
	double x = e / sf - sf / mu;
	/* log Phi(x) = log(erfc(-x / sqrt 2) / 2), robust far in the tail */
	return -log(mu) + sf * sf / (2 * mu * mu) - e / mu + gsl_sf_log_erfc(-x / M_SQRT2) - M_LN2;
}

/* The run's first frame (relative to the predictions' base): the whole
 * frame S below or around the least prediction `best` whose excess
 * best - S is likeliest, given the least latency's mean excess mu and the
 * fit's s.e. sf there (at least MIN_FIT_SD: the envelope's own rounding).
 * A fit known to a hundredth of a frame gives floor(best) — the least
 * record is late, never early; one known to a few tenths (a run of a
 * quarter second before an overrun) may put the least prediction below
 * the true frame, where flooring lost a frame at each restart and the
 * next fit, tilted by the step, lost another (test_numbering
 * short_runs_keep_the_index; with the fresh fit below). */
#define MIN_FIT_SD 0.03
static int64_t likeliest_start(double best, double mu, double sf)
{
	sf = fmax(sf, MIN_FIT_SD);
	int64_t s0 = (int64_t)floor(best), pick = s0;
	double top = -INFINITY;
	for (int64_t s = s0 - 2; s <= s0 + 1; s++) {
		double l = log_excess_density(best - (double)s, mu, sf);
		if (l > top) {
			top = l;
			pick = s;
		}
	}
	return pick;
}

/* Settle a restart from the held records of the new run: its first frame is
 * the least start they predict (the record with the least latency), then
 * their observations are taken.  A prediction far below the others (beyond
 * 3.5 robust sigmas of theirs, 4 residual RMS of the fit and a frame under
 * their median) is not a
 * low latency but a record whose time came early for its hw_ptr: on
 * drivers that read the position when ALSA asks (snd-dummy's hrtimer, a
 * DMA position register) hw_ptr is taken after the module's timestamp, and
 * a delay in between makes the record look early.  One such record among
 * eight put the restarted run 34 frames (0.7 ms) before real time on
 * snd-dummy under qemu (issue 14); those are left out of the least. */
static void settle_from_records(numbering *n, numbering_out *out)
{
	sync_conv c;
	const char *why;
	int64_t start = n->abs_next;
	if (sync_fit_solve(n->fit, &c, &why) == 0 && n->npend > 0) {
		double x[NUMBERING_RESTART_RECORDS], sorted[NUMBERING_RESTART_RECORDS], dev[NUMBERING_RESTART_RECORDS];
		int64_t base = INT64_MIN;
		for (int i = 0; i < n->npend; i++) {
			sync_tval f = sync_conv_apply(&c, sync_tval_of(n->pend[i].cpu_ns));
			if (base == INT64_MIN)
				base = f.i - n->pend[i].rel;
			x[i] = (double)(f.i - n->pend[i].rel - base) + f.f;
			sorted[i] = x[i];
		}
		qsort(sorted, (size_t)n->npend, sizeof sorted[0], cmp_double);
		double med = n->npend % 2 ? sorted[n->npend / 2] : (sorted[n->npend / 2 - 1] + sorted[n->npend / 2]) / 2;
		for (int i = 0; i < n->npend; i++)
			dev[i] = fabs(x[i] - med);
		qsort(dev, (size_t)n->npend, sizeof dev[0], cmp_double);
		double mad = n->npend % 2 ? dev[n->npend / 2] : (dev[n->npend / 2 - 1] + dev[n->npend / 2]) / 2;
		/* The latency spread the pre-overrun fit saw (its residual RMS)
		 * bounds how far below the median a true least latency can be:
		 * eight records rarely show their spread in their MAD. */
		double lo = med - fmax(fmax(3.5 * 1.4826 * mad, 4 * c.rms), 1.0);
		double best = INFINITY;
		int ibest = 0;
		for (int i = 0; i < n->npend; i++) {
			if (n->npend >= 3 && x[i] < lo) {
				out->rejected++;
				continue;
			}
			if (x[i] < best) {
				best = x[i];
				ibest = i;
			}
		}
		/* The pre-overrun fit's error at the chosen record, and that
		 * record's own latency: the least prediction is late by the
		 * least latency, which no record shows but the spread of the
		 * others bounds.  The load that caused the overrun delays every
		 * wakeup after it (wakeup-stamped ALSA records all came 1.7 ms
		 * late, median +30 frames above the least, while the fit's error
		 * alone said 0.17 frames); with interrupt times the spread is a
		 * fraction of a frame. */
		double fit_se = sqrt(sync_conv_var(&c, sync_tval_of(n->pend[ibest].cpu_ns)));
		out->start_se = hypot(fit_se, med - best);
		start = base + likeliest_start(best, least_excess(n->npend, med - best), fit_se);
		out->npred = (uint32_t)n->npend;
		out->pred_med = med - (double)(start - base);
		out->pred_max = sorted[n->npend - 1] - (double)(start - base);
		int64_t nominal;
		double tol;
		if (nominal_start(n, n->pend[ibest].cpu_ns, n->pend[ibest].rel, &nominal, &tol) == 0 &&
		    (!(fabs((double)(start - nominal)) <= tol) || !(out->start_se <= tol))) {
			/* A fit that predicts beyond what any card's rate allows
			 * since the newest observation (or says it cannot tell) is
			 * broken: mixed runs, a clock step.  Number on from the
			 * newest observation at the nominal rate, say so, and let
			 * the new run's records alone rebuild the fit. */
			out->implausible = 1;
			out->implausible_frames = (double)(start - nominal);
			start = nominal;
			out->start_se = tol / 3;
			sync_fit_reset(n->fit);
		}
	}
	settle(n, start, out);
	/* The new run's own records (three or more) start the fit afresh: the
	 * old runs' observations hold their restarts' errors, and an envelope
	 * across two runs whose offsets differ by a frame is tilted by the step
	 * (the upper envelope follows the higher run at one end, the lower at
	 * the other), so the next restart's extrapolation inherits the error
	 * with interest.  With runs of a quarter second (24 records) the index
	 * drifted by a frame per restart in some runs (test_numbering
	 * short_runs_keep_the_index: 18 of 2000 restarts beyond 5 stated
	 * s.e., 87 frames worst, before; none, 11 worst, after). */
	if (n->npend >= 3)
		sync_fit_reset(n->fit);
	for (int i = 0; i < n->npend; i++)
		add_obs(n, n->abs_base + n->pend[i].rel, n->pend[i].cpu_ns, out);
	n->npend = 0;
}

void numbering_record(numbering *n, uint64_t hw_ptr, int64_t cpu_ns, numbering_out *out)
{
	*out = (numbering_out){0};
	if (n->restarting && cpu_ns < n->restart_cpu_ns) {
		/* Timed before this run began: a record of the run before (a
		 * second overrun came before the first restart settled, and its
		 * records were still queued).  Taken as this run's first, its
		 * hw_ptr would make every later one look behind it. */
		out->behind = 1;
		return;
	}
	if (!n->have_hw_base) {
		/* First interrupt of a run.  When the run's starting hw_ptr is
		 * known (ALSA resets it to 0 at prepare), the record's hw_ptr
		 * counts the frames since the start: not always one period
		 * (snd-dummy's timer runs late and its hw_ptr says by how much,
		 * snd-aloop moves in jiffies, a DMA position is past the
		 * boundary; taking it as one period put every observation
		 * hw_ptr - period frames off the ring's data: 282 frames,
		 * 5.9 ms, on snd-aloop in the VM, issue 14).  Otherwise it is
		 * taken to be one period after the start. */
		n->last_hw = hw_ptr;
		if (n->hw0_known) {
			n->hw_base = (int64_t)n->hw0;
			n->hw_unwrapped = n->hw_base + (int64_t)((hw_ptr + n->p.boundary - n->hw0) % n->p.boundary);
		} else {
			n->hw_unwrapped = (int64_t)hw_ptr;
			n->hw_base = n->hw_unwrapped - (int64_t)n->p.period;
		}
		n->have_hw_base = 1;
	} else {
		uint64_t d = (hw_ptr + n->p.boundary - n->last_hw) % n->p.boundary;
		if (d > n->p.boundary / 2) {
			/* Behind the last record: not half a boundary (2^61
			 * frames, millions of years) of progress but a stale one. */
			out->behind = 1;
			return;
		}
		n->hw_unwrapped += (int64_t)d;
		n->last_hw = hw_ptr;
	}
	if (n->restarting) {
		n->pend[n->npend].rel = n->hw_unwrapped - n->hw_base;
		n->pend[n->npend].cpu_ns = cpu_ns;
		if (++n->npend >= n->restart_need)
			settle_from_records(n, out);
	} else {
		add_obs(n, n->abs_base + (n->hw_unwrapped - n->hw_base), cpu_ns, out);
	}
}

void numbering_wrote(numbering *n, uint64_t frames)
{
	assert(!n->restarting); /* frames of an unsettled run are held, not written */
	n->abs_next += (int64_t)frames;
}

void numbering_observe(numbering *n, int64_t frame, int64_t cpu_ns, numbering_out *out)
{
	*out = (numbering_out){0};
	add_obs(n, frame, cpu_ns, out);
}

int numbering_wants_stamp(const numbering *n)
{
	return n->restarting && n->npend < n->restart_need;
}

void numbering_stamp(numbering *n, uint64_t avail, int64_t cpu_ns)
{
	if (!numbering_wants_stamp(n))
		return;
	n->pend[n->npend].rel = (int64_t)(n->hold + avail);
	n->pend[n->npend].cpu_ns = cpu_ns;
	n->npend++;
}

uint64_t numbering_held(const numbering *n)
{
	return n->hold;
}

void numbering_hold(numbering *n, uint64_t frames)
{
	assert(n->restarting && n->hold + frames <= n->p.buffer); /* the caller's buffer holds them */
	n->hold += frames;
}

void numbering_wakeup_end(numbering *n, numbering_out *out)
{
	*out = (numbering_out){0};
	if (!n->restarting)
		return;
	n->restart_wakeups++;
	int full = n->hold >= n->p.buffer;
	if (n->npend >= n->restart_need || (n->npend && (full || n->restart_wakeups > 2 * n->restart_need))) {
		/* Enough observations of the new run (or as many as there
		 * will be: some lost, or the hold is full). */
		settle_from_records(n, out);
	} else if (full || n->restart_wakeups > 2 * n->restart_need + 2) {
		/* No observation at all: the run began when it was started. */
		int64_t f, nominal;
		double tol;
		if (predict_frame(n, n->restart_cpu_ns, &f) < 0)
			f = n->abs_next;
		if (nominal_start(n, n->restart_cpu_ns, 0, &nominal, &tol) == 0 && !(fabs((double)(f - nominal)) <= tol)) {
			out->implausible = 1;
			out->implausible_frames = (double)(f - nominal);
			f = nominal;
			sync_fit_reset(n->fit);
		}
		settle(n, f, out);
	}
}
