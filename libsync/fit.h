/* fit.h — fit a conversion (conv.h) to observation pairs (x_i, y_i) of two
 * clocks over a sliding window (docs/architecture.md §2.4, docs/clocks.md).
 *
 * Observations are int64 in the clocks' units and are never put into a
 * double whole: the fit is of the residual offset
 *     d_i = (y_i - y0) - nominal * (x_i - x0)
 * against x_i - x0, with (x0, y0) an observation in the middle of the window
 * and `nominal` the expected slope (1 for ns<->ns, ~4.8e-5 frames/ns for a
 * 48 kHz card against a cpu clock), so doubles only hold small numbers.
 *
 * Modes:
 *   SYNC_FIT_MEAN   least squares (gsl_fit_linear) with MAD-based outlier
 *                   rejection iterated to convergence;
 *   SYNC_FIT_LOWER  one-sided errors that only delay y (interrupt latency):
 *                   the lower envelope (the maximum-likelihood line for
 *                   exponential delays), bias-corrected;
 *   SYNC_FIT_UPPER  the mirror image: errors only make y early.
 *
 * Every mode measures how far the clocks' frequency wanders (the lack of
 * fit of a straight line, sync_fit_wander()), shortens the window to the
 * span where wander and noise cost the same, and states what is left.
 *
 * Pure: no I/O, no clocks; allocation only in sync_fit_new().  Not thread
 * safe (one fit per pair, owned by one thread).  Errors: negative errno with
 * a static reason.
 */
#ifndef CHORUS_FIT_H
#define CHORUS_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "libsync/conv.h"

typedef enum {
	SYNC_FIT_MEAN = 0,
	SYNC_FIT_LOWER = 1,
	SYNC_FIT_UPPER = 2,
} sync_fit_mode;

typedef struct {
	sync_fit_mode mode;
	uint32_t window;      /* most observations kept (>= 3) */
	int64_t max_span;     /* drop observations older than newest x - max_span, x units; 0 = no limit */
	double nominal_slope; /* expected dy/dx, y units per x unit; 0 = from the window's end points */
	double reject_k;      /* reject |r - median r| > reject_k robust sigmas; 0 = keep all */
	uint32_t max_iter;    /* most reject-and-refit rounds (>= 1) */
	double sigma_floor;   /* least residual s.d., y units (integer quantization: 1/sqrt(12)) */
	double wander;        /* fractional frequency wander copied into the conv (SYNC_WANDER_DEFAULT) */
} sync_fit_params;

typedef struct sync_fit sync_fit;

/* Fill *p with the defaults: MEAN, window 64, no age limit, nominal from
 * the data, reject_k 3.5, max_iter 10, sigma_floor 1/sqrt(12), wander 0.1 ppm. */
void sync_fit_params_default(sync_fit_params *p);

/* A new empty fit.  Returns it, or NULL with a static reason in *why (bad
 * parameter or out of memory). */
sync_fit *sync_fit_new(const sync_fit_params *p, const char **why);

/* Free f (NULL is fine). */
void sync_fit_free(sync_fit *f);

/* Forget every observation. */
void sync_fit_reset(sync_fit *f);

/* Add one observation; x must not decrease.  The oldest observations leave
 * the window by count and by span.  Returns 0, or -EINVAL (x went backwards)
 * with the reason in *why. */
int sync_fit_add(sync_fit *f, int64_t x, int64_t y, const char **why);

/* Number of observations in the window. */
size_t sync_fit_count(const sync_fit *f);

/* Newest observation's x (INT64_MIN when empty). */
int64_t sync_fit_last_x(const sync_fit *f);

/* Fit the window and write the conversion to *out (updated = 0: the caller
 * stamps it).  Returns 0; -EAGAIN with fewer than 3 usable observations;
 * -EDOM when all x are equal.  *why gets the reason. */
int sync_fit_solve(sync_fit *f, sync_conv *out, const char **why);

/* The wander the fit has measured (docs/clocks.md §5): the diffusion q^2
 * of a random walk of the slope, (y units / x unit)^2 per x unit, from the
 * window's two halves' slopes (Allan style), a running mean over a few
 * windows; 0 while it is below 3 + 2.66 / sqrt(K) of its standard errors
 * (K the windows pooled: 5.66 while the window has not slid, whose one
 * estimate is chi^2_1 distributed).  The solve
 * shortens the window where this wander costs more than the noise it
 * averages, and states sync_fit_wander_stated() (in var_c at the newest
 * point and in the wander term beyond it). */
double sync_fit_wander(const sync_fit *f);

/* The wander the fit states in its conversions: the running mean of the
 * estimates clipped at 0, whether or not it is significant (docs/clocks.md
 * §5: a threshold would leave young windows' ramps unstated); while a
 * least-squares fit is young (its window still filling)
 * sync_fit_wander_bound(), since one window's estimate of a ramp is often
 * 0 by chance, and over its second window a bound fading to the mean as
 * the windows pooled go from 1 to 2.  Returns q^2 (>= 0), y units^2 per x
 * unit^3. */
double sync_fit_wander_stated(const sync_fit *f);

/* An upper bound of that wander: its running mean plus one of its standard
 * errors (0 before any measurement), what a bridge across an outage must
 * assume while the wander is not resolved (timehist.h). */
double sync_fit_wander_bound(const sync_fit *f);

/* How many of the oldest observations the last solve left out because the
 * wander made them more harm than help (0: it used the whole window). */
size_t sync_fit_used_from(const sync_fit *f);

/* Observations rejected as outliers by the last successful solve. */
uint32_t sync_fit_rejected(const sync_fit *f);

#endif
