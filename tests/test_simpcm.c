/* test_simpcm.c — the chorus_sim ALSA plugin through the real ALSA API (and
 * through arecord with the shipped config): captured samples equal the world
 * model's, side-channel records arrive one per period with the true
 * interrupt times, injected xruns give -EPIPE and the frame index keeps
 * tracking real time.  No timed assertions: every check compares against
 * the model, whose truth the records let us recover exactly. */
#include <alsa/asoundlib.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpatch/chorus_kpatch.h"
#include "kpatch/sidechan_path.h"
#include "libsync/now.h"
#include "sim/samplefmt.h"
#include "sim/scenario.h"
#include "sim/sidechan.h"
#include "sim/world.h"
#include "tests/check_run.h"

#define SCENARIO SIM_SRC_DIR "/scenarios/test.ini"
#define RATE 48000
#define PERIOD 480
#define PERIODS 64 /* 640 ms of buffer: a descheduled test does not overrun */
#define MAX_RECS 4096

typedef struct {
	snd_pcm_t *pcm;
	snd_config_t *top;
	int side_fd;
	char side_path[600];
	sim_scenario *sc;
	sim_world *w;
	int64_t epoch_ns; /* host raw ns of world time 0 */
	int node;
} sess;

static const char *run_dir(void)
{
	const char *r = g_getenv("CHORUS_RUN");
	return r && *r ? r : g_get_tmp_dir();
}

static void load_world(sess *s)
{
	GError *err = NULL;
	s->sc = sim_scenario_load(SCENARIO, &err);
	ck_assert_msg(s->sc, "%s", err ? err->message : "");
	s->w = sim_world_new(s->sc, &err);
	ck_assert_msg(s->w, "%s", err ? err->message : "");
}

static void sess_open(sess *s, int node, const char *extra)
{
	static int counter;
	memset(s, 0, sizeof *s);
	s->node = node;
	s->epoch_ns = sync_now(SYNC_KIND_CPU); /* no CHORUS_SIM_CLOCK here: host raw */
	snprintf(s->side_path, sizeof s->side_path, "%s/side/node%d-%d", run_dir(), node, counter++);
	char *text = g_strdup_printf(
		"pcm_type.chorus_sim { lib \"%s\" }\n"
		"pcm.simtest { type chorus_sim scenario \"%s\" node %d sidechannel \"%s\" epoch_ns \"%lld\" %s }\n",
		SIM_PLUGIN_SO, SCENARIO, node, s->side_path, (long long)s->epoch_ns, extra ? extra : "");
	snd_input_t *in;
	ck_assert_int_eq(snd_input_buffer_open(&in, text, (ssize_t)strlen(text)), 0);
	ck_assert_int_eq(snd_config_top(&s->top), 0);
	ck_assert_int_eq(snd_config_load(s->top, in), 0);
	snd_input_close(in);
	g_free(text);
	int rc = snd_pcm_open_lconf(&s->pcm, "simtest", SND_PCM_STREAM_CAPTURE, 0, s->top);
	ck_assert_msg(rc == 0, "snd_pcm_open_lconf: %s", snd_strerror(rc));
	s->side_fd = open(s->side_path, O_RDONLY | O_NONBLOCK);
	ck_assert_msg(s->side_fd >= 0, "side channel %s: %s", s->side_path, strerror(errno));
	load_world(s);
}

static void sess_close(sess *s)
{
	snd_pcm_close(s->pcm);
	snd_config_delete(s->top);
	close(s->side_fd);
	sim_world_free(s->w);
	sim_scenario_free(s->sc);
}

