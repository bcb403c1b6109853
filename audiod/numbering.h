/* numbering.h — absolute frame numbering of one capture stream across
 * overruns and restarts (pure: records in, indices and gaps out).
 *
 * Frame indices are absolute: 0 is the first frame captured, unless the
 * numbering continues an earlier run's (numbering_continue).  The module
 * turns timestamps of the sound card's period interrupts into (frame, cpu)
 * observations and keeps the index on real time across an overrun: the
 * frames lost are counted from the timestamps.  A fit of the recent
 * observations (an upper envelope of frame against cpu time: interrupt
 * latency only makes cpu late, so frames look early) predicts the index of
 * each interrupt record of the restarted run; every record's latency makes
 * its prediction late, so the run's first frame is the least of them
 * (records are held back until min(8, max(1, buffer/period)) are in;
 * a prediction more than 3.5 robust sigmas, 4 residual RMS of the fit and
 * a frame below their median is an early record, not a small latency, and
 * is left out), taken to the whole frame its excess over the true first
 * frame makes likeliest (the least latency, exponential with the mean the
 * records' spread gives, plus the fit's stated error there: flooring lost
 * a frame a restart when the fit was known only to tenths of a frame).
 * The new run's records then start the fit afresh (an envelope across runs
 * numbered a frame apart is tilted by the step).  With no record at all
 * the run began when it was started (the restart time's prediction).
 *
 * The caller (audiod/stream.c) does the I/O: it reads the PCM and the
 * timestamp source, passes every record, ALSA timestamp and read in, and
 * applies what comes out (a numbering_out) to its ring and events, in the
 * order of the fields.  While a restart is unsettled the frames read are
 * held by the caller (in a buffer of `buffer` frames) and only counted here;
 * when it settles they are to be written after the gap.
 *
 * No I/O, no clocks read (times are passed in, ns on the node's cpu clock),
 * no globals; allocation only in numbering_new.  Not thread safe: one
 * numbering per capture thread.
 */
#ifndef CHORUS_AUDIOD_NUMBERING_H
#define CHORUS_AUDIOD_NUMBERING_H

#include <stdint.h>

/* At most this many interrupt records after an overrun estimate the
 * restarted run's first frame.  The frames captured meanwhile are held in
 * the caller's read buffer (one ALSA buffer), so at most that many periods. */
#define NUMBERING_RESTART_RECORDS 8

typedef struct {
	unsigned rate_hz;  /* frames per second (> 0) */
	uint64_t period;   /* frames per period interrupt (> 0) */
	uint64_t buffer;   /* frames of the ALSA buffer = the caller's hold buffer (> 0) */
	uint64_t boundary; /* hw_ptr of the records wraps at this many frames (> 0) */
} numbering_params;

/* One observation: the absolute index of the frame at an interrupt and the
 * interrupt's time. */
typedef struct {
	int64_t frame;  /* absolute frame index */
	int64_t cpu_ns; /* node cpu time, ns */
} numbering_obs;

/* What one call produced, to be applied in this order.  Zero (settled == 0,
 * nobs == 0) when nothing happened. */
typedef struct {
	int settled;               /* a restart settled: the fields up to `flush` apply */
	int continued;             /* ... the first run continues an earlier numbering:
			     * the ring starts at `start` (nothing lost) */
	int64_t start;             /* absolute index of the restarted run's first frame */
	int64_t gap_from;          /* frames lost [gap_from, gap_to) before the run; */
	int64_t gap_to;            /* equal when none */
	uint64_t flush;            /* frames held since the restart, to write to the ring now */
	uint32_t rejected;         /* records of the restart whose prediction was far below the others' (early), left out */
	int behind;                /* this record was left out as stale: its hw_ptr was behind the last
			    * one's (modular arithmetic would read it as a whole ALSA boundary,
			    * ~2^62 frames, ahead), or it was timed before the restarting run began */
	uint32_t npred;            /* records the restart's first frame was predicted from (0: none, the restart time's) */
	double pred_med;           /* their median prediction, frames after `start` */
	double pred_max;           /* their largest, frames after `start` */
	int implausible;           /* the fit's start lay beyond what the card's rate allows since the newest
			    * observation: numbered on from it at the nominal rate instead */
	double implausible_frames; /* how far the fit's start was from that one, frames */
	double start_se;           /* standard error of `start` (frames): the pre-overrun fit's, extrapolated to the
			    * chosen record, with the records' median above the least (the least record's
			    * own latency): the index's continuity across the overrun is only this good */
	uint32_t nobs;             /* observations that follow, after the flush */
	numbering_obs obs[NUMBERING_RESTART_RECORDS];
} numbering_out;

