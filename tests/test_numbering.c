/* test_numbering.c — audiod's frame numbering (audiod/numbering.h) against a
 * model sound card: a crystal 30 ppm off the cpu clock, period interrupts
 * whose timestamps are late by a seeded random latency of several shapes,
 * hw_ptr starting anywhere and wrapping at the boundary, overruns after
 * which the card restarts on the first whole frame after the restart time.
 * The test plays the capture thread (records, then the hold while
 * restarting, then the reads) and checks every index, gap and flush the
 * numbering gives: exactly where the case determines them, and the
 * restarted run's first frame within a tolerance derived from the
 * envelope fit's own error model where latency makes it statistical.
 */
#include <check.h>
#include <glib.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>

#include "audiod/numbering.h"
#include "tests/check_run.h"

#define RATE 48000
#define PERIOD 480
#define BOUNDARY ((uint64_t)PERIOD * 4 * 1024 * 1024) /* a multiple of the buffer, as ALSA's */
#define SKEW 30e-6                                    /* card crystal against the cpu clock */
#define WINDOW 256                                    /* the numbering's fit window (numbering.c) */
/* Added to every case's seed: -DSEED_BASE=n tries other draws. */
#ifndef SEED_BASE
#define SEED_BASE 0
#endif

/* Latency shapes of the interrupt timestamps, ns; each has a floor (the
 * least latency), a mean excess over it, and a scale at the floor: the
 * inverse of the density there, which is what sets an envelope's error
 * (for an exponential the two are its mean). */
typedef enum { LAT_CONST,
	       LAT_UNIFORM,
	       LAT_EXP,
	       LAT_SPIKY,
	       LAT_N } lat_shape;
static const char *lat_name[] = {"constant 40 us", "uniform 5..200 us", "5 us + exponential 50 us",
				 "2..8 us, 5 % spikes of 8 us..3 ms"};
static const double lat_floor_ns[] = {40e3, 5e3, 5e3, 2e3};
/* Mean excess over the floor, ns (spiky: 0.95 * 3 us + 0.05 * 1.506 ms). */
static const double lat_excess_ns[] = {0, 97.5e3, 50e3, 0.95 * 3e3 + 0.05 * 1.506e6};
/* 1 / density at the floor, ns (spiky: 95 % spread over 6 us). */
static const double lat_scale_ns[] = {0, 195e3, 50e3, 6e3 / 0.95};

typedef struct {
	int64_t frame;  /* true absolute index of the frame at the interrupt */
	int64_t cpu_ns; /* the record's time, ns */
	int run;        /* which run it belongs to */
} expect;

/* The model card and the capture thread's view of it. */
typedef struct {
	gsl_rng *r;
	lat_shape shape;
	int alsa;         /* ALSA timestamps instead of interrupt records */
	int drop_records; /* the records of the interrupts are lost */
	uint64_t buffer;  /* ALSA buffer = hold buffer, frames */
	double nspf;      /* ns per frame on the cpu clock */
	int64_t t0_ns;    /* cpu time of true frame 0, ns */
	numbering *n;
	/* the current run */
	int run;
	int64_t run_start;       /* true index of its first frame */
	uint64_t hw0;            /* hw_ptr at its start */
	int64_t k;               /* interrupts so far */
	uint64_t rd;             /* frames of the run read (held or written) */
	int64_t last_irq_cpu_ns; /* the last interrupt's timestamp, ns */
	double pend_lat_min_ns;  /* least latency of the records fed while restarting, ns */
	/* what the caller has applied */
	int64_t ring_next;     /* the ring's next absolute frame */
	uint64_t held;         /* frames held since the restart */
	int64_t off[64];       /* per run: numbering index - true index */
	int settled;           /* settles seen */
	numbering_out last;    /* the last settle */
	int wakeups_to_settle; /* wakeups of the last restart before it settled */
	GQueue *q;             /* expect*: observations still to come, in order */
} card;

static double draw_latency(card *c)
{
	switch (c->shape) {
	case LAT_CONST:
		return lat_floor_ns[LAT_CONST];
	case LAT_UNIFORM:
		return 5e3 + 195e3 * gsl_rng_uniform(c->r);
	case LAT_EXP:
		return 5e3 - 50e3 * log(1.0 - gsl_rng_uniform(c->r));
	default:
		return gsl_rng_uniform(c->r) < 0.05 ? 8e3 + 3e6 * gsl_rng_uniform(c->r) : 2e3 + 6e3 * gsl_rng_uniform(c->r);
	}
}

/* cpu time of true frame f, ns. */
static int64_t frame_cpu(const card *c, int64_t f)
{
	return c->t0_ns + (int64_t)llround((double)f * c->nspf);
}