static void set_hw(snd_pcm_t *pcm, snd_pcm_format_t fmt, snd_pcm_access_t acc, unsigned ch)
{
	snd_pcm_hw_params_t *hw;
	snd_pcm_hw_params_alloca(&hw);
	ck_assert_int_ge(snd_pcm_hw_params_any(pcm, hw), 0);
	ck_assert_int_eq(snd_pcm_hw_params_set_access(pcm, hw, acc), 0);
	ck_assert_int_eq(snd_pcm_hw_params_set_format(pcm, hw, fmt), 0);
	ck_assert_int_eq(snd_pcm_hw_params_set_channels(pcm, hw, ch), 0);
	ck_assert_int_eq(snd_pcm_hw_params_set_rate(pcm, hw, RATE, 0), 0);
	ck_assert_int_eq(snd_pcm_hw_params_set_period_size(pcm, hw, PERIOD, 0), 0);
	ck_assert_int_eq(snd_pcm_hw_params_set_periods(pcm, hw, PERIODS, 0), 0);
	int rc = snd_pcm_hw_params(pcm, hw);
	ck_assert_msg(rc == 0, "hw_params: %s", snd_strerror(rc));
}

static size_t read_records(int fd, struct chorus_kpatch_record *out, size_t max)
{
	size_t n = 0;
	while (n < max) {
		ssize_t r = read(fd, &out[n], sizeof out[0]);
		if (r != (ssize_t)sizeof out[0])
			break;
		n++;
	}
	return n;
}

/* The interrupt record time the model predicts for the period ending at
 * absolute frame fe: node cpu clock at (frame's true time + latency), the
 * latency capped at half a period (docs/scenario.md). */
static int64_t predicted(const sess *s, int64_t fe)
{
	int64_t cap = (int64_t)(PERIOD * 1e9 / RATE) / 2;
	int64_t truth = s->epoch_ns + sim_world_frame_time_ns(s->w, s->node, RATE, fe);
	return sim_world_node_cpu_at(s->w, s->node, truth + sim_world_irq_latency_ns(s->w, s->node, fe, cap));
}

/* Recover the stream's first frame F0 from the first record of a run
 * (hw_ptr = PERIOD): the one candidate whose predicted time is the record's
 * to the ns.  INT64_MIN if none matches. */
static int64_t find_f0(const sess *s, const struct chorus_kpatch_record *r)
{
	int64_t host = sim_world_true_at_node_cpu(s->w, s->node, r->time_ns);
	double fe = sim_world_frame_at(s->w, s->node, RATE, (double)(host - s->epoch_ns) * 1e-9);
	for (int64_t f = (int64_t)ceil(fe) + 1; f >= (int64_t)floor(fe) - PERIOD / 2 - 2; f--)
		if (predicted(s, f) == r->time_ns)
			return f - PERIOD;
	return INT64_MIN;
}

/* Check a run of records that starts a stream at f0: one per period, in
 * order, hw_ptr advancing by a period, times = model = truth + latency. */
static void check_records(const sess *s, const struct chorus_kpatch_record *r, size_t n, int64_t f0,
			  uint64_t seq0)
{
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(r[i].magic, CHORUS_KPATCH_MAGIC);
		ck_assert_uint_eq(r[i].version, CHORUS_KPATCH_VERSION);
		ck_assert_uint_eq(r[i].size, sizeof r[i]);
		ck_assert_uint_eq(r[i].seq, seq0 + i);
		ck_assert_uint_eq(r[i].hw_ptr, (i + 1) * PERIOD);
		ck_assert_uint_eq(r[i].period_frames, PERIOD);
		ck_assert_uint_eq(r[i].card, (unsigned)s->node);
		ck_assert(r[i].flags & CHORUS_KPATCH_F_SIM);
		ck_assert_uint_eq(r[i].dropped, 0);
		int64_t fe = f0 + (int64_t)(i + 1) * PERIOD;
		int64_t truth = sim_world_node_cpu_at(s->w, s->node,
						      s->epoch_ns + sim_world_frame_time_ns(s->w, s->node, RATE, fe));
		ck_assert_int_eq(r[i].time_ns, predicted(s, fe));
		ck_assert_int_ge(r[i].time_ns, truth);
	}
}

