/* render_ahead.h — the virtual microphone's "DMA engine": a thread that
 * renders the simulated world's samples ahead of the reader, so that the
 * reader's transfer is a copy as it is on a real sound card (issue 17).
 *
 * Rendering the world (sources, reflections, noise, the background field) is
 * the expensive part of the simulated capture: about 0.4 us per sample here,
 * 0.8 ms for a 10 ms period of 4 channels at 48 kHz.  Done inside the
 * reader's snd_pcm_readi it sits between the capture thread's wakeup and the
 * ring commit, a delay a real card's DMA does not have.  This thread renders
 * the frames the reader will ask for next while nothing else wants the CPU
 * (SCHED_IDLE): a normal-priority thread that wakes preempts it at once.
 *
 * The world is a pure function of the frame index (sim/world.h), so rendering
 * ahead of the frames' true time changes nothing the reader sees: a frame not
 * rendered yet (a restart at a new frame, a starved thread) is rendered by
 * the reader itself, and both give the same values bit for bit.
 *
 * Frames are keyed by absolute frame index; the cache holds one contiguous
 * range [first, end) of at most `capacity` frames.  Thread-safe.
 */
#ifndef CHORUS_SIM_RENDER_AHEAD_H
#define CHORUS_SIM_RENDER_AHEAD_H

#include <stdint.h>

/* One sample of channel ch at absolute frame `frame`.  Called from the
 * render thread and from the reader: must be safe to call concurrently. */
typedef double (*render_sample_fn)(void *user, unsigned ch, int64_t frame);

typedef struct render_ahead render_ahead;

typedef struct {
	uint64_t rendered; /* frames the thread rendered */
	uint64_t hits;     /* frames the reader took from the cache */
	uint64_t misses;   /* frames the reader rendered itself */
	uint64_t resets;   /* times the reader asked outside the cache (start, xrun) */
} render_ahead_stats;

/* A cache of `capacity` frames of `channels` channels and its thread
 * (named `name`, at most 15 characters; SCHED_IDLE where the system allows,
 * else normal priority).  The reader does not wake the thread when it takes
 * frames (that wakeup would sit on the reader's path); the thread looks
 * every `look_ns` (chorus_sim: a period, keeping three ahead) and is woken only
 * when the reader asks outside the cache.  Returns NULL when memory or the
 * thread cannot be had, or look_ns <= 0 (the caller then renders
 * everything itself). */
render_ahead *render_ahead_new(unsigned channels, uint64_t capacity, int64_t look_ns, render_sample_fn fn,
			       void *user, const char *name);

/* Stop and join the thread, free everything.  NULL is fine. */
void render_ahead_free(render_ahead *r);

/* Fill out[i * channels + c] with frames [first, first + n): from the cache
 * where rendered, the rest by calling fn here.  Then tell the thread the
 * reader's next frame is first + n and to render up to `ahead` frames past
 * it (clamped to the capacity); the thread is woken only when this was a
 * reset (the first request, or one outside the cache). */
void render_ahead_get(render_ahead *r, int64_t first, uint64_t n, double *out, uint64_t ahead);

/* Counters so far. */
void render_ahead_get_stats(render_ahead *r, render_ahead_stats *st);

#endif
