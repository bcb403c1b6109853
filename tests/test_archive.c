/* test_archive.c — chorus-archive on the real audiod and syncd of a
 * simulated node, through its files and its status device, checked against
 * audiod's own ring and the world model's truth (sim/world.h):
 *
 *  - a range spanning segments and an xrun's gap reads back from the
 *    archive bit for bit equal to what audiod's ring served, with the gap
 *    where audiod reported it and never as samples;
 *  - kill -9 in the middle of a segment, then a restart: the recovered
 *    segment holds every frame received before the last completed flush
 *    (less at most one FLAC block still in the encoder), every file
 *    decodes, the frames equal the world's, and the recording continues
 *    without a hole (audiod's ring covered the outage);
 *  - on a tiny tmpfs the oldest segments are dropped to keep the reserve
 *    free, the newest are kept, and every file left decodes exactly.
 */
#include <check.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "archive/store.h"
#include "archive/timeline.h"
#include "tests/audiod_harness.h"
#include "tests/check_run.h"

#define NODE 2
#define RATE 48000
/* libFLAC's block at compression level 5 (its blocksize preset for 48 kHz):
 * the frames the encoder may hold that no flush has written. */
#define FLAC_BLOCK 4096

static void child_setup(gpointer log_path)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
}

/* Mount a tmpfs of `size` (mount's option text, "1536k") on dir in a
 * private mount namespace of this test's process (Check forks one per
 * test), so the mount goes with the process however the test ends; the
 * daemons it spawns inherit the namespace.  Exits 77 when that is not
 * permitted. */
static void tiny_tmpfs(const char *dir, const char *size)
{
	char opt[64];
	g_snprintf(opt, sizeof opt, "size=%s", size);
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", dir, "tmpfs", 0, opt) < 0) {
		fprintf(stderr, "test_archive: a tmpfs of %s on %s needs root and a mount namespace (%s); skipped\n", size, dir,
			g_strerror(errno));
		exit(77);
	}
}

static char arch_log[800];

/* Start chorus-archive on dir with extra key=value config text. */
static GPid spawn_archive(const ah_node *h, const char *dir, const char *conf_text)
{
	char conf[700];
	g_snprintf(conf, sizeof conf, "%s/archive.conf", h->run);
	char *text = g_strdup_printf("[archive]\ndir = %s\nstatus_interval_s = 0.1\n%s", dir, conf_text);
	ck_assert(g_file_set_contents(conf, text, -1, NULL));
	g_free(text);
	g_snprintf(arch_log, sizeof arch_log, "%s/archive.log", h->run);
	char *argv[] = {AH_BIN_DIR "/chorus-archive", "-c", conf, "-v", NULL};
	GPid pid;
	GError *err = NULL;
	ck_assert_msg(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, child_setup, arch_log, &pid, &err),
		      "spawn chorus-archive: %s", err ? err->message : "");
	return pid;
}

/* The archive's status text, or NULL while it does not answer. */
static char *arch_status(void)
{
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync("archive/status", FALSE, b, 2000);
	if (rc < 0) {
		g_byte_array_free(b, TRUE);
		return NULL;
	}
	return (char *)g_byte_array_free(b, FALSE);
}

/* Integer after "key=" in text, or -1. */
static int64_t field(const char *text, const char *key)
{
	char pat[64];
	g_snprintf(pat, sizeof pat, " %s=", key);
	const char *p = strstr(text, pat);
	return p ? g_ascii_strtoll(p + strlen(pat), NULL, 10) : -1;
}

/* Poll the status until field `key` reaches at least v; returns the text. */
static char *wait_field(const char *key, int64_t v)
{
	gint64 end = g_get_monotonic_time() + 3 * AH_SAFETY_S * G_USEC_PER_SEC;
	while (g_get_monotonic_time() < end) {
		char *s = arch_status();
		if (s && field(s, key) >= v)
			return s;
		g_free(s);
		g_usleep(50000);
	}
	ck_abort_msg("archive/status never showed %s >= %lld (log %s)", key, (long long)v, arch_log);
	return NULL;
}

static int stop(GPid pid, int sig)
{
	int st;
	kill(pid, sig);
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	g_spawn_close_pid(pid);
	return st;
}

typedef struct {
	GByteArray *data;
	int64_t first, next;
	int gaps;
	struct {
		int64_t from, to;
	} gap[AH_MAX_GAPS];
	const archive_index *x;
} readback;

static void rb_begin(void *user, const archive_index *x)
{
	readback *r = user;
	r->x = x;
}

