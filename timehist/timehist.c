/* timehist.c — piecewise clock history (see timehist.h, docs/clocks.md). */
#include "timehist/timehist.h"

#include "libsync/bridge.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	sync_conv c;   /* the fit; its data [c.xmin, c.xmax] */
	int64_t from;  /* the first observation fed since the piece before (it
		       * increases from piece to piece): the piece answers for
		       * [from, c.xmax] even where its fit's window was shortened
		       * (libsync/fit.h) and starts after from */
	uint32_t seg;  /* segment number */
	int gap_after; /* an outage follows it (bridged up to the next piece) */
	double q2;     /* the rate random walk its fit measured, (y/x)^2 per x */
} piece;

struct timehist {
	timehist_params p;
	sync_fit *fit;  /* the current segment's window */
	sync_conv live; /* its latest fit, when live_ok */
	int live_ok;
	uint32_t unsolved; /* observations fed since `live` was solved */
	uint32_t seg;      /* current segment number */
	size_t seg_count;  /* observations fed to the current segment */
	int64_t seg_start; /* first x of the current segment, x units */
	int64_t next_from; /* timehist_break_at(): where the next segment's data begin */
	int have_next_from;
	uint32_t since_piece; /* observations since the last piece was kept */
	int64_t piece_start;  /* x of the first of them, x units */
	int64_t last_x;       /* newest observation, x units (INT64_MIN: none) */
	int64_t *px, *py;     /* off-line observations awaiting confirmation */
	double *pr;           /* their residuals from the live fit, y units */
	uint32_t npend;
	piece *pieces; /* ring, oldest at phead */
	size_t phead, pcount;
	uint32_t gaps;  /* outages bridged */
	double live_q2; /* the wander measured before the last gap (the fit restarted) */
};

void timehist_params_default(timehist_params *p)
{
	memset(p, 0, sizeof *p);
	sync_fit_params_default(&p->fit);
	p->jump_k = 8.0;
	p->jump_min = 0.0;
	p->confirm = 4;
	p->max_pieces = 256;
	p->max_history = 0;
	p->tolerance = 0;
	p->refit = 1;
}

timehist *timehist_new(const timehist_params *p, const char **why)
{
	const char *dummy;
	if (!why)
		why = &dummy;
	if (!(p->jump_k > 0.0) || !isfinite(p->jump_k) || !(p->jump_min >= 0.0) || p->confirm < 1 ||
	    p->confirm > 1024 || p->max_pieces < 1 || p->max_history < 0 || p->tolerance < 0 || p->gap < 0 ||
	    !(p->bridge_q2 >= 0) || !isfinite(p->bridge_q2)) {
		*why = "timehist parameter out of range (jump_k > 0, jump_min >= 0, confirm 1..1024, "
		       "max_pieces >= 1, history, tolerance, gap and bridge_q2 >= 0)";
		return NULL;
	}
	timehist *h = calloc(1, sizeof *h);
	if (!h) {
		*why = "out of memory";
		return NULL;
	}
	h->p = *p;
	h->fit = sync_fit_new(&p->fit, why);
	if (!h->fit) {
		free(h);
		return NULL;
	}
	h->px = malloc(p->confirm * sizeof *h->px);
	h->py = malloc(p->confirm * sizeof *h->py);
	h->pr = malloc(p->confirm * sizeof *h->pr);
	h->pieces = malloc(p->max_pieces * sizeof *h->pieces);
	if (!h->px || !h->py || !h->pr || !h->pieces) {
		timehist_free(h);
		*why = "out of memory";
		return NULL;
	}
	h->last_x = INT64_MIN;
	return h;
}

void timehist_free(timehist *h)
{
	if (!h)
		return;
	sync_fit_free(h->fit);
	free(h->px);
	free(h->py);
	free(h->pr);
	free(h->pieces);
	free(h);
}

static piece *piece_at(const timehist *h, size_t k)
{
	return &h->pieces[(h->phead + k) % h->p.max_pieces];
}

