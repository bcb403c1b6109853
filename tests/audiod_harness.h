/* audiod_harness.h — run the real syncd and audiod of one simulated node for
 * the audiod tests and benchmark, and know the truth about what they capture.
 *
 * ah_start() puts the calling process into virtual node N (CHORUS_NODE,
 * CHORUS_SIM_CLOCK from the scenario, CHORUS_SCENARIO, CHORUS_SIM_EPOCH_NS
 * pinned to now, ALSA_CONFIG_PATH with the simulator's PCM), spawns
 * build/bin/syncd and build/bin/audiod (they die with the caller:
 * PR_SET_PDEATHSIG) and waits, by polling the status device with a generous
 * overall limit (no fixed sleeps), until audiod has captured a little.
 * ah_find_f0() recovers the world frame of audiod's frame 0 by matching
 * captured samples against sim_world_sample near the frame predicted from
 * the epoch and the spawn time.
 *
 * The reader helpers are libdev sensor clients (dev_sensor_reader) driven on
 * a private GMainContext so several can run at once or be left unread.
 * Helpers fail the running Check test on anything unexpected (or call
 * ah_fail_hook when set: the benchmark, which runs outside Check).
 */
#ifndef CHORUS_TESTS_AUDIOD_HARNESS_H
#define CHORUS_TESTS_AUDIOD_HARNESS_H

#include <glib.h>
#include <stdint.h>

#include "libdev/dev.h"
#include "sim/scenario.h"
#include "sim/world.h"

/* Safety limit of any wait, s: reached only when something hangs. */
#define AH_SAFETY_S 30

/* Gaps a reader remembers. */
#define AH_MAX_GAPS 64

/* When set, called with the message of a failed requirement instead of
 * failing the Check test (it must not return). */
extern void (*ah_fail_hook)(const char *msg);

/* Fail: the hook, else the running Check test.  Does not return. */
void ah_fail(const char *file, int line, const char *fmt, ...) G_GNUC_PRINTF(3, 4) G_GNUC_NORETURN;
#define AH_REQUIRE(cond, ...) \
	do { \
		if (!(cond)) \
			ah_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

typedef struct {
	const char *pcm;         /* ALSA PCM (default "chorus_sim") */
	const char *alsa_extra;  /* extra ALSA config text (pcm definitions), or NULL */
	const char *audiod_conf; /* INI text of audiod's config file, or NULL (64 periods of buffer) */
	const char *tstamp;      /* --tstamp, or NULL */
	const char *obs_log;     /* --obs-log, or NULL */
	unsigned channels;       /* 0 = the node's mics */
	unsigned period;         /* frames, 0 = audiod's default */
} ah_opts;

typedef struct {
	int node;
	unsigned rate_hz, channels, period;
	char run[512]; /* this instance's CHORUS_RUN */
	GPid syncd, audiod;
	sim_scenario *sc;
	sim_world *w;
	int64_t epoch_ns;      /* host raw ns of world time 0 */
	int64_t spawn_host_ns; /* host raw ns just before audiod was spawned */
	int64_t f0;            /* world frame of audiod frame 0 (after ah_find_f0) */
	char **audiod_argv;    /* how audiod was started (for ah_restart_audiod) */
} ah_node;

/* The test scenario (tests/data/audiod.ini), absolute. */
const char *ah_scenario(void);

/* Start syncd + audiod for `node` of the test scenario under a fresh
 * $CHORUS_RUN/<tag> and wait until audiod reports frames.  Fails the test
 * on error. */
void ah_start(ah_node *h, int node, const char *tag, const ah_opts *o);

/* Stop audiod (SIGTERM; it must exit 0) and start it again the same way;
 * syncd keeps running.  Does not wait for the new audiod. */
void ah_restart_audiod(ah_node *h);

/* SIGTERM both daemons and reap them (audiod's exit status must be 0),
 * free the world. */
void ah_stop(ah_node *h);

/* Host raw clock, ns (CLOCK_MONOTONIC_RAW, no simulation). */
int64_t ah_host_now(void);

/* Read audio/0/status into a NUL-terminated string (g_free).  Fails the test
 * if the device does not answer. */
char *ah_status(void);

/* The integer after "key=" in a status text (first occurrence); fails the
 * test when absent. */
int64_t ah_field(const char *text, const char *key);

/* Wait until audiod has captured at least n frames; returns the count. */
int64_t ah_wait_frames(int64_t n);

/* Expected S16 sample of world frame F, channel c. */
int16_t ah_expect_s16(const ah_node *h, int c, int64_t F);

/* Index of the first mismatch of `n` interleaved S16 frames of all
 * `nch` channels `chan[]` (NULL = 0..nch-1) against the world from world
 * frame F; -1 when all equal. */
long ah_mismatch(const ah_node *h, const int16_t *x, size_t n, unsigned nch, const uint16_t *chan, int64_t F);

/* Find h->f0 (fails the test if no candidate matches). */
void ah_find_f0(ah_node *h);

/* The world frame of frame 0 of sensor device `device` (another audio/<k>). */
int64_t ah_find_f0_on(ah_node *h, const char *device);

/* One sensor client on `ctx`. */
typedef struct {
	dev_sensor_reader *r;
	int64_t first, last; /* resolved by the service */
	uint32_t item_size;
	char *reply;              /* the service's reply text */
	GByteArray *data;         /* items received, contiguous from `first` except gaps */
	int64_t next;             /* next index expected */
	int64_t gap_from, gap_to; /* first gap seen */
	int64_t gap_to_last;      /* end of the last gap seen */
	struct {
		int64_t from, to;
	} gap[AH_MAX_GAPS]; /* the first AH_MAX_GAPS gaps */
	int gaps;           /* gap markers */
	int out_of_order;   /* chunks not at `next` (never expected) */
	int ended, err;     /* END seen; error (negative errno) */
	char *errmsg;
	int64_t stop_after;                                    /* stop collecting data beyond this many items (0 = keep all) */
	void (*on_chunk)(void *user, int64_t first, size_t n); /* every chunk, or NULL */
	void *chunk_user;
} ah_reader;

/* Open a reader of audio/0/data for [first, last) (DEV_SENSOR_OPEN_END for
 * open-ended) with a params text (NULL = none) and flags. */
ah_reader *ah_reader_new(GMainContext *ctx, int64_t first, int64_t last, uint32_t flags, const char *params);

/* The same on sensor device `device` (e.g. "audio/1/data"). */
ah_reader *ah_reader_new_on(GMainContext *ctx, const char *device, int64_t first, int64_t last, uint32_t flags,
			    const char *params);

void ah_reader_free(ah_reader *r);

/* Iterate ctx until `done(user)` or the safety limit (fails the test). */
void ah_spin(GMainContext *ctx, gboolean (*done)(void *user), void *user);

/* Iterate ctx until every reader has ended or failed. */
void ah_spin_readers(GMainContext *ctx, ah_reader **r, int n);

/* Read [first, last) at once with params; the reader is done (ended or
 * failed) on return. */
ah_reader *ah_read(int64_t first, int64_t last, const char *params);

/* The same on sensor device `device`. */
ah_reader *ah_read_on(const char *device, int64_t first, int64_t last, const char *params);

#endif
