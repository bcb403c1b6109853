/* test_archive_time.c — the archive's pure parts: the sidecar index's text
 * form (round trip, errors with their line, a journal cut mid-line), frame
 * <-> global time through the kept conversions, and bridging an outage
 * after the fact through the node's cpu clock, on seeded synthetic clocks
 * whose truth is known (docs/archive.md §2); and chorus-archive's
 * configuration errors, which name the file, line, group and key.
 */
#include <check.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "archive/config.h"
#include "archive/index.h"
#include "archive/timeline.h"
#include "tests/check_run.h"

static archive_index *sample_index(void)
{
	archive_index *x = archive_index_new();
	x->node = 3;
	x->device = 1;
	x->rate_hz = 48000;
	x->channels = 4;
	g_strlcpy(x->format, "S24_3LE", sizeof x->format);
	x->first = 480000;
	x->run_ns = 1764547200000000000LL;
	x->wall_ns = 1764547210000000000LL;
	archive_gap g = {.from = 470000, .to = 480000};
	g_strlcpy(g.reason, "stream", sizeof g.reason);
	g_array_append_val(x->gaps, g);
	archive_timept t = {.frame = 480000, .cpu_ns = 81234567890, .cpu_se_ns = 0.25, .has_global = 1, .global_ns = 1764547210000000123LL, .global_se_ns = 612.5};
	g_array_append_val(x->times, t);
	t.frame += 480000;
	t.has_global = 0;
	g_array_append_val(x->times, t);
	return x;
}

START_TEST(index_round_trip)
{
	archive_index *x = sample_index();
	x->closed = 1;
	x->frames = 2880000;
	x->wall_end_ns = x->wall_ns + 60000000000LL;
	GString *t = g_string_new(NULL);
	archive_index_format(x, t);
	archive_index *y = archive_index_new();
	char why[256];
	ck_assert_msg(archive_index_parse(t->str, t->len, 0, y, why, sizeof why) == 0, "%s", why);
	ck_assert_uint_eq(y->node, 3);
	ck_assert_uint_eq(y->device, 1);
	ck_assert_str_eq(y->format, "S24_3LE");
	ck_assert_int_eq(y->first, 480000);
	ck_assert_int_eq(y->run_ns, x->run_ns);
	ck_assert(y->closed);
	ck_assert_int_eq(y->frames, 2880000);
	ck_assert_uint_eq(y->gaps->len, 1);
	ck_assert_str_eq(g_array_index(y->gaps, archive_gap, 0).reason, "stream");
	ck_assert_uint_eq(y->times->len, 2);
	const archive_timept *a = &g_array_index(y->times, archive_timept, 0), *b = &g_array_index(y->times, archive_timept, 1);
	ck_assert_int_eq(a->global_ns, 1764547210000000123LL);
	ck_assert_double_eq_tol(a->global_se_ns, 612.5, 1e-3);
	ck_assert(a->has_global && !b->has_global);
	char name[ARCHIVE_NAME_MAX];
	ck_assert_str_eq(archive_name(x, name, sizeof name), "node3-audio1-20251201T000000Z-f000000000480000");
	archive_index_free(y);

	/* A journal: no end line, and the last line cut by the crash. */
	y = archive_index_new();
	g_string_truncate(t, 0);
	x->closed = 0;
	archive_index_format(x, t);
	g_string_append(t, "time frame=9600");
	ck_assert_msg(archive_index_parse(t->str, t->len, 1, y, why, sizeof why) == 0, "%s", why);
	ck_assert(!y->closed);
	ck_assert_uint_eq(y->times->len, 2);
	archive_index_free(y);
	/* …which is an error in a closed index. */
	y = archive_index_new();
	ck_assert_int_eq(archive_index_parse(t->str, t->len, 0, y, why, sizeof why), -EINVAL);
	ck_assert_msg(strstr(why, "6: missing cpu_ns="), "%s", why);
	archive_index_free(y);
	g_string_free(t, TRUE);
	archive_index_free(x);
}
END_TEST