static void rb_data(void *user, int64_t first, const void *frames, size_t n)
{
	readback *r = user;
	ck_assert_int_eq(first, r->next);
	g_byte_array_append(r->data, frames, (guint)(n * r->x->channels * 2));
	r->next = first + (int64_t)n;
}

static void rb_gap(void *user, int64_t from, int64_t to)
{
	readback *r = user;
	ck_assert_int_eq(from, r->next);
	if (r->gaps < AH_MAX_GAPS) {
		r->gap[r->gaps].from = from;
		r->gap[r->gaps].to = to;
	}
	r->gaps++;
	r->next = to;
}

static const archive_read_ops rb_ops = {rb_begin, rb_data, rb_gap};

/* Read [first, last) from the archive in dir. */
static readback *archive_get(archive_store *s, int64_t first, int64_t last)
{
	readback *r = g_new0(readback, 1);
	r->data = g_byte_array_new();
	r->first = r->next = first;
	GError *err = NULL;
	int64_t n = archive_store_read(s, NODE, 0, first, last, &rb_ops, r, &err);
	ck_assert_msg(n >= 0, "archive read: %s", err ? err->message : "");
	ck_assert_int_eq(r->next, last);
	return r;
}

static void readback_free(readback *r)
{
	g_byte_array_free(r->data, TRUE);
	g_free(r);
}

/* Every segment in the store decodes whole (libsndfile reads exactly the
 * frames its index says) and equals the world from f0. */
static void check_all_decode(const ah_node *h, archive_store *s, gboolean against_world)
{
	for (guint i = 0; i < archive_store_count(s); i++) {
		const archive_entry *en = archive_store_entry(s, i);
		char *p = g_strdup_printf("%s/%s.flac", archive_store_dir(s), en->name);
		SF_INFO in = {0};
		SNDFILE *sf = sf_open(p, SFM_READ, &in);
		ck_assert_msg(sf, "%s: %s", p, sf_strerror(NULL));
		ck_assert_int_eq(in.frames, en->x->frames);
		int16_t *buf = g_new(int16_t, (size_t)in.frames * (size_t)in.channels);
		ck_assert_int_eq(sf_readf_short(sf, buf, in.frames), in.frames);
		sf_close(sf);
		if (against_world) {
			long bad = ah_mismatch(h, buf, (size_t)in.frames, (unsigned)in.channels, NULL, h->f0 + en->x->first);
			ck_assert_msg(bad < 0, "%s: frame %lld differs from the world", p, (long long)(en->x->first + bad));
		}
		g_free(buf);
		g_free(p);
	}
}

/* Run audioget with argv; its stderr (g_free).  It must exit 0 and say
 * it read the archive and the first frame's time. */
static char *run_audioget(char **argv, int64_t first, int64_t last)
{
	char *err_text = NULL;
	int st;
	GError *err = NULL;
	ck_assert(g_spawn_sync(NULL, argv, NULL, 0, NULL, NULL, NULL, &err_text, &st, &err));
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "audioget failed:\n%s", err_text);
	ck_assert_msg(strstr(err_text, "source=archive"), "audioget did not read the archive:\n%s", err_text);
	ck_assert_msg(strstr(err_text, "t0_clock=global t0=") && !strstr(err_text, "t0=none"), "no time:\n%s", err_text);
	char want[64];
	g_snprintf(want, sizeof want, "first=%lld last=%lld ", (long long)first, (long long)last);
	ck_assert_msg(strstr(err_text, want), "expected %s in:\n%s", want, err_text);
	return err_text;
}

/* The file at path holds frames [first, last) of the ring's data `ring`
 * (which starts at ring->first), with the ring's gaps as zeros. */
static void compare_file(const char *out, int64_t first, int64_t last, const ah_reader *ring)
{
	SF_INFO in = {0};
	SNDFILE *sf = sf_open(out, SFM_READ, &in);
	ck_assert_msg(sf, "%s: %s", out, sf_strerror(NULL));
	ck_assert_int_eq(in.frames, last - first);
	int16_t *got = g_new(int16_t, (size_t)in.frames * 2);
	ck_assert_int_eq(sf_readf_short(sf, got, in.frames), in.frames);
	sf_close(sf);
	/* The ring's frames with its gaps as zeros, from ring->first. */
	const int16_t *rd = (const int16_t *)ring->data->data;
	int64_t f = ring->first, gi = 0;
	size_t off = 0;
	for (; f < last; f++) {
		while (gi < ring->gaps && f >= ring->gap[gi].to)
			gi++;
		gboolean in_gap = gi < ring->gaps && f >= ring->gap[gi].from;
		if (f >= first) {
			for (int c = 0; c < 2; c++) {
				int16_t e = in_gap ? 0 : rd[off * 2 + (size_t)c];
				ck_assert_msg(got[(f - first) * 2 + c] == e, "audioget frame %lld ch %d: %d, the ring had %d",
					      (long long)f, c, got[(f - first) * 2 + c], e);
			}
		}
		if (!in_gap)
			off++;
	}
	g_free(got);
}