static void card_init(card *c, lat_shape shape, uint64_t buffer, uint32_t seed)
{
	*c = (card){0};
	c->r = gsl_rng_alloc(gsl_rng_mt19937);
	gsl_rng_set(c->r, seed + SEED_BASE);
	c->shape = shape;
	c->buffer = buffer;
	c->nspf = 1e9 / RATE * (1.0 - SKEW); /* the card runs 30 ppm fast */
	c->t0_ns = 1000000000000LL;
	/* hw_ptr starts 3 periods before the boundary: it wraps at once. */
	c->hw0 = BOUNDARY - 3 * PERIOD;
	c->q = g_queue_new();
	numbering_params p = {.rate_hz = RATE, .period = PERIOD, .buffer = buffer, .boundary = BOUNDARY};
	const char *why = NULL;
	c->n = numbering_new(&p, &why);
	ck_assert_msg(c->n, "%s", why);
}

static void card_free(card *c)
{
	ck_assert_int_eq(g_queue_get_length(c->q), 0);
	g_queue_free_full(c->q, g_free);
	numbering_free(c->n);
	gsl_rng_free(c->r);
}

/* Apply what the numbering produced, as stream.c does, checking it. */
static void apply(card *c, const numbering_out *out)
{
	if (out->settled) {
		c->settled++;
		c->last = *out;
		if (out->continued) {
			ck_assert_int_eq(out->gap_from, out->gap_to);
			c->ring_next = out->start;
		} else if (out->gap_to > out->gap_from) {
			ck_assert_int_eq(out->gap_from, c->ring_next);
			ck_assert_int_eq(out->gap_to, out->start);
			c->ring_next = out->gap_to;
		} else {
			/* No gap: the run goes on where the ring is. */
			ck_assert_int_le(out->start, c->ring_next);
		}
		/* The run's first frame goes where the ring now ends. */
		c->off[c->run] = c->ring_next - c->run_start;
		ck_assert_uint_eq(out->flush, c->held);
		c->ring_next += (int64_t)out->flush;
		c->held = 0;
	}
	for (uint32_t i = 0; i < out->nobs; i++) {
		expect *e = g_queue_pop_head(c->q);
		ck_assert_msg(e, "an observation nobody expected");
		ck_assert_int_eq(out->obs[i].cpu_ns, e->cpu_ns);
		ck_assert_int_eq(out->obs[i].frame, e->frame + c->off[e->run]);
		g_free(e);
	}
	ck_assert_int_eq(numbering_next(c->n), c->ring_next);
}

/* The next interrupt of the current run: its record goes to the numbering
 * (unless records are lost or the source is ALSA). */
static void interrupt(card *c, int feed)
{
	c->k++;
	int64_t f = c->run_start + c->k * PERIOD;
	double lat = draw_latency(c);
	c->last_irq_cpu_ns = frame_cpu(c, f) + (int64_t)llround(lat);
	if (c->alsa || c->drop_records || !feed)
		return;
	if (numbering_restarting(c->n) && lat < c->pend_lat_min_ns)
		c->pend_lat_min_ns = lat;
	expect *e = g_new(expect, 1);
	*e = (expect){f, c->last_irq_cpu_ns, c->run};
	g_queue_push_tail(c->q, e);
	numbering_out out;
	numbering_record(c->n, (c->hw0 + (uint64_t)c->k * PERIOD) % BOUNDARY, c->last_irq_cpu_ns, &out);
	apply(c, &out);
}

/* An ALSA timestamp (the last interrupt's time and the frames available
 * then) is an observation of the frame at that interrupt. */
static void expect_alsa(card *c)
{
	expect *e = g_new(expect, 1);
	*e = (expect){c->run_start + c->k * PERIOD, c->last_irq_cpu_ns, c->run};
	g_queue_push_tail(c->q, e);
}

/* One wakeup of the capture thread after `irqs` interrupts (their records
 * read first), reading `avail_limit` frames at most into the hold (all when
 * negative), as stream.c's capture_thread. */
static void wakeup_n(card *c, int irqs, int64_t avail_limit)
{
	numbering_out out;
	if (numbering_restarting(c->n))
		c->wakeups_to_settle++;
	for (int i = 0; i < irqs; i++)
		interrupt(c, 1);
	uint64_t avail = (uint64_t)c->k * PERIOD - c->rd;
	if (numbering_restarting(c->n)) {
		if (c->alsa && numbering_wants_stamp(c->n)) {
			expect_alsa(c);
			numbering_stamp(c->n, avail, c->last_irq_cpu_ns);
		}
		uint64_t room = c->buffer - numbering_held(c->n);
		uint64_t take = avail < room ? avail : room;
		if (avail_limit >= 0 && take > (uint64_t)avail_limit)
			take = (uint64_t)avail_limit;
		numbering_hold(c->n, take);
		c->held += take;
		c->rd += take;
		avail -= take;
		numbering_wakeup_end(c->n, &out);
		apply(c, &out);
	}
	if (!numbering_restarting(c->n)) {
		if (c->alsa && avail) {
			int64_t at = numbering_next(c->n) + (int64_t)avail;
			numbering_wrote(c->n, avail);
			c->ring_next += (int64_t)avail;
			c->rd += avail;
			expect_alsa(c);
			numbering_observe(c->n, at, c->last_irq_cpu_ns, &out);
			apply(c, &out);
		} else {
			numbering_wrote(c->n, avail);
			c->ring_next += (int64_t)avail;
			c->rd += avail;
		}
	}
}