START_TEST(index_errors_name_the_line)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"chorus-archive-index 2\n", "1: index version 2, expected 1"},
		{"time frame=1 cpu_ns=2 cpu_se_ns=0\n", "1: \"time\" before the segment line"},
		{"segment node=1 device=0 rate_hz=48000 channels=1 format=S32_LE first=0 run_ns=0 wall_ns=0\n",
		 "1: format: expected S16_LE or S24_3LE, got S32_LE"},
		{"segment node=1 device=0 rate_hz=48000 channels=1 format=S16_LE first=x run_ns=0 wall_ns=0\n",
		 "1: first: expected an integer, got \"x\""},
		{"segment node=1 device=0 rate_hz=48000 channels=1 format=S16_LE first=0 run_ns=0 wall_ns=0\n\ngap from=5 to=5\n",
		 "3: gap to (5) must be after from (5)"},
		{"segment node=1 device=0 rate_hz=48000 channels=1 format=S16_LE first=0 run_ns=0 wall_ns=0\nbogus\n",
		 "2: unknown record \"bogus\""},
		{"", "0: no segment line"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		archive_index *y = archive_index_new();
		char why[256] = "";
		ck_assert_int_eq(archive_index_parse(bad[i].text, strlen(bad[i].text), 0, y, why, sizeof why), -EINVAL);
		ck_assert_msg(!strcmp(why, bad[i].why), "case %zu: \"%s\", expected \"%s\"", i, why, bad[i].why);
		archive_index_free(y);
	}
}
END_TEST

/* Synthetic truth: the node's cpu clock runs at (1 + cpu_skew) of global
 * time, the card at rate_hz (1 + audio_skew) of cpu time. */
typedef struct {
	int64_t g0_ns, c0_ns;
	double cpu_skew, audio_skew;
	unsigned rate_hz;
} truth;

static double cpu_of_frame(const truth *t, int64_t f)
{
	return (double)t->c0_ns + (double)f * 1e9 / (t->rate_hz * (1 + t->audio_skew));
}

/* Global time less g0 (a double cannot hold ns since 1970 to the ns). */
static double global_of_cpu(const truth *t, double cpu_ns)
{
	return (cpu_ns - (double)t->c0_ns) / (1 + t->cpu_skew);
}

START_TEST(frames_to_global_and_back)
{
	truth t = {.g0_ns = 1764547200000000000LL, .c0_ns = 5000000000LL, .cpu_skew = 23e-6, .audio_skew = -41e-6, .rate_hz = 48000};
	archive_index *x = archive_index_new();
	x->rate_hz = t.rate_hz;
	x->first = 0;
	x->frames = 60 * 48000;
	for (int k = 0; k <= 6; k++) {
		int64_t f = (int64_t)k * 10 * 48000;
		double c = cpu_of_frame(&t, f);
		archive_timept p = {.frame = f, .cpu_ns = llround(c), .has_global = 1, .global_se_ns = 100};
		/* Exact to the ns (the global time is an integer). */
		p.global_ns = t.g0_ns + llround(global_of_cpu(&t, c));
		g_array_append_val(x->times, p);
	}
	char why[256];
	for (int64_t f = 0; f < x->frames; f += 12345) {
		archive_when w;
		ck_assert(archive_time_of_frame(x, f, &w, why, sizeof why) == 0);
		double truth_ns = global_of_cpu(&t, cpu_of_frame(&t, f));
		double got = (double)(w.global_ns - t.g0_ns) + w.frac_ns;
		/* Linear truth, two integer-rounded points 10 s apart: within 1 ns. */
		ck_assert_msg(fabs(got - truth_ns) <= 1.0, "frame %lld: %.3f ns off", (long long)f, got - truth_ns);
		ck_assert_double_eq_tol(w.se_ns, 100, 1e-9);
		int64_t back;
		ck_assert(archive_frame_at(x, w.global_ns + (w.frac_ns > 0 ? 1 : 0), &back, why, sizeof why) == 0);
		/* The first whole frame at or after the frame's time is the frame
		 * itself, or the next when its time rounded up past it. */
		ck_assert_msg(back == f || back == f + 1, "frame %lld came back as %lld", (long long)f, (long long)back);
	}
	/* Without any global point there is nothing to say. */
	archive_index *none = archive_index_new();
	none->rate_hz = 48000;
	archive_timept p = {.frame = 0, .cpu_ns = 1};
	g_array_append_val(none->times, p);
	archive_when w;
	ck_assert_int_eq(archive_time_of_frame(none, 0, &w, why, sizeof why), -ENOENT);
	ck_assert_ptr_nonnull(strstr(why, "no global time was reachable"));
	archive_index_free(none);
	archive_index_free(x);
}
END_TEST

