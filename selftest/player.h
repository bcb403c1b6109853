/* player.h — chorus-selftest's player: plays the known signal (signal.h)
 * into an ALSA PCM (the loopback card's playback side, hw:Loopback,0,0) on a
 * thread of its own, and times its own playback so that every played frame
 * has a time on the cpu clock (CLOCK_MONOTONIC_RAW) independent of audiod.
 *
 * Its timestamps are the kpatch module's records of the playback
 * substream's period interrupts when /dev/chorus_kpatch opens for it, else
 * ALSA's htimestamp of the playback hw_ptr (status before every write); the
 * (frame, time) pairs go through the same lower-envelope timehist that
 * audiod uses, which states the error of every conversion.
 */
#ifndef CHORUS_SELFTEST_PLAYER_H
#define CHORUS_SELFTEST_PLAYER_H

#include <glib.h>
#include <stdint.h>

#include "selftest/signal.h"

typedef struct {
	const char *pcm;  /* playback PCM name */
	unsigned rate_hz; /* frames/s (the capture side's) */
	unsigned period;  /* frames per period */
	unsigned periods; /* periods in the buffer */
	int64_t frames;   /* frames to play */
	int rt_priority;  /* SCHED_FIFO priority of the thread (0: normal) */
	sig_params sig;   /* what to play */
} player_cfg;

typedef struct {
	int64_t played;        /* signal frames written and drained (a fifth of a second of silence follows them) */
	uint64_t underruns;    /* playback underruns (the capture then is not the signal) */
	uint64_t records;      /* timestamps fed to the fit */
	uint64_t records_lost; /* kpatch records lost (seq gaps, overflow) */
	const char *source;    /* "kpatch" or "alsa" */
	int rt;                /* the thread ran SCHED_FIFO */
	char error[256];       /* why the player stopped early; "" when it did not */
} player_stats;

typedef struct player player;

/* Open the PCM and start the thread.  Returns the player, or NULL with err
 * set (G_IO_ERROR_FAILED; the message names the PCM and what failed). */
player *player_start(const player_cfg *cfg, GError **err);

/* Wait until everything is played and drained; fills *st.  The player
 * stays valid for player_time() until player_free(). */
void player_join(player *p, player_stats *st);

/* The cpu time (ns, CLOCK_MONOTONIC_RAW) at which played frame `frame`
 * passed the PCM's hardware pointer, with its standard error (ns), from the
 * player's own fit.  Returns 0, or -errno with the reason in why. */
int player_time(const player *p, int64_t frame, double *t_ns, double *se_ns, char *why, size_t len);

/* Close and free (NULL is fine; joins the thread first). */
void player_free(player *p);

#endif