static void wakeup(card *c)
{
	wakeup_n(c, 1, -1);
}

/* The thread was away for `away` periods (the records wait in the FIFO),
 * the card overran, and the thread restarted it `delay_ns` after the last
 * interrupt; the new run begins on the first whole frame at or after that
 * time.  Returns the index the new run's first frame has in the numbering
 * of the run before (its true index, plus whatever the numbering was off
 * the truth then: it numbers on from its own indices). */
static int64_t overrun(card *c, int away, int64_t delay_ns)
{
	/* stream.c reads the old run's records before restarting (while a
	 * restart is unsettled they stay in the FIFO: not modelled). */
	int feed = !numbering_restarting(c->n);
	for (int i = 0; i < away; i++)
		interrupt(c, feed);
	int64_t restart = c->last_irq_cpu_ns + delay_ns;
	numbering_overrun(c->n, restart);
	/* Frames held by an unsettled restart are dropped with it. */
	c->held = 0;
	c->run++;
	c->run_start = (int64_t)ceil((double)(restart - c->t0_ns) / c->nspf);
	c->hw0 = gsl_rng_uniform_int(c->r, 1u << 30);
	c->k = 0;
	c->rd = 0;
	c->pend_lat_min_ns = INFINITY;
	c->wakeups_to_settle = 0;
	return c->run_start + c->off[c->run - 1];
}

/* Tolerance, frames, of a restarted run's first frame from the envelope
 * fit's error, by numbering.c's fit (UPPER envelope, WINDOW points one
 * period apart, sigma floor 1/sqrt(12) frame) and libsync/fit.c's
 * calibration for delays of scale theta: line at the centre of the window
 * within sqrt(1.85) theta / m, slope within sqrt(4.2) theta / sqrt(m Sxx)
 * (Sxx = m span^2 / 12), extrapolated over `dist_ns` from the centre.  An
 * envelope's error is set by the density of the delays at their floor, so
 * theta is the shape's scale there (lat_scale_ns); the fit's bias
 * correction takes theta from the mean excess instead, which leaves
 * 1.83 |mean - scale| / m.  Four sigmas plus that. */
static double start_tolerance(const card *c, double dist_ns)
{
	const double floor_sd = 0.28867513459481287;
	double theta = lat_scale_ns[c->shape] / c->nspf, mean = lat_excess_ns[c->shape] / c->nspf;
	theta = theta < floor_sd ? floor_sd : theta;
	mean = mean < floor_sd ? floor_sd : mean;
	double m = WINDOW, span = (m - 1) * PERIOD * c->nspf;
	double sd_c = sqrt(1.85) * theta / m;
	double sd_s = sqrt(4.2) * theta / sqrt(m * m * span * span / 12.0);
	return 4.0 * hypot(sd_c, sd_s * dist_ns) + 1.83 * fabs(mean - theta) / m;
}

/* After a restart settled from records of the new run: its first frame is
 * floor(true + d + 0.1) where d = (least pending latency - floor) in frames
 * is what the least-latency record still leaves, give or take the fit's
 * error `tol`. */
static void check_start(card *c, int64_t truth, double tol)
{
	ck_assert_int_ge(c->settled, 1);
	double d = (c->pend_lat_min_ns - lat_floor_ns[c->shape]) / c->nspf;
	int64_t lo = truth + (int64_t)floor(d + 0.1 - tol), hi = truth + (int64_t)floor(d + 0.1 + tol);
	ck_assert_msg(c->last.start >= lo && c->last.start <= hi,
		      "%s: start %" G_GINT64_FORMAT " not in [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
		      "] (truth %" G_GINT64_FORMAT ", d %.3f, tol %.3f)",
		      lat_name[c->shape], c->last.start, lo, hi, truth, d, tol);
}

/* Steady capture: every interrupt's index is exact whatever its latency,
 * hw_ptr wraps at the boundary, nothing settles, no gap. */