/* Solve the live fit over every observation fed. */
static void solve_live(timehist *h)
{
	h->live_ok = sync_fit_solve(h->fit, &h->live, NULL) == 0;
	h->unsolved = 0;
}

/* Keep the live fit as a piece; forget the oldest beyond the bounds. */
static void keep_piece(timehist *h)
{
	h->since_piece = 0;
	if (h->unsolved)
		solve_live(h); /* a piece covers exactly its data */
	if (!h->live_ok)
		return;
	if (h->pcount == h->p.max_pieces) {
		h->phead = (h->phead + 1) % h->p.max_pieces;
		h->pcount--;
	}
	piece *pc = piece_at(h, h->pcount++);
	pc->c = h->live;
	pc->from = h->piece_start;
	pc->seg = h->seg;
	pc->gap_after = 0;
	pc->q2 = fmax(sync_fit_wander_bound(h->fit), h->live_q2);
}

/* An outage before the observation at x: keep the piece before it, mark
 * it, and fit afresh after it (same segment: the clocks did not step). */
static void open_gap(timehist *h)
{
	if (h->since_piece > 0)
		keep_piece(h);
	if (h->pcount && piece_at(h, h->pcount - 1)->seg == h->seg) {
		piece *pc = piece_at(h, h->pcount - 1);
		pc->gap_after = 1;
		h->live_q2 = pc->q2;
	}
	sync_fit_reset(h->fit);
	h->live_ok = 0;
	h->unsolved = 0;
	h->since_piece = 0;
	h->gaps++;
}

static void forget_old(timehist *h)
{
	if (h->p.max_history <= 0)
		return;
	int64_t limit;
	if (__builtin_sub_overflow(h->last_x, h->p.max_history, &limit))
		return;
	while (h->pcount > 0 && piece_at(h, 0)->c.xmax < limit) {
		h->phead = (h->phead + 1) % h->p.max_pieces;
		h->pcount--;
	}
}

/* Feed one observation to the current segment's fit and refit. */
static void feed(timehist *h, int64_t x, int64_t y)
{
	if (h->seg_count++ == 0) {
		/* Data the caller said begin before the first observation (a
		 * restarted run's first frame) belong to the segment. */
		h->seg_start = h->have_next_from && h->next_from < x ? h->next_from : x;
		h->have_next_from = 0;
	}
	if (h->since_piece++ == 0)
		h->piece_start = h->seg_count == 1 ? h->seg_start : x;
	sync_fit_add(h->fit, x, y, NULL); /* order was checked by the caller */
	if (!h->live_ok || ++h->unsolved >= (h->p.refit ? h->p.refit : 1))
		solve_live(h);
	/* The window has turned over (by count, or by span when the fit has a
	 * span limit): its fit covers exactly the data since the last piece. */
	if (h->since_piece >= h->p.fit.window ||
	    (h->p.fit.max_span > 0 && x - h->piece_start >= h->p.fit.max_span))
		keep_piece(h);
}

static void flush_pending(timehist *h)
{
	for (uint32_t i = 0; i < h->npend; i++)
		feed(h, h->px[i], h->py[i]);
	h->npend = 0;
}

static void close_segment(timehist *h)
{
	if (h->since_piece > 0)
		keep_piece(h);
	sync_fit_reset(h->fit);
	h->live_ok = 0;
	h->unsolved = 0;
	h->seg++;
	h->seg_count = 0;
	h->since_piece = 0;
}

int timehist_break(timehist *h)
{
	/* Observations off the line just before a declared break belong to the
	 * old segment, as outliers its fit may reject. */
	flush_pending(h);
	if (h->seg_count > 0)
		close_segment(h);
	h->have_next_from = 0;
	return 0;
}

int timehist_break_at(timehist *h, int64_t x_from)
{
	timehist_break(h);
	if (x_from >= h->last_x || h->last_x == INT64_MIN) {
		h->next_from = x_from;
		h->have_next_from = 1;
	}
	return 0;
}