/* Run audioget for [first, last) (frames, or by global time when
 * times = {from, to}) with the archive at dir; check its file against the
 * ring's data `ring` (which starts at ring->first), gaps as zeros. */
static void audioget_check(const ah_node *h, const char *dir, int64_t first, int64_t last, const ah_reader *ring,
			   const char **times)
{
	char out[900], a0[32], a1[32];
	g_snprintf(out, sizeof out, "%s/get-%lld.wav", h->run, (long long)first);
	g_snprintf(a0, sizeof a0, "%lld", (long long)first);
	g_snprintf(a1, sizeof a1, "%lld", (long long)last);
	char *byframe[] = {AH_BIN_DIR "/audioget", "--archive", (char *)dir, "--first", a0, "--last", a1, "-o", out, NULL};
	char *bytime[] = {AH_BIN_DIR "/audioget", "--archive", (char *)dir, "--clock", "global", "--from",
			  times ? (char *)times[0] : NULL, "--to", times ? (char *)times[1] : NULL, "-o", out, NULL};
	char *err_text = run_audioget(times ? bytime : byframe, first, last);
	compare_file(out, first, last, ring);
	g_free(err_text);
}

START_TEST(round_trip_segments_and_gap)
{
	ah_node h;
	/* An xrun 2.5 s after every (re)start: gaps inside the recording. */
	ah_opts o = {.pcm = "chorus_xrun", .alsa_extra = "pcm.chorus_xrun { type chorus_sim xrun_every 2.5 }\n"};
	ah_start(&h, NODE, "arch-rt", &o);
	ah_find_f0(&h);
	char dir[800];
	g_snprintf(dir, sizeof dir, "%s/archive", h.run);
	GPid a = spawn_archive(&h, dir, "segment_s = 1\nflush_s = 0.5\n");
	g_free(wait_field("gaps", 2));
	char *st = wait_field("segments", 5);
	int st_exit = stop(a, SIGTERM);
	ck_assert_msg(WIFEXITED(st_exit) && WEXITSTATUS(st_exit) == 0, "chorus-archive exit status %d:\n%s", st_exit, st);
	g_free(st);

	GError *err = NULL;
	archive_store *s = archive_store_open(dir, FALSE, &err);
	ck_assert_msg(s, "%s", err ? err->message : "");
	ck_assert_int_eq(archive_store_bad(s), 0);
	guint n = archive_store_count(s);
	ck_assert_uint_ge(n, 5);
	const archive_entry *g0 = archive_store_entry(s, 0), *el = archive_store_entry(s, n - 1);
	int64_t first = g0->x->first, last = el->x->first + el->x->frames;
	/* The same range from audiod's ring (60 s: it still holds it all). */
	ah_reader *ring = ah_read(first, last, NULL);
	ck_assert_msg(ring->ended && !ring->err, "ring read: %s", ring->errmsg ? ring->errmsg : "");
	ck_assert_int_ge(ring->gaps, 1);
	readback *r = archive_get(s, first, last);
	/* The gaps: the same spans, in the same order. */
	ck_assert_int_eq(r->gaps, ring->gaps);
	for (int i = 0; i < MIN(r->gaps, AH_MAX_GAPS); i++) {
		ck_assert_int_eq(r->gap[i].from, ring->gap[i].from);
		ck_assert_int_eq(r->gap[i].to, ring->gap[i].to);
	}
	/* The samples: bit for bit what the ring served (which leaves the
	 * gaps out too). */
	ck_assert_uint_eq(r->data->len, ring->data->len);
	ck_assert_msg(memcmp(r->data->data, ring->data->data, r->data->len) == 0, "archive differs from the ring");
	/* The index names each gap where the segment after it starts. */
	int named = 0;
	for (guint i = 0; i < n; i++)
		named += (int)archive_store_entry(s, i)->x->gaps->len;
	ck_assert_int_eq(named, ring->gaps);
	/* Before the first xrun the frames are the world's. */
	readback *w = archive_get(s, first, ring->gap[0].from);
	ck_assert_int_lt(ah_mismatch(&h, (const int16_t *)w->data->data, (size_t)(ring->gap[0].from - first), h.channels,
				     NULL, h.f0 + first),
			 0);
	/* Each segment placed its frames on the cpu clock, and on global
	 * time (syncd alone is its own root). */
	for (guint i = 0; i < n; i++) {
		const archive_index *x = archive_store_entry(s, i)->x;
		/* Each kept its first and last frame's conversions, but those
		 * closed before syncd's first ticker reached the recorder (the
		 * ring's backlog, written at once): they borrow their run's
		 * neighbours' (store.h).  The newest kept its own. */
		if (i == n - 1)
			ck_assert_uint_ge(x->times->len, 2);
		archive_when when;
		char why[256];
		ck_assert_msg(archive_time_of_frame(x, x->first, &when, why, sizeof why) == 0, "%s", why);
		/* One frame is 20833 ns; the period agrees with the rate to the
		 * clocks' skews (tens of ppm) and the fits' errors. */
		ck_assert_double_eq_tol(when.period_ns, 1e9 / RATE, 1e9 / RATE * 1e-3);
	}
	readback_free(w);
	readback_free(r);

	/* audioget, once audiod's new run no longer holds the range: the
	 * same samples from the archive, the gaps as zeros (audioget's
	 * convention for files) and reported. */
	kill(h.audiod, SIGTERM);
	int ast;
	ck_assert_int_eq(waitpid(h.audiod, &ast, 0), h.audiod);
	ck_assert_msg(WIFEXITED(ast) && WEXITSTATUS(ast) == 0, "audiod exit status %d", ast);
	h.audiod = 0; /* ah_stop: stopped already */
	audioget_check(&h, dir, first, last, ring, NULL);
	/* By global time: the frame a segment's conversions put at T. */
	const archive_index *x2 = archive_store_entry(s, 1)->x;
	archive_when when;
	char why[256];
	ck_assert_msg(archive_time_of_frame(x2, x2->first + 100, &when, why, sizeof why) == 0, "%s", why);
	char t0[32], t1[32];
	g_snprintf(t0, sizeof t0, "%lld", (long long)when.global_ns + 1);
	g_snprintf(t1, sizeof t1, "%lld", (long long)when.global_ns + 1 + 500000000LL);
	/* T is frame first+100's time plus at most 1 ns: the first whole frame
	 * at or after it is first+101 (a frame is 20833 ns). */
	int64_t want_last;
	ck_assert_msg(archive_frame_at(x2, when.global_ns + 1 + 500000000LL, &want_last, why, sizeof why) == 0, "%s", why);
	/* Half a second of the node's clock in global time: 24000 frames to
	 * the card's and the cpu's skews (tens of ppm: within one frame). */
	ck_assert_int_le(llabs(want_last - (x2->first + 101) - RATE / 2), 2);
	audioget_check(&h, dir, x2->first + 101, want_last, ring, (const char *[]){t0, t1});
	/* chorus-export over a window that spans the first gap: the frames the
	 * conversions put there, the gap as zeros and in the CSV. */
	const archive_index *xa = archive_store_find_frame(s, NODE, 0, ring->gap[0].from - RATE / 4)->x;
	archive_when wa;
	ck_assert(archive_time_of_frame(xa, ring->gap[0].from - RATE / 4, &wa, why, sizeof why) == 0);
	int64_t w0 = wa.global_ns + 1, w1 = w0 + 1000000000LL, ef0, ef1;
	ck_assert(archive_frame_at(xa, w0, &ef0, why, sizeof why) == 0);
	const archive_entry *eb = archive_store_find_global(s, NODE, 0, w1);
	ck_assert(archive_frame_at(eb->x, w1, &ef1, why, sizeof why) == 0);
	char expdir[900], f0s[32], f1s[32];
	g_snprintf(expdir, sizeof expdir, "%s/export", h.run);
	g_snprintf(f0s, sizeof f0s, "%lld", (long long)w0);
	g_snprintf(f1s, sizeof f1s, "%lld", (long long)w1);
	char *eargv[] = {AH_BIN_DIR "/chorus-export", "--dir", dir, "--from", f0s, "--to", f1s, "--clock", "global", "--nodes", "2", "-o", expdir, NULL};
	char *etext = NULL;
	int est;
	ck_assert(g_spawn_sync(NULL, eargv, NULL, 0, NULL, NULL, NULL, &etext, &est, NULL));
	ck_assert_msg(WIFEXITED(est) && WEXITSTATUS(est) == 0, "chorus-export failed:\n%s", etext);
	g_free(etext);
	char path[1000], *csv = NULL;
	g_snprintf(path, sizeof path, "%s/times.csv", expdir);
	ck_assert(g_file_get_contents(path, &csv, NULL, NULL));
	char **lines = g_strsplit(csv, "\n", -1);
	ck_assert_ptr_nonnull(lines[1]);
	char **col = g_strsplit(lines[1], ",", -1);
	ck_assert_int_eq(g_strv_length(col), 13);
	ck_assert_str_eq(col[0], "2");
	ck_assert_str_eq(col[2], "node2-audio0.flac");
	ck_assert_int_eq(g_ascii_strtoll(col[3], NULL, 10), ef0);
	ck_assert_int_eq(g_ascii_strtoll(col[4], NULL, 10), ef1 - ef0);
	char gapcol[64];
	g_snprintf(gapcol, sizeof gapcol, "%lld-%lld", (long long)ring->gap[0].from, (long long)ring->gap[0].to);
	ck_assert_str_eq(col[11], gapcol);
	ck_assert_msg(*col[12], "no t0_root in \"%s\"", lines[1]); /* the node is its own root: syncd runs alone */
	/* t0 is the global time of frame ef0: at or after w0, within a frame. */
	/* (The integer part: a double cannot hold ns since 1970 to 1 ns.) */
	int64_t t0v = g_ascii_strtoll(col[6], NULL, 10);
	ck_assert_msg(t0v >= w0 - 1 && t0v <= w0 + (int64_t)(1e9 / RATE * 1.001) + 1, "t0 %s for T0 %lld", col[6],
		      (long long)w0);
	g_strfreev(col);
	g_strfreev(lines);
	g_free(csv);
	g_snprintf(path, sizeof path, "%s/node2-audio0.flac", expdir);
	compare_file(path, ef0, ef1, ring);
	g_snprintf(path, sizeof path, "%s/times.json", expdir);
	ck_assert(g_file_test(path, G_FILE_TEST_EXISTS));
	ah_reader_free(ring);
	archive_store_free(s);
	ah_stop(&h);
}
END_TEST