START_TEST(steady_indices_exact)
{
	for (lat_shape sh = 0; sh < LAT_N; sh++) {
		card c;
		card_init(&c, sh, 4 * PERIOD, 100 + sh);
		numbering_start(c.n, c.t0_ns);
		ck_assert(!numbering_restarting(c.n));
		for (int i = 0; i < 1000; i++)
			wakeup_n(&c, 1 + i % 3 / 2, -1); /* sometimes two interrupts per wakeup */
		ck_assert_int_eq(c.settled, 0);
		ck_assert_int_eq(numbering_next(c.n), c.k * PERIOD);
		card_free(&c);
	}
}
END_TEST

/* Three overruns per latency shape: the gap runs exactly from the ring's end
 * to the restarted run's first frame, that frame is the true one within the
 * derived tolerance (exactly, for constant latency), the held frames are
 * flushed after the gap, and every later index follows exactly. */
START_TEST(xruns_per_latency_shape)
{
	for (lat_shape sh = 0; sh < LAT_N; sh++) {
		for (int buffers = 0; buffers < 2; buffers++) {
			uint64_t periods = buffers ? 16 : 4; /* 4 or 8 records to settle */
			card c;
			card_init(&c, sh, periods * PERIOD, 200 + 10 * sh + buffers);
			numbering_start(c.n, c.t0_ns);
			for (int i = 0; i < 400; i++)
				wakeup(&c);
			for (int x = 0; x < 3; x++) {
				int64_t ring_before = c.ring_next;
				int away = (int)periods + 1 + x;
				int64_t truth = overrun(&c, away, 1000000 + 777777 * x);
				int settled = c.settled;
				for (uint64_t i = 0; i < periods && c.settled == settled; i++)
					wakeup(&c);
				ck_assert_int_eq(c.settled, settled + 1);
				/* The need-th record settles it, before its wakeup's reads. */
				int need = periods < 8 ? (int)periods : 8;
				ck_assert_int_eq(c.wakeups_to_settle, need);
				/* Nothing reached the ring while restarting. */
				ck_assert_int_eq(c.last.gap_from, ring_before);
				double dist = (WINDOW / 2.0 + away + (double)periods) * PERIOD * c.nspf + 1e6 + 777777 * x;
				check_start(&c, truth, start_tolerance(&c, dist));
				if (sh == LAT_CONST)
					ck_assert_int_eq(c.last.start, truth);
				ck_assert_uint_eq(c.last.flush, (uint64_t)(need - 1) * PERIOD);
				for (int i = 0; i < 300; i++)
					wakeup(&c);
			}
			card_free(&c);
		}
	}
}
END_TEST

/* A restart of audiod that continues the numbering of the run before: the
 * first run starts at the index the previous run's line gives (exactly:
 * latency 40 us ± 0 leaves 0 frames after the fit), no gap, its held frames
 * flushed at that index. */
START_TEST(restart_continues_numbering)
{
	card c;
	card_init(&c, LAT_CONST, 4 * PERIOD, 300);
	/* The previous run's line, as syncd holds it: (cpu, frame) of interrupt
	 * times late by the same 40 us, 8 points over the last second. */
	int64_t cpu[8], frame[8];
	for (int i = 0; i < 8; i++) {
		frame[i] = 5000000 + i * 6000;
		cpu[i] = frame_cpu(&c, frame[i]) + 40000;
	}
	ck_assert_int_eq(numbering_continue(c.n, cpu, frame, 1), -EINVAL);
	int64_t bad[2] = {cpu[1], cpu[0]};
	ck_assert_int_eq(numbering_continue(c.n, bad, frame, 2), -EINVAL);
	ck_assert_int_eq(numbering_continue(c.n, cpu, frame, 8), 0);
	ck_assert(!numbering_restarting(c.n));
	/* This audiod starts 20 s later. */
	int64_t start_cpu = frame_cpu(&c, 6000000) + 123456;
	numbering_start(c.n, start_cpu);
	ck_assert(numbering_restarting(c.n));
	c.run_start = (int64_t)ceil((double)(start_cpu - c.t0_ns) / c.nspf);
	c.pend_lat_min_ns = INFINITY;
	for (int i = 0; i < 4; i++)
		wakeup(&c);
	ck_assert_int_eq(c.settled, 1);
	ck_assert(c.last.continued);
	ck_assert_int_eq(c.last.start, c.run_start);
	ck_assert_uint_eq(c.last.flush, 3 * PERIOD);
	for (int i = 0; i < 100; i++)
		wakeup(&c);
	ck_assert_int_eq(numbering_next(c.n), c.run_start + c.k * PERIOD);
	/* Without a continued numbering, the start is plain: frame 0. */
	card d;
	card_init(&d, LAT_CONST, 4 * PERIOD, 301);
	numbering_start(d.n, d.t0_ns);
	ck_assert(!numbering_restarting(d.n));
	wakeup(&d);
	ck_assert_int_eq(numbering_next(d.n), PERIOD);
	card_free(&d);
	card_free(&c);
}
END_TEST