typedef struct numbering numbering;

/* A new numbering at frame 0, not restarting.  Returns it, or NULL with a
 * static reason in *why (a parameter out of range, or out of memory). */
numbering *numbering_new(const numbering_params *p, const char **why);

/* Free n (NULL is fine). */
void numbering_free(numbering *n);

/* Every run (the first and each restart) starts with the records' hw_ptr
 * at hw0: ALSA resets hw_ptr to 0 at prepare, so audiod passes 0.  The
 * first record of a run then counts its frames from hw0, however late it
 * came.  Without this call the first record is taken to be one period
 * after the start (exact only for a card whose interrupt comes with
 * hw_ptr on the period boundary). */
void numbering_set_hw_start(numbering *n, uint64_t hw0);

/* Continue an earlier run's numbering (before numbering_start): n_pts >= 2
 * points (cpu ns, frame) on the line that held then, cpu not decreasing.
 * The first run then starts at the frame that line predicts for its first
 * interrupt (with fewer than 3 points it cannot predict, and the run starts
 * at frame 0).  Returns 0, or -EINVAL: fewer than 2 points (nothing
 * changed), or cpu going backwards (the fit is then emptied). */
int numbering_continue(numbering *n, const int64_t *cpu, const int64_t *frame, int n_pts);

/* The stream started at cpu time now_ns (ns).  When the numbering continues
 * an earlier run's, the first run is settled like a restart after an
 * overrun; else it simply begins at frame 0. */
void numbering_start(numbering *n, int64_t now_ns);

/* The stream overran and was restarted at cpu time now_ns (ns): the run's
 * first frame is unknown until records of the new run come (or the hold
 * fills, or too many wakeups pass).  Frames held and records pending from
 * an unsettled earlier restart are dropped. */
void numbering_overrun(numbering *n, int64_t now_ns);

/* Nonzero while a restart is unsettled (frames read must be held). */
int numbering_restarting(const numbering *n);

/* The absolute index of the next frame to be written to the ring. */
int64_t numbering_next(const numbering *n);

/* One interrupt record (kpatch or the simulator's side channel): the
 * record's hw_ptr (frames, wrapping at `boundary`) and its time (cpu ns).
 * The first record of a run is taken to come one period after its start.
 * Fills *out: one observation, or nothing while the restart is unsettled
 * and this record is held, or the settled restart and its held records. */
void numbering_record(numbering *n, uint64_t hw_ptr, int64_t cpu_ns, numbering_out *out);

/* While not restarting (asserted): `frames` frames were written to the
 * ring. */
void numbering_wrote(numbering *n, uint64_t frames);

/* While not restarting: a direct observation (an ALSA timestamp: the frame
 * at the last hw_ptr update, taken as numbering_next + avail before the
 * reads that followed).  Fills *out with it. */
void numbering_observe(numbering *n, int64_t frame, int64_t cpu_ns, numbering_out *out);

/* While restarting: nonzero when an ALSA timestamp of the new run is still
 * wanted (fewer than the records needed are pending). */
int numbering_wants_stamp(const numbering *n);

/* While restarting: an ALSA timestamp of the new run, taken before this
 * wakeup's reads into the hold: `avail` frames beyond those held were
 * available at cpu time `cpu_ns`.  Ignored unless numbering_wants_stamp. */
void numbering_stamp(numbering *n, uint64_t avail, int64_t cpu_ns);

/* Frames held while restarting (written to the caller's buffer at this
 * offset, <= buffer). */
uint64_t numbering_held(const numbering *n);

/* While restarting: `frames` more were read into the hold (asserted: the
 * total stays <= buffer). */
void numbering_hold(numbering *n, uint64_t frames);

/* End of a wakeup: while restarting, settle the restart if enough records
 * are in, or as many as there will be (the hold is full, or more than twice
 * the records needed wakeups passed), or, with no record after more than
 * that plus two wakeups or a full hold, at the frame the fit predicts for
 * the restart time (the current end when it cannot).  Fills *out. */
void numbering_wakeup_end(numbering *n, numbering_out *out);

#endif