static double expected_value(const sess *s, int ch, int64_t f)
{
	return sim_world_sample(s->w, s->node, ch, RATE, f);
}

/* Compare n captured frames (interleaved or per-channel) with the model. */
static void check_samples(const sess *s, snd_pcm_format_t fmt, void *const *bufs, int interleaved,
			  unsigned ch, size_t n, int64_t f0, double *peak)
{
	*peak = 0;
	for (size_t i = 0; i < n; i++)
		for (unsigned c = 0; c < ch; c++) {
			size_t idx = interleaved ? i * ch + c : i;
			const void *b = interleaved ? bufs[0] : bufs[c];
			double v = expected_value(s, (int)c, f0 + (int64_t)i);
			*peak = fmax(*peak, fabs(v));
			if (fmt == SND_PCM_FORMAT_S16_LE)
				ck_assert_msg(((const int16_t *)b)[idx] == sim_to_s16(v),
					      "frame %zu ch %u: got %d expected %d", i, c,
					      ((const int16_t *)b)[idx], sim_to_s16(v));
			else if (fmt == SND_PCM_FORMAT_S32_LE)
				ck_assert_int_eq(((const int32_t *)b)[idx], sim_to_s32(v));
			else
				ck_assert_msg(((const float *)b)[idx] == sim_to_float(v),
					      "frame %zu ch %u: got %.9g expected %.9g", i, c,
					      ((const float *)b)[idx], sim_to_float(v));
		}
}

/* Capture `periods` periods and check samples and records. */
static void capture_and_check(int node, snd_pcm_format_t fmt, snd_pcm_access_t acc, int use_poll)
{
	sess s;
	sess_open(&s, node, NULL);
	unsigned ch = (unsigned)sim_world_n_mics(s.w, node);
	set_hw(s.pcm, fmt, acc, ch);
	const size_t periods = 30, n = periods * PERIOD;
	size_t bps = (size_t)snd_pcm_format_physical_width(fmt) / 8;
	int inter = acc == SND_PCM_ACCESS_RW_INTERLEAVED || acc == SND_PCM_ACCESS_MMAP_INTERLEAVED;
	void *bufs[8];
	for (unsigned c = 0; c < ch; c++)
		bufs[c] = g_malloc0(n * bps * (inter ? ch : 1));
	if (use_poll) {
		ck_assert_int_eq(snd_pcm_nonblock(s.pcm, 1), 0);
		ck_assert_int_eq(snd_pcm_start(s.pcm), 0);
	}
	size_t got = 0;
	while (got < n) {
		snd_pcm_sframes_t r;
		size_t want = MIN((size_t)PERIOD, n - got);
		if (use_poll) {
			struct pollfd pfd[4];
			int np = snd_pcm_poll_descriptors(s.pcm, pfd, 4);
			ck_assert_int_gt(np, 0);
			ck_assert_int_gt(poll(pfd, (nfds_t)np, 5000), 0);
			unsigned short rev = 0;
			ck_assert_int_eq(snd_pcm_poll_descriptors_revents(s.pcm, pfd, (unsigned)np, &rev), 0);
			ck_assert(!(rev & POLLERR));
			if (!(rev & POLLIN))
				continue;
		}
		if (inter) {
			char *p = (char *)bufs[0] + got * bps * ch;
			r = acc == SND_PCM_ACCESS_MMAP_INTERLEAVED ? snd_pcm_mmap_readi(s.pcm, p, want)
								   : snd_pcm_readi(s.pcm, p, want);
		} else {
			void *ptrs[8];
			for (unsigned c = 0; c < ch; c++)
				ptrs[c] = (char *)bufs[c] + got * bps;
			r = snd_pcm_readn(s.pcm, ptrs, want);
		}
		if (r == -EAGAIN)
			continue;
		ck_assert_msg(r > 0, "read: %s", snd_strerror((int)r));
		got += (size_t)r;
	}
	struct chorus_kpatch_record *rec = g_new(struct chorus_kpatch_record, MAX_RECS);
	size_t nrec = read_records(s.side_fd, rec, MAX_RECS);
	/* Every period we read was announced by its interrupt; a few more may
	 * have happened since. */
	ck_assert_uint_ge(nrec, periods);
	ck_assert_uint_le(nrec, periods + PERIODS);
	int64_t f0 = find_f0(&s, &rec[0]);
	ck_assert_msg(f0 != INT64_MIN, "no stream start matches the first record");
	/* The stream began when we started it, after the epoch (the bound above
	 * is loose on purpose: a loaded machine may take a while to start). */
	ck_assert_int_ge(f0, 0);
	ck_assert_int_lt(f0, 30 * RATE);
	check_records(&s, rec, nrec, f0, 0);
	double peak;
	check_samples(&s, fmt, bufs, inter, ch, n, f0, &peak);
	/* The clicks of source.1 (0.5 full scale at 1 m from node 1) are in
	 * there: we did not just compare noise with noise. */
	if (node == 1 && f0 < RATE / 20)
		ck_assert_double_gt(peak, 0.1);
	for (unsigned c = 0; c < ch; c++)
		g_free(bufs[c]);
	g_free(rec);
	sess_close(&s);
}