START_TEST(kill9_then_recover)
{
	ah_node h;
	/* A 3 s ring: it covers the archive's outage, and the test's first
	 * second is out of it by the end. */
	ah_opts o = {.audiod_conf = "[device.0]\nring_s = 3\nperiods = 64\n"};
	ah_start(&h, NODE, "arch-k9", &o);
	ah_find_f0(&h);
	char dir[800];
	g_snprintf(dir, sizeof dir, "%s/archive", h.run);
	GPid a = spawn_archive(&h, dir, "segment_s = 60\nflush_s = 0.4\n");
	/* Well inside the first segment, note what was received, wait for
	 * two more flushes (the second completed after everything noted was
	 * written), and kill -9. */
	char *st = wait_field("open_frames", 2 * RATE);
	int64_t next = field(st, "next"), flushes = field(st, "flushes");
	g_free(st);
	g_free(wait_field("flushes", flushes + 2));
	stop(a, SIGKILL);

	/* Restart: the open segment is recovered before anything else. */
	a = spawn_archive(&h, dir, "segment_s = 1\nflush_s = 0.4\n");
	st = wait_field("recovered", 1);
	ck_assert_int_eq(field(st, "failed"), 0);
	fprintf(stderr, "recovery: %s", strstr(st, "recovery"));
	g_free(st);
	g_free(wait_field("segments", 3));
	int ex = stop(a, SIGTERM);
	ck_assert_msg(WIFEXITED(ex) && WEXITSTATUS(ex) == 0, "exit status %d", ex);

	GError *err = NULL;
	archive_store *s = archive_store_open(dir, FALSE, &err);
	ck_assert_msg(s, "%s", err ? err->message : "");
	ck_assert_int_eq(archive_store_bad(s), 0);
	ck_assert_uint_ge(archive_store_count(s), 4);
	const archive_entry *rec = archive_store_entry(s, 0);
	int64_t rec_end = rec->x->first + rec->x->frames;
	/* Nothing before the flush horizon was lost. */
	ck_assert_msg(rec_end >= next - FLAC_BLOCK, "recovered up to %lld, %lld had been received before two flushes",
		      (long long)rec_end, (long long)next);
	/* The rest came from audiod's ring on resume: no hole, no gap. */
	const archive_entry *after = archive_store_entry(s, 1);
	ck_assert_int_eq(after->x->first, rec_end);
	ck_assert_uint_eq(after->x->gaps->len, 0);
	for (guint i = 0; i < archive_store_count(s); i++)
		ck_assert(archive_store_entry(s, i)->x->closed);
	/* No journal or temporary file left. */
	GDir *d = g_dir_open(dir, 0, NULL);
	const char *f;
	while ((f = g_dir_read_name(d)))
		ck_assert_msg(g_str_has_suffix(f, ".flac") || g_str_has_suffix(f, ".idx"), "left over: %s", f);
	g_dir_close(d);
	check_all_decode(&h, s, TRUE);
	/* The first second is older than audiod's ring now: audioget gets
	 * audiod's refusal and reads the archive, the world's samples. */
	ah_wait_frames(rec_end + 4 * RATE);
	char out[900], a1[32];
	g_snprintf(out, sizeof out, "%s/old.flac", h.run);
	g_snprintf(a1, sizeof a1, "%d", RATE);
	char *argv[] = {AH_BIN_DIR "/audioget", "--archive", dir, "--first", "0", "--last", a1, "-o", out, NULL};
	char *text = run_audioget(argv, 0, RATE);
	ck_assert_msg(strstr(text, "older than the oldest held"), "audiod did not refuse:\n%s", text);
	g_free(text);
	SF_INFO in = {0};
	SNDFILE *sf = sf_open(out, SFM_READ, &in);
	ck_assert_msg(sf, "%s: %s", out, sf_strerror(NULL));
	ck_assert_int_eq(in.frames, RATE);
	int16_t *got = g_new(int16_t, RATE * 2);
	ck_assert_int_eq(sf_readf_short(sf, got, RATE), RATE);
	sf_close(sf);
	ck_assert_int_lt(ah_mismatch(&h, got, RATE, 2, NULL, h.f0), 0);
	g_free(got);
	archive_store_free(s);
	ah_stop(&h);
}
END_TEST