int timehist_add(timehist *h, int64_t x, int64_t y, char *why, size_t len)
{
	if (x < h->last_x) {
		if (why)
			snprintf(why, len, "observation out of order: x=%" PRId64 " after x=%" PRId64, x, h->last_x);
		return -EINVAL;
	}
	int64_t prev = h->last_x;
	h->last_x = x;
	if (h->p.gap > 0 && prev != INT64_MIN && h->seg_count > 0 && h->npend == 0 && x - prev > h->p.gap)
		open_gap(h);
	if (h->live_ok) {
		sync_tval xv = sync_tval_of(x);
		sync_tval yf = sync_conv_apply(&h->live, xv);
		double r = (double)(y - yf.i) - yf.f;
		double noise = sqrt(h->live.rms * h->live.rms + sync_conv_var(&h->live, xv));
		double thr = h->p.jump_k * noise;
		if (fabs(r) > thr && fabs(r) > h->p.jump_min) {
			/* Off the line.  A clock step moves every following point by
			 * the same amount; scattered outliers do not agree. */
			if (h->npend > 0 && fabs(r - h->pr[0]) > 0.5 * thr)
				flush_pending(h);
			h->px[h->npend] = x;
			h->py[h->npend] = y;
			h->pr[h->npend] = r;
			if (++h->npend < h->p.confirm) {
				forget_old(h);
				return 0;
			}
			/* Confirmed: the segment ended before the first of them. */
			uint32_t n = h->npend;
			h->npend = 0;
			close_segment(h);
			for (uint32_t i = 0; i < n; i++)
				feed(h, h->px[i], h->py[i]);
			forget_old(h);
			return 1;
		}
		flush_pending(h);
	}
	feed(h, x, y);
	forget_old(h);
	return 0;
}

/* x < b and x > b for a fractional x against an integer bound. */
static int lt(sync_tval x, int64_t b)
{
	return x.i < b || (x.i == b && x.f < 0);
}

static int gt(sync_tval x, int64_t b)
{
	return x.i > b || (x.i == b && x.f > 0);
}

/* Where the live fit starts to answer: its data, or the first observation
 * since the last piece kept (or since the segment began, when it has no
 * piece yet), whichever is earlier: every observed x of the segment has a
 * fit, even where a shortened window no longer holds it. */
static int64_t live_from(const timehist *h)
{
	int64_t lo = h->live.xmin;
	if (h->since_piece > 0 && h->piece_start < lo)
		lo = h->piece_start;
	if ((h->pcount == 0 || piece_at(h, h->pcount - 1)->seg != h->seg) && h->seg_start < lo)
		lo = h->seg_start;
	return lo;
}