/* ALSA timestamps: an observation per wakeup at next + avail; after an
 * overrun the new run's own stamps settle it like records. */
START_TEST(alsa_timestamps)
{
	card c;
	card_init(&c, LAT_CONST, 4 * PERIOD, 400);
	c.alsa = 1;
	numbering_start(c.n, c.t0_ns);
	for (int i = 0; i < 400; i++)
		wakeup_n(&c, 1 + i % 2, -1);
	for (int x = 0; x < 2; x++) {
		int64_t ring_before = c.ring_next;
		int64_t truth = overrun(&c, 5, 2000000);
		c.pend_lat_min_ns = lat_floor_ns[LAT_CONST];
		for (int i = 0; i < 4; i++)
			wakeup(&c);
		ck_assert_int_eq(c.settled, x + 1);
		ck_assert_int_eq(c.last.gap_from, ring_before);
		ck_assert_int_eq(c.last.gap_to, truth);
		ck_assert_int_eq(c.last.start, truth);
		for (int i = 0; i < 300; i++)
			wakeup(&c);
	}
	card_free(&c);
}
END_TEST

/* No record of the new run at all: with a full hold the run is taken to
 * have begun at the restart time (the fit's prediction there, rounded); with
 * no frames either, after 2 * need + 2 wakeups. */
START_TEST(restart_without_records)
{
	for (int stall = 0; stall < 2; stall++) {
		card c;
		card_init(&c, LAT_CONST, 4 * PERIOD, 500 + stall);
		numbering_start(c.n, c.t0_ns);
		for (int i = 0; i < 300; i++)
			wakeup(&c);
		int64_t ring_before = c.ring_next;
		c.drop_records = 1;
		int64_t delay = 1500000;
		overrun(&c, 6, delay);
		int64_t restart = c.last_irq_cpu_ns + delay;
		/* The fit's line runs 40 us late: frame at restart, rounded. */
		int64_t want = llround((double)(restart - 40000 - c.t0_ns) / c.nspf);
		int need = 4, wakeups = stall ? 2 * need + 3 : need;
		for (int i = 0; i < wakeups; i++) {
			ck_assert_int_eq(c.settled, 0);
			wakeup_n(&c, 1, stall ? 0 : -1);
		}
		ck_assert_int_eq(c.settled, 1);
		ck_assert_int_eq(c.wakeups_to_settle, wakeups);
		ck_assert_int_eq(c.last.start, want);
		ck_assert_int_eq(c.last.gap_from, ring_before);
		ck_assert_int_eq(c.last.gap_to, want);
		ck_assert_uint_eq(c.last.flush, stall ? 0 : 4 * PERIOD);
		ck_assert_int_eq(c.last.nobs, 0);
		c.drop_records = 0;
		card_free(&c);
	}
}
END_TEST

/* Some records of the new run lost: the hold fills first and the restart
 * settles from the records there are; an overrun while restarting drops
 * the hold and starts over, the gap still from where the ring ended. */
START_TEST(lost_records_and_double_overrun)
{
	card c;
	card_init(&c, LAT_CONST, 4 * PERIOD, 600);
	numbering_start(c.n, c.t0_ns);
	for (int i = 0; i < 300; i++)
		wakeup(&c);
	int64_t ring_before = c.ring_next;
	int64_t truth = overrun(&c, 5, 1000000);
	wakeup(&c); /* one record, then the records are lost */
	c.drop_records = 1;
	for (int i = 0; i < 3; i++)
		wakeup(&c);
	ck_assert_int_eq(c.settled, 1);
	ck_assert_int_eq(c.last.start, truth);
	ck_assert_uint_eq(c.last.flush, 4 * PERIOD);
	c.drop_records = 0;
	for (int i = 0; i < 100; i++)
		wakeup(&c);

	ring_before = c.ring_next;
	overrun(&c, 5, 1000000);
	wakeup(&c);
	wakeup(&c); /* two records pending, 2 periods held ... */
	ck_assert_int_eq(c.settled, 1);
	/* ... then the card overruns again: they are dropped and never
	 * become observations. */
	g_queue_clear_full(c.q, g_free);
	truth = overrun(&c, 0, 3000000);
	for (int i = 0; i < 4; i++)
		wakeup(&c);
	ck_assert_int_eq(c.settled, 2);
	ck_assert_int_eq(c.last.gap_from, ring_before);
	ck_assert_int_eq(c.last.start, truth);
	ck_assert_uint_eq(c.last.flush, 3 * PERIOD);
	card_free(&c);
}
END_TEST