/* 30 one-minute segments with points every 10 s whose global times carry
 * Gaussian noise of their stated s.e.; segments [10, 20) recorded during
 * an outage (no global time, or a stale one with a huge s.e.).  Bridged
 * with no wander (the synthetic clocks have none), the errors over the
 * stated s.e.: the stated s.e. interpolates the endpoints' s.e. linearly,
 * (1-w) s_a + w s_b, while the error's s.d. is sqrt((1-w)^2 s_a^2 +
 * w^2 s_b^2): their ratio lies in [1/sqrt 2, 1].  So the RMS z over the
 * n points of all seeds lies between 1/sqrt 2 and 1 times the chi
 * interval sqrt(chi2_{0.0005, 0.9995}(n) / n). */
START_TEST(bridge_outage_after_the_fact)
{
	gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
	double sum_z2 = 0;
	size_t nz = 0, stale_improved = 0, ends_left = 0;
	for (unsigned long seed = 1; seed <= 200; seed++) {
		gsl_rng_set(rng, seed);
		truth t = {.g0_ns = 1764547200000000000LL,
			   .c0_ns = 5000000000LL + (int64_t)gsl_rng_uniform_int(rng, 1000000000),
			   .cpu_skew = gsl_ran_flat(rng, -50e-6, 50e-6),
			   .audio_skew = gsl_ran_flat(rng, -50e-6, 50e-6),
			   .rate_hz = 48000};
		archive_index *x[31];
		for (int s = 0; s < 31; s++) {
			x[s] = archive_index_new();
			x[s]->node = 2;
			x[s]->rate_hz = t.rate_hz;
			x[s]->run_ns = s < 30 ? 1 : 2; /* the last: another run, never bridged */
			x[s]->first = (int64_t)s * 60 * 48000;
			x[s]->frames = 60 * 48000;
			for (int k = 0; k < 6; k++) {
				int64_t f = x[s]->first + (int64_t)k * 10 * 48000;
				double c = cpu_of_frame(&t, f), se = gsl_ran_flat(rng, 200, 2000);
				archive_timept p = {.frame = f, .cpu_ns = llround(c), .has_global = 1, .global_se_ns = se};
				p.global_ns = t.g0_ns + llround(global_of_cpu(&t, c) + gsl_ran_gaussian(rng, se));
				if (s >= 10 && s < 20) {
					if (k % 2) {
						p.has_global = 0;
					} else {
						/* Stale: far off, and saying so. */
						p.global_ns += 3000000;
						p.global_se_ns = 1e7;
					}
				}
				g_array_append_val(x[s]->times, p);
			}
		}
		/* Seed 1 only: the bridged count is the outage's 60 points. */
		size_t filled = archive_bridge(x, 31, 0);
		if (seed == 1)
			ck_assert_uint_eq(filled, 60);
		for (int s = 0; s < 31; s++)
			for (guint k = 0; k < x[s]->times->len; k++) {
				const archive_timept *p = &g_array_index(x[s]->times, archive_timept, k);
				if (s < 10 || s >= 20)
					continue;
				ck_assert_int_eq(p->has_global, 2);
				double truth_g = global_of_cpu(&t, (double)p->cpu_ns);
				double z = ((double)(p->global_ns - t.g0_ns) - truth_g) / p->global_se_ns;
				sum_z2 += z * z;
				nz++;
				stale_improved += k % 2 == 0;
			}
		/* The other run keeps what it had. */
		for (guint k = 0; k < x[30]->times->len; k++)
			ends_left += g_array_index(x[30]->times, archive_timept, k).has_global == 1;
		for (int s = 0; s < 31; s++)
			archive_index_free(x[s]);
	}
	ck_assert_uint_eq(nz, 200 * 60);
	ck_assert_uint_eq(stale_improved, 200 * 30);
	ck_assert_uint_eq(ends_left, 200 * 6);
	double rms = sqrt(sum_z2 / (double)nz);
	double lo = sqrt(gsl_cdf_chisq_Pinv(0.0005, (double)nz) / (double)nz) / sqrt(2.0),
	       hi = sqrt(gsl_cdf_chisq_Pinv(0.9995, (double)nz) / (double)nz);
	ck_assert_msg(rms >= lo && rms <= hi, "RMS z of the bridged points %.3f outside [%.3f, %.3f]", rms, lo, hi);
	gsl_rng_free(rng);

	/* With the wander stated, a point in the middle of a 600 s outage
	 * states 0.25 * 600 s * 1e-7 = 15 us more. */
	archive_index *y = archive_index_new();
	y->rate_hz = 48000;
	archive_timept a = {.frame = 0, .cpu_ns = 0, .has_global = 1, .global_ns = 1000, .global_se_ns = 0};
	archive_timept m = {.frame = 1, .cpu_ns = 300000000000LL};
	archive_timept b = {.frame = 2, .cpu_ns = 600000000000LL, .has_global = 1, .global_ns = 600000001000LL, .global_se_ns = 0};
	g_array_append_val(y->times, a);
	g_array_append_val(y->times, m);
	g_array_append_val(y->times, b);
	ck_assert_uint_eq(archive_bridge(&y, 1, ARCHIVE_BRIDGE_WANDER), 1);
	const archive_timept *mm = &g_array_index(y->times, archive_timept, 1);
	ck_assert_int_eq(mm->global_ns, 300000001000LL);
	ck_assert_double_eq_tol(mm->global_se_ns, 15000, 1e-6);
	archive_index_free(y);
}
END_TEST