/* audiod's own audio/0/data serves what its ring no longer holds from the
 * archive (issue 21 item 3): by frames, the world's samples, the reply
 * saying so; a stream from the archive on into the ring, without a seam;
 * and by global time, the frames the archive's records put there.  A range
 * the archive does not hold either is refused with both reasons. */
START_TEST(audiod_serves_from_the_archive)
{
	ah_node h;
	GError *err = NULL;
	char *dir = g_dir_make_tmp("chorus-arch-XXXXXX", &err);
	ck_assert_msg(dir, "%s", err ? err->message : "");
	g_setenv("CHORUS_ARCHIVE_DIR", dir, TRUE); /* audiod's default archive_dir */
	ah_opts o = {.audiod_conf = "[device.0]\nring_s = 3\nperiods = 64\n"};
	ah_start(&h, NODE, "arch-srv", &o);
	g_unsetenv("CHORUS_ARCHIVE_DIR");
	ah_find_f0(&h);
	GPid a = spawn_archive(&h, dir, "segment_s = 1\nflush_s = 0.4\n");
	g_free(wait_field("segments", 6));
	/* Frames [0, RATE) left the 3 s ring seconds ago. */
	ah_reader *r = ah_read(0, RATE, NULL);
	ck_assert_msg(r->ended && !r->err, "audiod refused: %s", r->errmsg ? r->errmsg : "");
	ck_assert_msg(strstr(r->reply, "source=archive") && strstr(r->reply, "t0="), "reply: %s", r->reply);
	ck_assert_int_eq(r->gaps, 0);
	ck_assert_uint_eq(r->data->len, (guint)(RATE * h.channels * 2));
	ck_assert_int_lt(ah_mismatch(&h, (const int16_t *)r->data->data, RATE, h.channels, NULL, h.f0), 0);
	ah_reader_free(r);
	/* From the archive on into the ring: every frame, the world's. */
	char *st = arch_status();
	int64_t now = field(st, "next");
	g_free(st);
	ah_reader *x = ah_read(RATE, now, NULL);
	ck_assert_msg(x->ended && !x->err, "%s", x->errmsg ? x->errmsg : "");
	ck_assert_int_eq(x->gaps, 0);
	ck_assert_uint_eq(x->data->len, (guint)((now - RATE) * h.channels * 2));
	ck_assert_int_lt(ah_mismatch(&h, (const int16_t *)x->data->data, (size_t)(now - RATE), h.channels, NULL,
				     h.f0 + RATE),
			 0);
	ah_reader_free(x);
	/* By global time: the archive's own placing of a frame in the middle
	 * of the segment holding 2 s. */
	archive_store *s = archive_store_open(dir, FALSE, &err);
	ck_assert_msg(s, "%s", err ? err->message : "");
	const archive_entry *en = archive_store_find_frame(s, NODE, 0, 2 * RATE);
	ck_assert(en);
	int64_t mid = en->x->first + en->x->frames / 2;
	archive_when when;
	char why[256];
	ck_assert_msg(archive_time_of_frame(en->x, mid, &when, why, sizeof why) == 0, "%s", why);
	char params[160];
	g_snprintf(params, sizeof params, "clock=global from=%lld to=%lld", (long long)when.global_ns + 1,
		   (long long)when.global_ns + 1 + 250000000LL);
	ah_reader *t = ah_read(0, DEV_SENSOR_OPEN_END, params);
	ck_assert_msg(t->ended && !t->err, "by time: %s", t->errmsg ? t->errmsg : "");
	ck_assert_msg(strstr(t->reply, "source=archive"), "reply: %s", t->reply);
	/* The first whole frame at or after T: mid + 1, or a frame either side
	 * when the segment the archive places T by is a neighbour (their
	 * records differ by their conversions' errors, microseconds; a frame
	 * is 20.8 us). */
	ck_assert_int_le(llabs(t->first - (mid + 1)), 1);
	ck_assert_int_le(llabs(t->last - t->first - RATE / 4), 2);
	ck_assert_int_lt(ah_mismatch(&h, (const int16_t *)t->data->data, (size_t)(t->last - t->first), h.channels, NULL,
				     h.f0 + t->first),
			 0);
	ah_reader_free(t);
	archive_store_free(s);
	st = arch_status();
	int64_t end = field(st, "next");
	g_free(st);
	int ex = stop(a, SIGTERM);
	ck_assert_msg(WIFEXITED(ex) && WEXITSTATUS(ex) == 0, "exit status %d", ex);
	/* After the archive stopped and before the ring: refused, with the
	 * ring's and the archive's reasons. */
	ah_wait_frames(end + 5 * RATE);
	ah_reader *no = ah_read(end + RATE, end + 2 * RATE, NULL);
	ck_assert(no->err);
	ck_assert_msg(strstr(no->errmsg, "older than the oldest held") && strstr(no->errmsg, "archive"), "%s", no->errmsg);
	ah_reader_free(no);
	ah_stop(&h);
	g_free(dir);
}
END_TEST