START_TEST(bad_params)
{
	const char *why = NULL;
	numbering_params p = {.rate_hz = RATE, .period = PERIOD, .buffer = 0, .boundary = BOUNDARY};
	ck_assert_ptr_null(numbering_new(&p, &why));
	ck_assert_ptr_nonnull(why);
	p.buffer = 2 * PERIOD;
	p.rate_hz = 0;
	ck_assert_ptr_null(numbering_new(&p, &why));
}
END_TEST

/* A numbering of an 8-period buffer whose run starts at hw_ptr 0 and cpu
 * time 1 s. */
static numbering *started_at_zero(void)
{
	const char *why = NULL;
	numbering_params p = {.rate_hz = RATE, .period = PERIOD, .buffer = 8 * PERIOD, .boundary = BOUNDARY};
	numbering *n = numbering_new(&p, &why);
	ck_assert_ptr_nonnull(n);
	numbering_set_hw_start(n, 0);
	numbering_start(n, 1000000000);
	return n;
}

/* A kernel driver's first record is not on the period boundary: snd-dummy's
 * timer runs late (its hw_ptr says by how much), snd-aloop moves in
 * jiffies.  With the run's starting hw_ptr known (0: ALSA resets it at
 * prepare), each observation's frame is the record's hw_ptr, the first
 * run's and a restarted run's alike (issue 14: taken as one period, every
 * observation was 282 frames off the data on snd-aloop). */
START_TEST(first_record_late)
{
	numbering *n = started_at_zero();
	numbering_out out;
	const uint64_t hw[] = {PERIOD + 63, 2 * PERIOD + 576 - PERIOD, 3 * PERIOD + 5};
	for (int i = 0; i < 3; i++) {
		numbering_record(n, hw[i], 1000000000 + (int64_t)(hw[i] * 1e9 / RATE), &out);
		ck_assert_uint_eq(out.nobs, 1);
		ck_assert_int_eq(out.obs[0].frame, (int64_t)hw[i]);
	}
	numbering_free(n);
}
END_TEST

/* A record whose hw_ptr is behind the last one (stale, or delivered out of
 * order) is left out: read modulo the boundary it would be a boundary
 * (~2^62 frames) ahead, and the numbering jumped by that (seen under load
 * in chorus-sim: a restart "at frame 5764607523034254497", 5 x 2^60 + ...). */
START_TEST(record_behind_is_left_out)
{
	numbering *n = started_at_zero();
	numbering_out out;
	const uint64_t hw[] = {PERIOD, 2 * PERIOD, 2 * PERIOD - 7, 3 * PERIOD};
	const int behind[] = {0, 0, 1, 0};
	for (int i = 0; i < 4; i++) {
		numbering_record(n, hw[i], 1000000000 + (int64_t)(hw[i] * 1e9 / RATE), &out);
		ck_assert_int_eq(out.behind, behind[i]);
		ck_assert_uint_eq(out.nobs, behind[i] ? 0 : 1);
		if (!behind[i])
			ck_assert_int_eq(out.obs[0].frame, (int64_t)hw[i]);
	}
	/* An overrun: a record of the run before, still queued, comes after
	 * the restart; it is left out, and the new run's records count. */
	numbering_wrote(n, 3 * PERIOD);
	numbering_overrun(n, 2000000000);
	numbering_record(n, 4 * PERIOD, 1999000000, &out);
	ck_assert_int_eq(out.behind, 1);
	for (int k = 1; k <= 8; k++) {
		numbering_record(n, (uint64_t)k * PERIOD, 2000000000 + (int64_t)(k * PERIOD * 1e9 / RATE), &out);
		ck_assert_int_eq(out.behind, 0);
	}
	ck_assert(!numbering_restarting(n));
	numbering_free(n);
}
END_TEST

/* On drivers that read the position when ALSA asks (snd-dummy, a DMA
 * position register), a delay between the module's timestamp and the read
 * makes a record early for its hw_ptr.  One such record 0.7 ms early among
 * the eight of a restart must not move the restarted run 34 frames before
 * real time (issue 14): it is left out of the least prediction. */