/* Index of the last piece with from <= x, or -1 (from increases). */
static long last_piece_before(const timehist *h, sync_tval x)
{
	long lo = 0, hi = (long)h->pcount - 1, best = -1;
	while (lo <= hi) {
		long mid = (lo + hi) / 2;
		if (!lt(x, piece_at(h, (size_t)mid)->from)) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

/* Across an outage: the fits on either side and the rate random walk
 * assumed. */
typedef struct {
	const sync_conv *a, *b;
	double q2;
} bridge;

/* The fit that held at x (*br->a NULL), or in an outage the bridge (*out
 * NULL, *br filled), or an error saying why there is neither. */
static int find(const timehist *h, sync_tval x, const sync_conv **out, bridge *br, char *why, size_t len)
{
	br->a = NULL;
	char dummy[1];
	if (!why) {
		why = dummy;
		len = sizeof dummy;
	}
	if (h->seg_count == 0 && h->pcount == 0) {
		snprintf(why, len, "no observations yet");
		return -EAGAIN;
	}
	int in_current = h->seg_count > 0 && !lt(x, h->seg_start);
	if (in_current) {
		int64_t limit;
		if (__builtin_add_overflow(h->last_x, h->p.tolerance, &limit))
			limit = INT64_MAX;
		if (h->npend > 0 && !lt(x, h->px[0])) {
			snprintf(why, len,
				 "x=%" PRId64 " is at or after an observation off the line (x=%" PRId64
				 "): a discontinuity awaits confirmation",
				 x.i, h->px[0]);
			return -EAGAIN;
		}
		if (gt(x, limit)) {
			snprintf(why, len,
				 "x=%" PRId64 " is %" PRId64 " past the newest observation (x=%" PRId64
				 "), beyond the tolerance %" PRId64,
				 x.i, x.i - h->last_x, h->last_x, h->p.tolerance);
			return -ERANGE;
		}
		if (!h->live_ok) {
			snprintf(why, len,
				 "the current segment (since x=%" PRId64 ") has only %zu observation(s)",
				 h->seg_start, h->seg_count);
			return -EAGAIN;
		}
		if (!lt(x, live_from(h))) {
			*out = &h->live;
			return 0;
		}
	}
	long k = last_piece_before(h, x);
	if (k < 0) {
		/* Older than every fit kept (pieces are forgotten oldest first). */
		int64_t oldest = h->pcount ? piece_at(h, 0)->from : h->live_ok ? live_from(h)
									       : h->seg_start;
		snprintf(why, len, "x=%" PRId64 " is before the history kept (oldest x=%" PRId64 ")", x.i,
			 oldest);
		return -ERANGE;
	}
	const piece *p = piece_at(h, (size_t)k);
	if (!gt(x, p->c.xmax)) {
		*out = &p->c;
		return 0;
	}
	/* Between p and whatever follows it. */
	const sync_conv *next;
	uint32_t nseg;
	int64_t nstart;
	if ((size_t)k + 1 < h->pcount) {
		next = &piece_at(h, (size_t)k + 1)->c;
		nseg = piece_at(h, (size_t)k + 1)->seg;
		nstart = piece_at(h, (size_t)k + 1)->from;
	} else if (h->seg_count > 0) {
		next = h->live_ok ? &h->live : NULL;
		nseg = h->seg;
		nstart = h->live_ok ? live_from(h) : h->seg_start;
	} else {
		snprintf(why, len,
			 "x=%" PRId64 " is after segment %u ended (x=%" PRId64 ") at a break, with no data since",
			 x.i, p->seg, p->c.xmax);
		return -ERANGE;
	}
	if (p->gap_after && nseg == p->seg) {
		int64_t xb = (size_t)k + 1 < h->pcount ? next->xmin : h->live_ok ? h->live.xmin
										 : nstart;
		if (!next) {
			snprintf(why, len,
				 "x=%" PRId64 " is in an outage (x=%" PRId64 "..%" PRId64
				 "): bridged once the fit after it has 3 observations",
				 x.i, p->c.xmax, nstart);
			return -EAGAIN;
		}
		if (gt(x, p->c.xmax) && lt(x, xb)) {
			*out = NULL;
			br->a = &p->c;
			br->b = next;
			br->q2 = fmax(h->p.bridge_q2, p->q2);
			if ((size_t)k + 1 < h->pcount)
				br->q2 = fmax(br->q2, piece_at(h, (size_t)k + 1)->q2);
			else
				br->q2 = fmax(br->q2, fmax(sync_fit_wander_bound(h->fit), h->live_q2));
			return 0;
		}
		*out = next; /* between the fit's data start and its first observation */
		return 0;
	}
	if (nseg != p->seg || !next) {
		snprintf(why, len,
			 "x=%" PRId64 " falls in the break between segment %u (ends x=%" PRId64
			 ") and segment %u (starts x=%" PRId64 ")",
			 x.i, p->seg, p->c.xmax, nseg, nstart);
		return -ERANGE;
	}
	/* Same segment, between two pieces: the nearer fit. */
	double before = sync_tval_diff(x, p->c.xmax), after = -sync_tval_diff(x, nstart);
	*out = before <= after ? &p->c : next;
	return 0;
}

sync_tval timehist_bridge(const sync_conv *a, const sync_conv *b, double q2, sync_tval x, double *var)
{
	return sync_bridge(a, b, q2, x, var, NULL);
}

int timehist_convert(const timehist *h, sync_tval x, sync_tval *y, double *var, char *why, size_t len)
{
	const sync_conv *c;
	bridge br;
	int rc = find(h, x, &c, &br, why, len);
	if (rc < 0)
		return rc;
	if (br.a) {
		*y = timehist_bridge(br.a, br.b, br.q2, x, var);
		return 0;
	}
	*y = sync_conv_apply(c, x);
	if (var)
		*var = sync_conv_var(c, x);
	return 0;
}

/* y where a fit starts to answer (x = from). */
static sync_tval y_start(const sync_conv *c, int64_t from)
{
	return sync_conv_apply(c, sync_tval_of(from));
}

static int ge_tval(sync_tval a, sync_tval b)
{
	return a.i > b.i || (a.i == b.i && a.f >= b.f);
}

int timehist_invert(const timehist *h, sync_tval y, sync_tval *x, double *var, char *why, size_t len)
{
	/* Slopes of clock pairs are positive, so y orders the fits as x does:
	 * guess the fit from y, then let find() judge the x it gives. */
	const sync_conv *guess = NULL;
	if (h->live_ok && ge_tval(y, y_start(&h->live, live_from(h)))) {
		guess = &h->live;
	} else {
		long lo = 0, hi = (long)h->pcount - 1, best = -1;
		while (lo <= hi) {
			long mid = (lo + hi) / 2;
			const piece *pm = piece_at(h, (size_t)mid);
			if (ge_tval(y, y_start(&pm->c, pm->from))) {
				best = mid;
				lo = mid + 1;
			} else {
				hi = mid - 1;
			}
		}
		if (h->pcount)
			guess = &piece_at(h, best < 0 ? 0 : (size_t)best)->c;
		else if (h->live_ok)
			guess = &h->live;
	}
	if (!guess) {
		sync_tval x0 = sync_tval_of(h->seg_count ? h->seg_start : INT64_MIN);
		const sync_conv *c;
		bridge br;
		return find(h, x0, &c, &br, why, len); /* reports why nothing converts */
	}
	sync_tval xe = sync_conv_invert(guess, y);
	const sync_conv *c;
	bridge br;
	int rc = find(h, xe, &c, &br, why, len);
	if (rc < 0)
		return rc;
	if (br.a) {
		/* In an outage: Newton on the bridge (its slope is the fits', to
		 * within their wander). */
		double slope = 0.5 * (br.a->slope + br.b->slope), vy = 0;
		for (int it = 0; it < 4; it++) {
			sync_tval yx = timehist_bridge(br.a, br.b, br.q2, xe, &vy);
			double dx = ((double)(y.i - yx.i) + (y.f - yx.f)) / slope, fl = floor(xe.f + dx + 0.5);
			xe.i += (int64_t)fl;
			xe.f = xe.f + dx - fl;
		}
		*x = xe;
		if (var)
			*var = vy / (slope * slope);
		return 0;
	}
	*x = c == guess ? xe : sync_conv_invert(c, y);
	if (var)
		*var = sync_conv_var_inv(c, y);
	return 0;
}

int timehist_current(const timehist *h, sync_conv *out)
{
	if (!h->live_ok)
		return -EAGAIN;
	*out = h->live;
	return 0;
}

size_t timehist_npieces(const timehist *h)
{
	return h->pcount;
}

int timehist_piece(const timehist *h, size_t k, sync_conv *out, uint32_t *segment)
{
	if (k >= h->pcount)
		return -ENOENT;
	*out = piece_at(h, k)->c;
	if (segment)
		*segment = piece_at(h, k)->seg;
	return 0;
}

uint32_t timehist_segment(const timehist *h)
{
	return h->seg;
}

uint32_t timehist_gaps(const timehist *h)
{
	return h->gaps;
}