START_TEST(s16_interleaved_blocking)
{
	capture_and_check(1, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 0);
}
END_TEST

START_TEST(s32_noninterleaved_blocking)
{
	capture_and_check(1, SND_PCM_FORMAT_S32_LE, SND_PCM_ACCESS_RW_NONINTERLEAVED, 0);
}
END_TEST

/* Rendered inside each transfer (render inline) or ahead by the thread:
 * the same samples bit for bit. */
START_TEST(s16_rendered_inline)
{
	g_setenv("CHORUS_SIM_RENDER", "inline", TRUE);
	capture_and_check(1, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 0);
	g_unsetenv("CHORUS_SIM_RENDER");
}
END_TEST

START_TEST(float_mmap_with_poll)
{
	capture_and_check(2, SND_PCM_FORMAT_FLOAT_LE, SND_PCM_ACCESS_MMAP_INTERLEAVED, 1);
}
END_TEST

/* ALSA's error output, captured so tests can check the plugin's reasons. */
static GString *alsa_errors;

static void capture_alsa_error(const char *file, int line, const char *func, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (alsa_errors) {
		g_string_append_vprintf(alsa_errors, fmt, ap);
		g_string_append_c(alsa_errors, '\n');
	}
	va_end(ap);
}

/* PCM x of type chorus_sim on `scenario` with `fields` (and sidechannel
 * none) must fail to open for `stream`, saying `expect` (and `expect2`
 * unless NULL) in ALSA's error output. */
static void open_refused(snd_pcm_stream_t stream, const char *scenario, const char *fields, const char *expect,
			 const char *expect2)
{
	snd_pcm_t *pcm;
	snd_config_t *top;
	snd_input_t *in;
	char *text = g_strdup_printf("pcm_type.chorus_sim { lib \"%s\" }\npcm.x { type chorus_sim scenario \"%s\" %s sidechannel none }\n",
				     SIM_PLUGIN_SO, scenario, fields);
	snd_input_buffer_open(&in, text, -1);
	snd_config_top(&top);
	ck_assert_int_eq(snd_config_load(top, in), 0);
	snd_input_close(in);
	g_string_truncate(alsa_errors, 0);
	ck_assert_int_lt(snd_pcm_open_lconf(&pcm, "x", stream, 0, top), 0);
	ck_assert_msg(strstr(alsa_errors->str, expect) && (!expect2 || strstr(alsa_errors->str, expect2)), "%s",
		      alsa_errors->str);
	snd_config_delete(top);
	g_free(text);
}