START_TEST(restart_early_record)
{
	const char *why = NULL;
	numbering_params p = {.rate_hz = RATE, .period = PERIOD, .buffer = 8 * PERIOD, .boundary = BOUNDARY};
	numbering *n = numbering_new(&p, &why);
	numbering_out out = {0};
	const double nspf = 1e9 / RATE;
	const int64_t t0 = 1000000000000LL;
	ck_assert_ptr_nonnull(n);
	numbering_set_hw_start(n, 0);
	numbering_start(n, t0);
	for (int64_t k = 1; k <= 300; k++) {
		int64_t hw = k * PERIOD;
		numbering_record(n, (uint64_t)hw, t0 + llround(hw * nspf) + 20000 + (k % 7) * 3000, &out);
		numbering_wrote(n, PERIOD);
	}
	const int64_t S = 300 * PERIOD + 10000; /* the new run's true first frame */
	numbering_overrun(n, t0 + llround(S * nspf) - 1000);
	for (int64_t k = 1; k <= 8; k++) {
		int64_t hw = k * PERIOD;
		numbering_hold(n, PERIOD);
		numbering_record(n, (uint64_t)hw,
				 t0 + llround((S + hw) * nspf) + 20000 + (k % 7) * 3000 - (k == 3 ? 700000 : 0), &out);
	}
	ck_assert_int_eq(out.settled, 1);
	ck_assert_uint_eq(out.rejected, 1);
	ck_assert_int_eq(out.implausible, 0);
	ck_assert_msg(out.start >= S - 1 && out.start <= S, "start %" G_GINT64_FORMAT ", truth %" G_GINT64_FORMAT,
		      out.start, S);
	numbering_free(n);
}
END_TEST

/* Restart from n records late by lat[k] ns each after the overrun (the run
 * before: 20-25 us); returns the output, *truth the true first frame. */
static numbering_out restart_with(const double *lat, int n_rec, int64_t *truth)
{
	const char *why = NULL;
	numbering_params p = {.rate_hz = RATE, .period = PERIOD, .buffer = 8 * PERIOD, .boundary = BOUNDARY};
	const double nspf = 1e9 / RATE;
	const int64_t t0 = 1000000000000LL;
	numbering *n = numbering_new(&p, &why);
	numbering_out out = {0};
	ck_assert_ptr_nonnull(n);
	numbering_set_hw_start(n, 0);
	numbering_start(n, t0);
	for (int64_t k = 1; k <= 300; k++) {
		int64_t hw = k * PERIOD;
		numbering_record(n, (uint64_t)hw, t0 + llround(hw * nspf) + 20000 + (k % 5) * 1000, &out);
		numbering_wrote(n, PERIOD);
	}
	*truth = 300 * PERIOD + 10000;
	numbering_overrun(n, t0 + llround(*truth * nspf) - 1000);
	for (int k = 1; k <= n_rec; k++) {
		int64_t hw = k * PERIOD;
		numbering_hold(n, PERIOD);
		numbering_record(n, (uint64_t)hw, t0 + llround((*truth + hw) * nspf) + llround(lat[k - 1]), &out);
	}
	ck_assert_int_eq(out.settled, 1);
	numbering_free(n);
	return out;
}

/* A restart whose records all come late (the load that caused the overrun
 * delays the wakeups after it): bench/honesty once numbered a run 27
 * frames (0.56 ms at 48 kHz) off real time while stating 0.17 frames, its
 * wakeup-stamped ALSA records 27 frames late at least, median +29.9 and max
 * +152.8 above the least.  The least record's own latency, bounded by the
 * others' spread above it, is now in the stated error; with interrupt times
 * (20-25 us, as before the overrun) the error stays a fraction of a frame. */
START_TEST(restart_under_load)
{
	const double f = 1e9 / RATE; /* ns per frame */
	double late[8] = {27 * f, 31 * f, 40 * f, 52 * f, 62 * f, 90 * f, 120 * f, 179.8 * f};
	int64_t truth;
	numbering_out out = restart_with(late, 8, &truth);
	double z = fabs((double)(out.start - truth)) / out.start_se;
	ck_assert_msg(out.start - truth >= 26 && z < 3, "start %+" G_GINT64_FORMAT " frames off, stated s.e. %.2f",
		      out.start - truth, out.start_se);
	double quiet[8] = {21000, 24500, 20300, 22800, 23900, 20900, 24100, 22200};
	out = restart_with(quiet, 8, &truth);
	ck_assert_msg(llabs(out.start - truth) <= 1 && out.start_se < 0.5, "quiet restart %+" G_GINT64_FORMAT " frames, s.e. %.2f",
		      out.start - truth, out.start_se);
}
END_TEST

/* A broken fit (observations of two inconsistent lines: here a 3 s step of
 * the cpu clock, as after a misnumbered run; chorus-sim --chaos found a
 * restart predicted at frame 5.8e18) must not number the next run: a prediction beyond what any
 * card's rate allows since the newest observation, or one whose own s.e.
 * is beyond that bound, is replaced by the start that observation and the
 * nominal rate give, and flagged. */