/* A node cut off from the field became its own root (node 2) for a while:
 * its points in that timescale never mix with the field's (root 1) in one
 * frame's time, and once the field's timescale is back after them they
 * are bridged into it and say so. */
START_TEST(another_roots_points_are_not_mixed_and_are_bridged)
{
	archive_index *y = archive_index_new();
	y->rate_hz = 1000;
	/* 1 ns per frame on the field's global from 1e12; node 2's own
	 * timescale is 5 s behind. */
	archive_timept p0 = {.frame = 0, .cpu_ns = 0, .has_global = 1, .global_ns = 1000000000000LL, .global_se_ns = 100, .root = 1};
	archive_timept p1 = {.frame = 1000, .cpu_ns = 1000, .has_global = 1, .global_ns = 995000001000LL, .global_se_ns = 50, .root = 2};
	archive_timept p2 = {.frame = 2000, .cpu_ns = 2000, .has_global = 1, .global_ns = 995000002000LL, .global_se_ns = 50, .root = 2};
	g_array_append_val(y->times, p0);
	g_array_append_val(y->times, p1);
	g_array_append_val(y->times, p2);
	archive_when w;
	char why[200];
	/* Near the root-2 points: their timescale only (slope 1 ns/frame, not
	 * the 5 s jump between the two timescales). */
	ck_assert_int_eq(archive_time_of_frame(y, 1500, &w, why, sizeof why), 0);
	ck_assert_uint_eq(w.root, 2);
	ck_assert_int_eq(w.global_ns, 995000001500LL);
	ck_assert_double_eq_tol(w.period_ns, 1.0, 1e-9);
	/* Near the root-1 point: that point alone, at the nominal rate. */
	ck_assert_int_eq(archive_time_of_frame(y, 10, &w, why, sizeof why), 0);
	ck_assert_uint_eq(w.root, 1);
	ck_assert_int_eq(w.global_ns / 1000000, 1000010000000LL / 1000000);
	/* No root-1 point after them yet: nothing to bridge with. */
	ck_assert_uint_eq(archive_bridge(&y, 1, ARCHIVE_BRIDGE_WANDER), 0);
	/* The field is heard again: a root-1 point after them. */
	archive_timept p3 = {.frame = 3000, .cpu_ns = 3000, .has_global = 1, .global_ns = 1000000003000LL, .global_se_ns = 100, .root = 1};
	g_array_append_val(y->times, p3);
	ck_assert_uint_eq(archive_bridge(&y, 1, ARCHIVE_BRIDGE_WANDER), 2);
	for (int k = 1; k <= 2; k++) {
		const archive_timept *t = &g_array_index(y->times, archive_timept, k);
		ck_assert_int_eq(t->has_global, 2);
		ck_assert_uint_eq(t->root, 1);
		ck_assert_int_eq(t->global_ns, 1000000000000LL + 1000 * k);
	}
	ck_assert_int_eq(archive_time_of_frame(y, 1500, &w, why, sizeof why), 0);
	ck_assert_uint_eq(w.root, 1);
	ck_assert_int_eq(w.global_ns, 1000000001500LL);
	/* The index text keeps the root; one without it reads as unknown. */
	GString *txt = g_string_new(NULL);
	archive_index_format_time(&g_array_index(y->times, archive_timept, 3), txt);
	ck_assert_msg(strstr(txt->str, " root=1\n"), "%s", txt->str);
	g_string_free(txt, TRUE);
	archive_index_free(y);
}
END_TEST