START_TEST(hw_params_are_constrained)
{
	sess s;
	sess_open(&s, 1, NULL);
	snd_pcm_hw_params_t *hw;
	snd_pcm_hw_params_alloca(&hw);
	ck_assert_int_ge(snd_pcm_hw_params_any(s.pcm, hw), 0);
	ck_assert_int_ne(snd_pcm_hw_params_test_channels(s.pcm, hw, 1), 0); /* node 1 has 2 mics */
	ck_assert_int_eq(snd_pcm_hw_params_test_channels(s.pcm, hw, 2), 0);
	ck_assert_int_ne(snd_pcm_hw_params_test_format(s.pcm, hw, SND_PCM_FORMAT_U8), 0);
	ck_assert_int_eq(snd_pcm_hw_params_test_rate(s.pcm, hw, 192000, 0), 0);
	ck_assert_int_ne(snd_pcm_hw_params_test_rate(s.pcm, hw, 4000, 0), 0);
	sess_close(&s);
	alsa_errors = g_string_new(NULL);
	snd_lib_error_set_handler(capture_alsa_error);
	/* Playback is refused: it is a microphone. */
	open_refused(SND_PCM_STREAM_PLAYBACK, SCENARIO, "node 1", "capture only", NULL);
	/* An unknown node is refused with a reason (on stderr). */
	open_refused(SND_PCM_STREAM_CAPTURE, SCENARIO, "node 9", "node 9 is not in scenario", NULL);
	/* A broken scenario: every error with its file and line, open refused. */
	char *bad = g_build_filename(run_dir(), "bad.ini", NULL);
	ck_assert(g_file_set_contents(bad, "[world]\nseed = x\n[node.1]\nposition_m = 0,0\nfoo = 1\n", -1, NULL));
	open_refused(SND_PCM_STREAM_CAPTURE, bad, "node 1", "bad.ini:2: [world] seed: 'x' is not an integer",
		     "bad.ini:5: [node.1] foo: unknown key");
	/* A render mode it does not know. */
	open_refused(SND_PCM_STREAM_CAPTURE, SCENARIO, "node 1 render later", "render 'later' is not ahead or inline", NULL);
	snd_lib_error_set_handler(NULL);
	g_string_free(alsa_errors, TRUE);
	alsa_errors = NULL;
	g_free(bad);
}
END_TEST