START_TEST(tiny_fs_keeps_the_newest)
{
	ah_node h;
	ah_start(&h, NODE, "arch-fs", NULL);
	ah_find_f0(&h);
	char dir[800];
	g_snprintf(dir, sizeof dir, "%s/tiny", h.run);
	ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
	/* 1.5 MB: a few seconds of two channels at 48 kHz in FLAC. */
	const int64_t fs_bytes = 1536 * 1024;
	tiny_tmpfs(dir, "1536k");
	GPid a = spawn_archive(&h, dir, "segment_s = 1\nflush_s = 0.5\nreserve_mb = 0.4\n");
	char *st = wait_field("dropped", 4);
	int64_t first_kept = -1;
	{
		GError *err = NULL;
		archive_store *s = archive_store_open(dir, FALSE, &err);
		ck_assert(s);
		first_kept = archive_store_entry(s, 0)->x->first;
		archive_store_free(s);
	}
	g_free(st);
	st = wait_field("dropped", 8);
	int64_t next = field(st, "next"), errors = field(st, "errors");
	g_free(st);
	int ex = stop(a, SIGTERM);
	ck_assert_msg(WIFEXITED(ex) && WEXITSTATUS(ex) == 0, "exit status %d", ex);
	ck_assert_int_eq(errors, 0);

	GError *err = NULL;
	archive_store *s = archive_store_open(dir, FALSE, &err);
	ck_assert(s);
	guint n = archive_store_count(s);
	ck_assert_uint_ge(n, 2);
	/* The oldest went, the newest stayed. */
	ck_assert_int_gt(archive_store_entry(s, 0)->x->first, first_kept);
	const archive_entry *el = archive_store_entry(s, n - 1);
	ck_assert_int_ge(el->x->first + el->x->frames, next);
	ck_assert_int_le(archive_store_bytes(s), fs_bytes);
	/* Contiguous from the oldest kept to the newest: no gap. */
	for (guint i = 1; i < n; i++)
		ck_assert_int_eq(archive_store_entry(s, i)->x->first,
				 archive_store_entry(s, i - 1)->x->first + archive_store_entry(s, i - 1)->x->frames);
	check_all_decode(&h, s, TRUE);
	archive_store_free(s);
	ah_stop(&h);
}
END_TEST