START_TEST(restart_from_a_broken_fit)
{
	const char *why = NULL;
	numbering_params p = {.rate_hz = RATE, .period = PERIOD, .buffer = 8 * PERIOD, .boundary = BOUNDARY};
	numbering *n = numbering_new(&p, &why);
	numbering_out out = {0};
	const double nspf = 1e9 / RATE;
	const int64_t t0 = 1000000000000LL;
	ck_assert_ptr_nonnull(n);
	numbering_set_hw_start(n, 0);
	numbering_start(n, t0);
	for (int64_t k = 1; k <= 300; k++) {
		int64_t hw = k * PERIOD;
		/* the cpu clock steps 3 s forward at record 200 */
		int64_t step = k >= 200 ? 3000000000LL : 0;
		numbering_record(n, (uint64_t)hw, t0 + step + llround(hw * nspf) + 20000, &out);
		numbering_wrote(n, PERIOD);
	}
	const int64_t S = 300 * PERIOD + 10000, step = 3000000000LL;
	numbering_overrun(n, t0 + step + llround(S * nspf) - 1000);
	for (int64_t k = 1; k <= 8; k++) {
		int64_t hw = k * PERIOD;
		numbering_hold(n, PERIOD);
		numbering_record(n, (uint64_t)hw, t0 + step + llround((S + hw) * nspf) + 20000, &out);
	}
	ck_assert_int_eq(out.settled, 1);
	ck_assert_int_eq(out.implausible, 1);
	/* (here the fit's line happened to pass near the truth, but its
	 * stated s.e. was beyond the bound: not a number to number with) */
	ck_assert_msg(out.start_se <= (double)p.buffer, "s.e. %.1f frames", out.start_se);
	ck_assert_msg(out.start >= S - 2 && out.start <= S + 2, "start %" G_GINT64_FORMAT ", truth %" G_GINT64_FORMAT,
		      out.start, S);
	numbering_free(n);
}
END_TEST

/* Short runs (issue 15): an overrun every quarter second (24 records a
 * run), 40 in a row, on 50 cards of 5 us + exponential 50 us latency.
 * Each restart's index error is the sum of its own and every earlier
 * one's, and the stated index error is the root sum of their squares
 * (audiod's index_se_frames): every restart within 5 of it.  Before the
 * restarted run's records started the fit afresh and the first frame was
 * the likeliest rather than the floored one, an envelope across runs
 * numbered a frame apart extrapolated with the step's tilt and the index
 * drifted by a frame per restart in some runs: 18 of these 2000 restarts
 * beyond 5 s.e., 87 frames off at worst (the test_audiod_xrun failure
 * "+8 frames, stated s.e. 2.23" under load); now none, 11 at worst. */
START_TEST(short_runs_keep_the_index)
{
	int beyond = 0, n = 0, worst = 0;
	double z2 = 0;
	for (int sd = 0; sd < 50; sd++) {
		card c;
		card_init(&c, LAT_EXP, 64 * PERIOD, 700 + sd);
		numbering_start(c.n, c.t0_ns);
		for (int i = 0; i < 24; i++)
			wakeup(&c);
		double var = 0;
		for (int x = 0; x < 40; x++) {
			int away = 1 + (int)gsl_rng_uniform_int(c.r, 3);
			overrun(&c, away, (int64_t)(1e5 + 3e6 * gsl_rng_uniform(c.r)));
			int settled = c.settled;
			for (int w = 0; w < 24; w++)
				wakeup(&c);
			ck_assert_int_eq(c.settled, settled + 1);
			var += c.last.start_se * c.last.start_se;
			double off = (double)c.off[c.run], z = off / sqrt(var);
			z2 += z * z;
			n++;
			beyond += fabs(z) > 5;
			worst = MAX(worst, abs((int)off));
		}
		card_free(&c);
	}
	fprintf(stderr, "short runs: %d restarts, index RMS z %.2f, %d beyond 5 s.e., worst %d frames\n", n, sqrt(z2 / n),
		beyond, worst);
	ck_assert_msg(beyond == 0, "%d of %d restarts' indices beyond 5 stated s.e. (worst %d frames)", beyond, n, worst);
	ck_assert_msg(sqrt(z2 / n) < 1.5, "index RMS z %.2f", sqrt(z2 / n));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("numbering");
	TCase *tc = tcase_create("numbering");
	tcase_add_test(tc, steady_indices_exact);
	tcase_add_test(tc, short_runs_keep_the_index);
	tcase_add_test(tc, xruns_per_latency_shape);
	tcase_add_test(tc, restart_continues_numbering);
	tcase_add_test(tc, alsa_timestamps);
	tcase_add_test(tc, restart_without_records);
	tcase_add_test(tc, lost_records_and_double_overrun);
	tcase_add_test(tc, bad_params);
	tcase_add_test(tc, first_record_late);
	tcase_add_test(tc, record_behind_is_left_out);
	tcase_add_test(tc, restart_early_record);
	tcase_add_test(tc, restart_under_load);
	tcase_add_test(tc, restart_from_a_broken_fit);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