START_TEST(xrun_gives_epipe_and_frames_keep_real_time)
{
	sess s;
	sess_open(&s, 2, "xrun_every 0.1");
	set_hw(s.pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1);
	int16_t *a = g_new0(int16_t, 20 * PERIOD), *b = g_new0(int16_t, 10 * PERIOD);
	size_t n1 = 0;
	snd_pcm_sframes_t r = 0;
	/* Read until the injected xrun (0.1 s = 10 periods in). */
	while (n1 < 20 * PERIOD) {
		r = snd_pcm_readi(s.pcm, a + n1, PERIOD);
		if (r < 0)
			break;
		n1 += (size_t)r;
	}
	ck_assert_int_eq(r, -EPIPE);
	ck_assert_int_eq(snd_pcm_state(s.pcm), SND_PCM_STATE_XRUN);
	ck_assert_uint_le(n1, 10 * PERIOD);
	usleep(30000); /* the stall: frames lost while nobody captures */
	int64_t t_a = sync_now(SYNC_KIND_CPU);
	ck_assert_int_eq(snd_pcm_prepare(s.pcm), 0);
	size_t n2 = 0;
	while (n2 < 5 * PERIOD) {
		r = snd_pcm_readi(s.pcm, b + n2, PERIOD);
		ck_assert_msg(r > 0, "read after recovery: %s", snd_strerror((int)r));
		n2 += (size_t)r;
	}
	int64_t t_b = sync_now(SYNC_KIND_CPU);

	struct chorus_kpatch_record rec[MAX_RECS];
	size_t nrec = read_records(s.side_fd, rec, MAX_RECS);
	/* Split the records where hw_ptr restarts. */
	size_t k = 1;
	while (k < nrec && rec[k].hw_ptr > rec[k - 1].hw_ptr)
		k++;
	ck_assert_uint_lt(k, nrec);
	ck_assert_uint_ge(k, n1 / PERIOD);
	ck_assert(!(rec[0].flags & CHORUS_KPATCH_F_XRUN));
	ck_assert(rec[k].flags & CHORUS_KPATCH_F_XRUN);    /* first interrupt after the restart */
	ck_assert_uint_eq(rec[k].seq, rec[k - 1].seq + 1); /* seq counts on */
	int64_t f0 = find_f0(&s, &rec[0]), f1 = find_f0(&s, &rec[k]);
	ck_assert(f0 != INT64_MIN && f1 != INT64_MIN);
	check_records(&s, rec, k, f0, 0);
	check_records(&s, rec + k, nrec - k, f1, k);
	/* After recovery the stream starts at the frame of the moment it was
	 * restarted: lost frames = the stall, the index still on real time. */
	int64_t lo = sim_world_first_frame_at(s.w, 2, RATE, t_a - s.epoch_ns);
	int64_t hi = sim_world_first_frame_at(s.w, 2, RATE, t_b - s.epoch_ns);
	ck_assert_int_ge(f1, lo);
	ck_assert_int_le(f1, hi);
	ck_assert_int_ge(f1 - (f0 + (int64_t)n1), 30000 * RATE / 1000000); /* at least the 30 ms stall */
	double peak;
	void *pa[1] = {a}, *pb[1] = {b};
	check_samples(&s, SND_PCM_FORMAT_S16_LE, pa, 1, 1, n1, f0, &peak);
	check_samples(&s, SND_PCM_FORMAT_S16_LE, pb, 1, 1, n2, f1, &peak);
	g_free(a);
	g_free(b);
	sess_close(&s);
}
END_TEST