START_TEST(full_disk_drops_the_oldest)
{
	ah_node h;
	ah_start(&h, NODE, "arch-full", NULL);
	ah_find_f0(&h);
	char dir[800];
	g_snprintf(dir, sizeof dir, "%s/full", h.run);
	ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
	tiny_tmpfs(dir, "1024k");
	/* No reserve configured (the archive still keeps two segments' worth
	 * free); once it runs, another writer fills the disk to the last
	 * 16 KB: the next writes fail with ENOSPC. */
	GPid a = spawn_archive(&h, dir, "segment_s = 1\nflush_s = 0.5\nreserve_mb = 0\n");
	char *st = wait_field("segments", 3);
	g_free(st);
	char filler[900];
	g_snprintf(filler, sizeof filler, "%s/filler", dir);
	int ffd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(ffd, 0);
	static char chunk[16384];
	gint64 end = g_get_monotonic_time() + 3 * AH_SAFETY_S * G_USEC_PER_SEC;
	for (;;) {
		/* Keep eating whatever the archive frees. */
		while (write(ffd, chunk, sizeof chunk) > 0)
			;
		st = arch_status();
		if (st && field(st, "errors") >= 1)
			break;
		g_free(st);
		ck_assert_msg(g_get_monotonic_time() < end, "no write failed on a full disk (log %s)", arch_log);
		g_usleep(20000);
	}
	close(ffd);
	g_free(st);
	st = wait_field("errors", 1);
	ck_assert_msg(strstr(st, "No space left on device"), "the error was not a full disk:\n%s", st);
	g_free(st);
	/* The disk is freed again: recording goes on without errors. */
	g_unlink(filler);
	st = arch_status();
	int64_t errs = field(st, "errors"), segs = field(st, "segments");
	g_free(st);
	/* The frames lost to the full disk are named as `write` gaps: in the
	 * index of the segment after the failure, once it closes.  Looked for
	 * as soon as it can be there, before retention on a 1 MB disk may drop
	 * that segment again (counting only at the end failed 1 run in 3). */
	/* (An ENOSPC on an index write alone loses no frames: then there is no
	 * gap to name, and the status says write_gap_frames=0.) */
	st = arch_status();
	int64_t lost_to_writes = field(st, "write_gap_frames");
	g_free(st);
	int writes = 0;
	gint64 until = g_get_monotonic_time() + 3 * AH_SAFETY_S * G_USEC_PER_SEC;
	while (lost_to_writes > 0 && !writes && g_get_monotonic_time() < until) {
		GError *e0 = NULL;
		archive_store *s0 = archive_store_open(dir, FALSE, &e0);
		ck_assert_msg(s0, "%s", e0 ? e0->message : "");
		for (guint i = 0; i < archive_store_count(s0); i++)
			for (guint k = 0; k < archive_store_entry(s0, i)->x->gaps->len; k++)
				writes += !strcmp(g_array_index(archive_store_entry(s0, i)->x->gaps, archive_gap, k).reason,
						  "write");
		archive_store_free(s0);
		if (!writes)
			g_usleep(100000);
	}
	ck_assert_msg(lost_to_writes == 0 || writes >= 1,
		      "%" G_GINT64_FORMAT " frames lost to the full disk, but no index names a write gap", lost_to_writes);
	st = wait_field("segments", segs + 3);
	int64_t next = field(st, "next");
	ck_assert_int_eq(field(st, "errors"), errs);
	g_free(st);
	int ex = stop(a, SIGTERM);
	/* Frames were lost: the exit status says so. */
	ck_assert_msg(WIFEXITED(ex) && WEXITSTATUS(ex) == 1, "exit status %d", ex);

	GError *err = NULL;
	archive_store *s = archive_store_open(dir, FALSE, &err);
	ck_assert(s);
	ck_assert_int_eq(archive_store_bad(s), 0);
	guint n = archive_store_count(s);
	ck_assert_uint_ge(n, 2);
	/* The oldest went (recording began at frame 0), the newest stayed. */
	ck_assert_int_gt(archive_store_entry(s, 0)->x->first, 0);
	const archive_entry *el = archive_store_entry(s, n - 1);
	ck_assert_int_ge(el->x->first + el->x->frames, next);
	/* No segment is corrupt: each decodes to its frames, the world's. */
	check_all_decode(&h, s, TRUE);
	archive_store_free(s);
	ah_stop(&h);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("archive");
	TCase *tc = tcase_create("archive");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, round_trip_segments_and_gap);
	tcase_add_test(tc, kill9_then_recover);
	tcase_add_test(tc, audiod_serves_from_the_archive);
	tcase_add_test(tc, tiny_fs_keeps_the_newest);
	tcase_add_test(tc, full_disk_drops_the_oldest);
	suite_add_tcase(su, tc);
	int nf = tu_check_run(su);
	return nf ? 1 : 0;
}