/* Load `text` as a configuration file; the error text, or NULL. */
static char *config_error(const char *text, archive_config *cfg)
{
	char *path = g_build_filename(g_get_tmp_dir(), "test-archive-XXXXXX.conf", NULL);
	int fd = g_mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	GError *err = NULL;
	char *msg = NULL;
	memset(cfg, 0, sizeof *cfg); /* the defaults free what a field held */
	if (!archive_config_load(cfg, path, TRUE, &err)) {
		/* The file's name is the first thing in the message. */
		ck_assert_msg(g_str_has_prefix(err->message, path), "%s", err->message);
		msg = g_strdup(err->message + strlen(path));
		g_error_free(err);
	}
	unlink(path);
	g_free(path);
	return msg;
}

START_TEST(config_errors_name_file_line_key)
{
	archive_config cfg;
	g_unsetenv("CHORUS_NODE");
	char *e = config_error("[archive]\nnode = 4\n[device.1]\nrecord = true\n", &cfg);
	ck_assert_msg(!e, "%s", e);
	ck_assert_int_eq(cfg.node, 4);
	ck_assert_str_eq(cfg.dir, "/var/lib/chorus/archive");
	ck_assert_double_eq(cfg.segment_s, 60);
	ck_assert_double_eq(cfg.flush_s, 2);
	ck_assert(cfg.dev[0].record && cfg.dev[1].record && !cfg.dev[2].record);
	archive_config_clear(&cfg);
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"[archive]\nsegment_s = 5\nflush_s = 10\n",
		 ":3: [archive] flush_s: the flush horizon (10 s) must not exceed segment_s (5 s)"},
		{"[archive]\n\nflac_level = 9\n", ":3: [archive] flac_level:"},
		{"[archive]\nflush_s = soon\n", ":2: [archive] flush_s:"},
		{"[device.1]\nrecord = yes\n", ":2: [device.1] record:"},
		{"[archiv]\n", ":1: [archiv]"},
	};
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		e = config_error(bad[i].text, &cfg);
		ck_assert_msg(e && g_str_has_prefix(e, bad[i].why), "case %zu: \"%s\", expected \"%s…\"", i, e ? e : "(none)",
			      bad[i].why);
		g_free(e);
		archive_config_clear(&cfg);
	}
}
END_TEST

int main(void)
{
	Suite *su = suite_create("archive_time");
	TCase *tc = tcase_create("archive_time");
	tcase_add_test(tc, index_round_trip);
	tcase_add_test(tc, index_errors_name_the_line);
	tcase_add_test(tc, frames_to_global_and_back);
	tcase_add_test(tc, bridge_outage_after_the_fact);
	tcase_add_test(tc, another_roots_points_are_not_mixed_and_are_bridged);
	tcase_add_test(tc, config_errors_name_file_line_key);
	suite_add_tcase(su, tc);
	int nf = tu_check_run(su);
	return nf ? 1 : 0;
}
