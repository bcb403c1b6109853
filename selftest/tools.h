/* tools.h — chorus-selftest drives chorus's own command-line clients, as a
 * user would: chorus-cat for audiod's status, audioget for data (streamed
 * with --follow, fetched by frames or by time), synctool for conversions.
 * Each is found next to chorus-selftest's own binary, else on PATH.
 */
#ifndef CHORUS_SELFTEST_TOOLS_H
#define CHORUS_SELFTEST_TOOLS_H

#include <glib.h>
#include <stdint.h>

#include "libsync/conv.h"

/* Set the directory the tools are looked for in first (NULL: the
 * directory of /proc/self/exe). */
void tools_set_dir(const char *dir);

/* Run the tool argv[0] (a bare name, found as above) with argv, wait for
 * it; its stdout in *out, stderr in *errout (both g_free'd by the caller,
 * either may be NULL).  Returns the exit status, or -1 with *errout set
 * when it could not be run or was killed. */
int tools_run(char **argv, char **out, char **errout);

/* audiod's status device audio/K/status, parsed (what the self-test reads). */
typedef struct {
	char pcm[128];
	unsigned rate, channels, period, buffer;
	char format[16];
	uint64_t captured; /* frames captured */
	uint64_t xruns, frames_lost;
	double restart_se_frames; /* the last restart's first frame: its stated s.e. */
	char source[16];          /* tstamp source= */
	uint64_t records, lost, malformed;
	uint64_t updated;                                      /* records timed after the hw_ptr update (tstamp updated=) */
	double bracket_p50_us, bracket_p99_us, bracket_max_us; /* their bracket (bracket_us), 0 without */
	double systematic_us;
	int have_fit;
	double fit_rate, rate_se_ppm, residual_ns;
	unsigned fit_n, segment;
	double lat_p50_us, lat_p99_us, lat_max_us;
	int rt;
	char text[2048]; /* the whole status text */
} tools_status;

/* Read and parse audio/K/status through chorus-cat.  Returns 0, or -1 with
 * the reason in why. */
int tools_status_read(int k, tools_status *st, char *why, size_t len);

/* One reply of audioget: the frame range and the stated time of its first
 * frame (t0 on t0_clock, t0_se, period, period_se), se_frames for a time
 * request, and the samples (the WAV it wrote, read back). */
typedef struct {
	int64_t first, last;
	double se_frames, se_ns;
	char t0_clock[32];
	sync_tval t0; /* time of frame `first` on t0_clock (integer + fraction: global ns need 64 bits) */
	double t0_se, period, period_se;
	int have_t0;
	int32_t *samples; /* interleaved, native ints (S16 and S24 sign-extended) */
	int64_t nframes;
	unsigned channels;
} tools_reply;

/* audioget --first F --last L (by frames) or --clock CLOCK --from T0 --to
 * T1 (by time: clock non-NULL) into a temporary WAV; parses its report and
 * reads the samples back.  Returns 0, or -1 with the reason in why. */
int tools_get(int k, const char *clock, int64_t a, int64_t b, tools_reply *r, char *why, size_t len);

/* Free the samples of r. */
void tools_reply_clear(tools_reply *r);

/* synctool convert FROM TO VALUE: *out ± *se (TO's unit).  Returns 0, or -1
 * with the reason in why. */
int tools_convert(const char *from, const char *to, sync_tval value, sync_tval *out, double *se, char *why, size_t len);

/* Parse "123.456" (an integer and an optional fraction) exactly into *v.
 * Returns 0 or -1. */
int tools_parse_tval(const char *s, sync_tval *v);

/* A running `audioget --follow`: its raw stdout collected by a thread. */
typedef struct tools_follow tools_follow;

/* Start it on audio/K/data.  Returns it, or NULL with the reason in why. */
tools_follow *tools_follow_start(int k, char *why, size_t len);

/* The first frame it was served (from its report), -1 until known. */
int64_t tools_follow_first(tools_follow *f);

/* Stop it (SIGINT), wait, and hand over what it wrote: *data (g_free) of
 * *bytes, its first frame, and the gaps it reported ([from, to) pairs in
 * *gaps, *ngaps of them; g_free).  Returns its exit status (0: clean). */
int tools_follow_stop(tools_follow *f, uint8_t **data, size_t *bytes, int64_t *first, int64_t **gaps,
		      int *ngaps);

#endif