START_TEST(arecord_records_with_the_shipped_config)
{
	char *arecord = g_find_program_in_path("arecord");
	ck_assert_msg(arecord, "arecord is not on PATH"); /* main() leaves this test out then */
	sess s;
	memset(&s, 0, sizeof s);
	s.node = 2;
	load_world(&s);
	char *run = g_build_filename(run_dir(), "arec", NULL);
	char path[600];
	ck_assert_int_gt(kpatch_sidechan_path_for(run, "2", "chorus_sim", path, sizeof path), 0);
	/* Hold the FIFO open for reading before arecord writes, so its records
	 * outlive arecord's exit. */
	sim_sidechan *holder;
	ck_assert_int_eq(sim_sidechan_open(path, &holder), 0);
	int fd = open(path, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(fd, 0);
	char *out = g_build_filename(run, "x.raw", NULL);
	s.epoch_ns = sync_now(SYNC_KIND_CPU);
	char *env_epoch = g_strdup_printf("CHORUS_SIM_EPOCH_NS=%lld", (long long)s.epoch_ns);
	char *env_conf = g_strdup_printf("ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:%s", SIM_CONF_FILE);
	char *env_run = g_strdup_printf("CHORUS_RUN=%s", run);
	char *env_pre = g_strdup_printf("LD_PRELOAD=%s", SIM_PRELOAD);
	char *envp[] = {env_conf, "CHORUS_SCENARIO=" SCENARIO, "CHORUS_NODE=2", env_run, env_epoch,
			"ASAN_OPTIONS=detect_leaks=0", *SIM_PRELOAD ? env_pre : NULL, NULL};
	char *argv[] = {arecord, "-q", "-D", "chorus_sim", "-f", "S16_LE", "-r", "48000", "-c", "1",
			"-t", "raw", "-s", "9600", "--period-size=480", "--buffer-size=30720", out, NULL};
	char *err_text = NULL;
	int status = -1;
	GError *err = NULL;
	ck_assert_msg(g_spawn_sync(NULL, argv, envp, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err_text, &status, &err),
		      "spawn arecord: %s", err ? err->message : "");
	ck_assert_msg(g_spawn_check_wait_status(status, NULL), "arecord failed: %s", err_text);
	gchar *data;
	gsize len;
	ck_assert(g_file_get_contents(out, &data, &len, NULL));
	ck_assert_uint_eq(len, 9600 * 2);
	struct chorus_kpatch_record rec[MAX_RECS];
	size_t nrec = read_records(fd, rec, MAX_RECS);
	ck_assert_uint_ge(nrec, 20);
	int64_t f0 = find_f0(&s, &rec[0]);
	ck_assert(f0 != INT64_MIN);
	check_records(&s, rec, nrec, f0, 0);
	double peak;
	void *p[1] = {data};
	check_samples(&s, SND_PCM_FORMAT_S16_LE, p, 1, 1, 9600, f0, &peak);
	g_free(data);
	close(fd);
	sim_sidechan_close(holder);
	g_free(err_text);
	g_free(env_epoch);
	g_free(env_conf);
	g_free(env_run);
	g_free(env_pre);
	g_free(out);
	g_free(run);
	g_free(arecord);
	sim_world_free(s.w);
	sim_scenario_free(s.sc);
}
END_TEST

START_TEST(sidechannel_default_path)
{
	char buf[256];
	ck_assert_int_gt(kpatch_sidechan_path_for("/run/chorus", NULL, "chorus_sim", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "/run/chorus/kpatch/sim-chorus_sim");
	ck_assert_int_gt(kpatch_sidechan_path_for("/r", "7", "plug:chorus_sim/x", buf, sizeof buf), 0);
	ck_assert_str_eq(buf, "/r/sim/node7/kpatch/sim-plug_chorus_sim_x");
	ck_assert_int_eq(kpatch_sidechan_path_for("/r", "x7", "a", buf, sizeof buf), -EINVAL);
	ck_assert_int_eq(kpatch_sidechan_path_for("/r", NULL, "a", buf, 8), -ENAMETOOLONG);
	/* A full FIFO drops and counts, never blocks. */
	char *p = g_build_filename(run_dir(), "full", "fifo", NULL);
	sim_sidechan *sc;
	ck_assert_int_eq(sim_sidechan_open(p, &sc), 0);
	struct chorus_kpatch_record r;
	memset(&r, 0, sizeof r);
	int full = 0;
	for (int i = 0; i < 100000 && !full; i++)
		full = sim_sidechan_write(sc, &r) == -EAGAIN;
	ck_assert(full);
	ck_assert_uint_eq(sim_sidechan_dropped(sc), 1);
	sim_sidechan_close(sc);
	g_free(p);
}
END_TEST

int main(void)
{
	unsetenv("CHORUS_SIM_CLOCK"); /* the test reads true (host) time */
	Suite *s = suite_create("simpcm");
	TCase *tc = tcase_create("alsa");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, sidechannel_default_path);
	tcase_add_test(tc, hw_params_are_constrained);
	tcase_add_test(tc, s16_interleaved_blocking);
	tcase_add_test(tc, s32_noninterleaved_blocking);
	tcase_add_test(tc, s16_rendered_inline);
	tcase_add_test(tc, float_mmap_with_poll);
	tcase_add_test(tc, xrun_gives_epipe_and_frames_keep_real_time);
	/* Without arecord (alsa-utils, which `make deps` installs) that test
	 * cannot run: the others still do, and the program then exits 77 so
	 * tests/run counts it as skipped, not passed. */
	char *arecord = g_find_program_in_path("arecord");
	if (arecord)
		tcase_add_test(tc, arecord_records_with_the_shipped_config);
	suite_add_tcase(s, tc);
	int failed = tu_check_run(s);
	if (!failed && !arecord) {
		printf("SKIP: arecord_records_with_the_shipped_config (arecord is not installed; make deps installs alsa-utils)\n");
		return 77;
	}
	g_free(arecord);
	return failed ? 1 : 0;
}
