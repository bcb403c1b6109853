/* stream.h — one captured audio device: the capture thread that moves
 * periods from ALSA into the ring and turns period-interrupt timestamps into
 * (frame, cpu time) observations (docs/architecture.md §4.2).
 *
 * The capture thread does only that, at real-time priority where permitted,
 * and never waits for anything but the sound card: no socket, no client.  After
 * each wakeup it posts a stream_event to the main context, where the devices
 * serve clients from the ring.  The timestamp source is chosen by
 * audiod/tsrc.h; the frame numbering is audiod/numbering.h's.
 *
 * Frame indices are absolute: 0 is the first frame captured.  After an
 * overrun the index keeps tracking real time: the frames lost are counted
 * from the timestamps (the pre-overrun fit predicts the frame index of the
 * first interrupt after restart), written to the ring as a gap, and the
 * event says so with `brk` (a new timehist segment).
 */
#ifndef CHORUS_AUDIOD_STREAM_H
#define CHORUS_AUDIOD_STREAM_H

#include <glib.h>
#include <stdint.h>

#include "audiod/capture.h"
#include "audiod/follow.h"
#include "audiod/ring.h"
#include "audiod/tsrc.h"

typedef struct {
	capture_cfg cap;
	double ring_s;           /* history kept, s */
	tsrc_kind tstamp;        /* wanted source (TSRC_AUTO: best available) */
	const char *sidechannel; /* simulator side channel path; NULL = default for the PCM */
	int rt_priority;         /* SCHED_FIFO priority of the capture thread; 0 = normal */
	double floor_ns;         /* calibrated latency floor, ns: the device subtracts it from every timestamp */
	double floor_sd_ns;      /* its standard error, ns: stated to syncd as the pair's systematic term */
} stream_cfg;

#define STREAM_EVENT_OBS 64
#define STREAM_MAX_FOLLOWERS 64 /* ring followers per device (audiod/follow.h) */

typedef struct {
	int64_t next;             /* ring's next frame after this wakeup */
	int64_t gap_from, gap_to; /* frames lost [from, to) before `next`, or equal when none */
	int brk;                  /* a discontinuity precedes these observations */
	int64_t brk_from;         /* with brk: the first frame of the run that follows it */
	int64_t wake_ns, post_ns; /* cpu times the capture thread woke and queued this event (path latencies) */
	uint32_t nobs;            /* observations that follow */
	struct {
		int64_t frame;  /* absolute frame index at the interrupt */
		int64_t cpu_ns; /* node cpu time of the interrupt, ns */
	} obs[STREAM_EVENT_OBS];
} stream_event;

/* Runs on the main context for every wakeup that produced something. */
typedef void (*stream_event_fn)(void *user, const stream_event *ev);

typedef struct {
	tsrc_kind source;                       /* timestamp source in use */
	char source_path[128];                  /* its FIFO/device, or "" */
	uint64_t frames;                        /* frames captured (ring next) */
	uint64_t xruns;                         /* overruns recovered */
	uint64_t gaps;                          /* gaps written (an overrun before the last one's restart
						 * settled adds no gap of its own: the two lose one span) */
	uint64_t frames_lost;                   /* frames lost to overruns */
	double restart_se_frames;               /* the last restart's first frame: its standard error (numbering.h start_se), 0 before one */
	double restart_var_frames2;             /* the sum of every restart's start_se^2 this numbering (the index's error) */
	uint64_t records;                       /* timestamp records / observations taken */
	uint64_t records_lost;                  /* records lost by seq gaps or producer overflow */
	uint64_t malformed;                     /* malformed records rejected */
	uint64_t behind;                        /* records whose hw_ptr was behind the last one's, left out */
	uint64_t updated;                       /* records timed after the hw_ptr update (kpatch version 2) */
	int64_t bracket_p50_ns, bracket_p99_ns; /* their entry -> after-update time (update_ns) */
	int64_t bracket_max_ns;
	uint64_t wakeups;                           /* wakeups with data */
	int64_t lat_p50_ns, lat_p99_ns, lat_max_ns; /* interrupt -> wakeup latency */
	uint64_t lat_n;                             /* its samples (0 with ALSA timestamps: no interrupt time) */
	int64_t lat_max_at_ns;                      /* cpu time of the wakeup with the largest latency */
	uint32_t lat_max_records;                   /* records that wakeup read (> 1: it had slept through an interrupt) */
	/* The path from the wakeup to the clients (issue 17), p50 and p99 over
	 * the last 2 s, ns: the capture thread's own work (wakeup -> event
	 * queued: reading the card, the ring, the numbering), the hop to the
	 * main loop (queued -> handled) and the handler (the sends to every
	 * streaming client). */
	int64_t commit_p50_ns, commit_p99_ns, dispatch_p50_ns, dispatch_p99_ns, send_p50_ns, send_p99_ns;
	int64_t notify_p50_ns, notify_p99_ns; /* wakeup -> every follower woken (0 without followers) */
	int audio_type;                       /* ALSA audio timestamp the driver offers (-1: none) */
	int64_t audio_accuracy_ns;            /* its reported accuracy (-1: not reported) */
	int rt;                               /* 1 when the thread runs SCHED_FIFO */
} stream_stats;

typedef struct stream stream;

/* Open the PCM, the ring and the timestamp source; the thread is not started.
 * Returns 0 and *out, or -errno with err set (AUDIOD_ERROR, audiod/error.h;
 * code the errno, the message names the PCM and what failed). */
int stream_open(const stream_cfg *cfg, GMainContext *main_ctx, stream_event_fn fn, void *user,
		stream **out, GError **err);

/* Continue the frame numbering of an earlier run of this device (before
 * stream_start): n >= 2 points (cpu ns, frame) on the line that held then,
 * e.g. from syncd's audio<k> <-> cpu conversion, which outlives audiod.  The
 * first run then starts at the frame that line predicts for its first
 * interrupt, instead of 0, so indices keep meaning the same instants across
 * a restart of audiod.  Returns 0 or -EINVAL (times not increasing). */
int stream_continue_numbering(stream *s, const int64_t *cpu, const int64_t *frame, int n);

/* Start the capture thread.  Returns 0, or -EAGAIN with err set
 * (AUDIOD_ERROR) when the thread cannot be created. */
int stream_start(stream *s, GError **err);

/* Stop the thread, close everything (NULL is fine). */
void stream_free(stream *s);

/* The ring (owned by the stream). */
audio_ring *stream_ring(stream *s);

/* The ring's followers, woken by the capture thread right after each
 * wakeup's commit, before the event for the main loop is queued (owned by
 * the stream; the follow device adds and removes members). */
follow_set *stream_followers(stream *s);

/* The parameters the device accepted. */
const capture_cfg *stream_params(stream *s);

/* A snapshot of the counters (thread-safe). */
void stream_get_stats(stream *s, stream_stats *st);

#endif
