/* audiod_harness.c — syncd + audiod of one simulated node, with the world's
 * truth (see audiod_harness.h). */
#include "tests/audiod_harness.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/samplefmt.h"

void (*ah_fail_hook)(const char *msg);

void ah_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *m = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	char *msg = g_strdup_printf("%s:%d: %s", file, line, m);
	g_free(m);
	if (ah_fail_hook)
		ah_fail_hook(msg);
	ck_abort_msg("%s", msg);
}

const char *ah_scenario(void)
{
	return AH_SRC_DIR "/tests/data/audiod.ini";
}

int64_t ah_host_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void write_file(const char *path, const char *text)
{
	GError *err = NULL;
	AH_REQUIRE(g_file_set_contents(path, text, -1, &err), "%s", err ? err->message : path);
}

/* Runs in the forked child before exec: die with the test, log to a file. */
static void child_setup(gpointer log_path)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
}

static GPid spawn(const ah_node *h, char **argv, const char *name)
{
	GError *err = NULL;
	GPid pid;
	static char log[600]; /* used by the child before exec only */
	g_snprintf(log, sizeof log, "%s/%s.log", h->run, name);
	AH_REQUIRE(g_spawn_async(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, child_setup, log, &pid, &err),
		   "spawn %s: %s", argv[0], err ? err->message : "");
	return pid;
}

void ah_start(ah_node *h, int node, const char *tag, const ah_opts *o)
{
	static const ah_opts none = {0};
	GError *err = NULL;
	char path[700], buf[64];
	if (!o)
		o = &none;
	memset(h, 0, sizeof *h);
	h->node = node;
	const char *base = g_getenv("CHORUS_RUN");
	g_snprintf(h->run, sizeof h->run, "%s/%s-%d", base && *base ? base : g_get_tmp_dir(), tag, (int)getpid());
	AH_REQUIRE(g_mkdir_with_parents(h->run, 0755) == 0, "mkdir %s", h->run);

	h->sc = sim_scenario_load(ah_scenario(), &err);
	AH_REQUIRE(h->sc, "%s", err ? err->message : "");
	h->w = sim_world_new(h->sc, &err);
	AH_REQUIRE(h->w, "%s", err ? err->message : "");
	const sim_node_cfg *nc = sim_scenario_find_node(h->sc, node);
	AH_REQUIRE(nc, "%s has no node %d", ah_scenario(), node);
	h->rate_hz = sim_scenario_world(h->sc)->sample_rate_hz;
	h->channels = o->channels ? o->channels : (unsigned)nc->n_mics;
	h->period = o->period ? o->period : 480;

	/* This process becomes virtual node N too (its libsync and libdev
	 * paths), and the daemons inherit the environment. */
	g_setenv("CHORUS_RUN", h->run, TRUE);
	g_snprintf(buf, sizeof buf, "%d", node);
	g_setenv("CHORUS_NODE", buf, TRUE);
	g_snprintf(buf, sizeof buf, "%.17g,%lld", nc->cpu.skew_ppm, (long long)nc->cpu.offset_ns);
	g_setenv("CHORUS_SIM_CLOCK", buf, TRUE);
	g_setenv("CHORUS_SCENARIO", ah_scenario(), TRUE);
	h->epoch_ns = ah_host_now();
	g_snprintf(buf, sizeof buf, "%lld", (long long)h->epoch_ns);
	g_setenv("CHORUS_SIM_EPOCH_NS", buf, TRUE);
	char *alsa = g_strdup_printf("/usr/share/alsa/alsa.conf:%s", AH_SIM_CONF);
	if (o->alsa_extra) {
		g_snprintf(path, sizeof path, "%s/extra-alsa.conf", h->run);
		write_file(path, o->alsa_extra);
		char *t = g_strdup_printf("%s:%s", alsa, path);
		g_free(alsa);
		alsa = t;
	}
	g_setenv("ALSA_CONFIG_PATH", alsa, TRUE);
	g_free(alsa);
	char conf[700];
	g_snprintf(conf, sizeof conf, "%s/audiod.conf", h->run);
	/* Default: a deep ALSA buffer (640 ms) so a loaded machine does not
	 * make overruns the tests did not ask for. */
	write_file(conf, o->audiod_conf ? o->audiod_conf : "[device.0]\nperiods = 64\n");

	/* RBS off: side-by-side test runs must not hear each other. */
	char *sargv[] = {AH_BIN_DIR "/syncd", "-c", AH_SRC_DIR "/tests/data/syncd-alone.conf", NULL};
	h->syncd = spawn(h, sargv, "syncd");
	char ch[16], per[16];
	g_snprintf(ch, sizeof ch, "%u", h->channels);
	g_snprintf(per, sizeof per, "%u", h->period);
	char *aargv[16] = {AH_BIN_DIR "/audiod", "--pcm", (char *)(o->pcm ? o->pcm : "chorus_sim"), "--channels", ch,
			   "--period", per, "-c", conf};
	int n = 9;
	if (o->tstamp) {
		aargv[n++] = "--tstamp";
		aargv[n++] = (char *)o->tstamp;
	}
	if (o->obs_log) {
		aargv[n++] = "--obs-log";
		aargv[n++] = (char *)o->obs_log;
	}
	aargv[n] = NULL;
	g_strfreev(h->audiod_argv);
	h->audiod_argv = g_strdupv(aargv);
	h->spawn_host_ns = ah_host_now();
	h->audiod = spawn(h, aargv, "audiod");
	ah_wait_frames(4 * h->period);
}

/* Wait for pid up to ~10 s; SIGKILL after.  Returns the wait status. */
static int reap(GPid pid);

void ah_restart_audiod(ah_node *h)
{
	kill(h->audiod, SIGTERM);
	int st = reap(h->audiod);
	AH_REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "audiod did not exit cleanly on SIGTERM (status %d)", st);
	h->audiod = spawn(h, h->audiod_argv, "audiod");
}

/* Wait for pid up to ~10 s; SIGKILL after.  Returns the wait status. */
static int reap(GPid pid)
{
	int status = 0;
	for (int i = 0; i < 1000; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return status;
		g_usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return status;
}

void ah_stop(ah_node *h)
{
	int st_a = 0;
	if (h->audiod > 0) {
		kill(h->audiod, SIGTERM);
		st_a = reap(h->audiod);
		h->audiod = 0;
	}
	if (h->syncd > 0) {
		kill(h->syncd, SIGTERM);
		reap(h->syncd);
		h->syncd = 0;
	}
	sim_world_free(h->w);
	sim_scenario_free(h->sc);
	g_strfreev(h->audiod_argv);
	h->audiod_argv = NULL;
	h->w = NULL;
	h->sc = NULL;
	/* audiod must stop cleanly (also: no sanitizer report in SANITIZE builds). */
	AH_REQUIRE(WIFEXITED(st_a) && WEXITSTATUS(st_a) == 0, "audiod exit status 0x%x (see %s/audiod.log)", st_a,
		   h->run);
}

char *ah_status(void)
{
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync("audio/0/status", FALSE, b, 5000);
	AH_REQUIRE(rc == 0, "audio/0/status: %s", rc < 0 ? (const char *)b->data : "");
	return (char *)g_byte_array_free(b, FALSE);
}

int64_t ah_field(const char *text, const char *key)
{
	char pat[64];
	g_snprintf(pat, sizeof pat, "%s=", key);
	const char *p = strstr(text, pat);
	AH_REQUIRE(p, "no %s in status:\n%s", pat, text);
	return g_ascii_strtoll(p + strlen(pat), NULL, 10);
}

int64_t ah_wait_frames(int64_t n)
{
	gint64 end = g_get_monotonic_time() + AH_SAFETY_S * G_USEC_PER_SEC;
	for (;;) {
		GByteArray *b = g_byte_array_new();
		int rc = dev_status_read_sync("audio/0/status", FALSE, b, 2000);
		int64_t got = -1;
		if (rc == 0) {
			const char *p = strstr((const char *)b->data, "captured=");
			if (p)
				got = g_ascii_strtoll(p + 9, NULL, 10);
		}
		g_byte_array_free(b, TRUE);
		if (got >= n)
			return got;
		AH_REQUIRE(g_get_monotonic_time() < end, "audiod did not reach %lld frames (status rc %d, frames %lld)",
			   (long long)n, rc, (long long)got);
		g_usleep(20000);
	}
}

int16_t ah_expect_s16(const ah_node *h, int c, int64_t F)
{
	return sim_to_s16(sim_world_sample(h->w, h->node, c, h->rate_hz, F));
}

long ah_mismatch(const ah_node *h, const int16_t *x, size_t n, unsigned nch, const uint16_t *chan, int64_t F)
{
	for (size_t i = 0; i < n; i++)
		for (unsigned c = 0; c < nch; c++)
			if (x[i * nch + c] != ah_expect_s16(h, chan ? chan[c] : (int)c, F + (int64_t)i))
				return (long)i;
	return -1;
}

int64_t ah_find_f0_on(ah_node *h, const char *device)
{
	const size_t n = 960;
	int64_t f0 = 0;
	ah_reader *r = ah_read_on(device, 0, (int64_t)n, NULL);
	AH_REQUIRE(r->ended && r->data->len == n * h->channels * 2, "read [0, %zu): err %d %s, %u bytes", n, r->err,
		   r->errmsg ? r->errmsg : "", r->data->len);
	/* audiod's stream started between the spawn and now. */
	int64_t lo = sim_world_first_frame_at(h->w, h->node, h->rate_hz, h->spawn_host_ns - h->epoch_ns) - 2;
	int64_t hi = sim_world_first_frame_at(h->w, h->node, h->rate_hz, ah_host_now() - h->epoch_ns) + 2;
	int found = 0;
	for (int64_t F = lo; F <= hi; F++)
		if (ah_mismatch(h, (const int16_t *)r->data->data, n, h->channels, NULL, F) < 0) {
			f0 = F;
			found++;
		}
	ah_reader_free(r);
	AH_REQUIRE(found == 1, "%s: %d world frames in [%lld, %lld] match audiod's frames [0, %zu)", device, found,
		   (long long)lo, (long long)hi, n);
	return f0;
}

void ah_find_f0(ah_node *h)
{
	h->f0 = ah_find_f0_on(h, "audio/0/data");
}

/* ---- sensor clients -------------------------------------------------------- */

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	ah_reader *r = user;
	r->first = first;
	r->last = last;
	r->next = first;
	r->item_size = item_size;
	g_free(r->reply);
	r->reply = g_strndup(reply, len);
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	ah_reader *r = user;
	if (first != r->next)
		r->out_of_order++;
	r->next = first + (int64_t)n;
	if (r->on_chunk)
		r->on_chunk(r->chunk_user, first, n);
	if (r->stop_after && (int64_t)(r->data->len / r->item_size) >= r->stop_after)
		return;
	g_byte_array_append(r->data, items, (guint)(n * r->item_size));
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	ah_reader *r = user;
	if (!r->gaps) {
		r->gap_from = from;
		r->gap_to = to;
	}
	if (r->gaps < AH_MAX_GAPS) {
		r->gap[r->gaps].from = from;
		r->gap[r->gaps].to = to;
	}
	r->gaps++;
	r->gap_to_last = to;
	if (from != r->next)
		r->out_of_order++;
	r->next = to;
}

static void on_end(void *user, int64_t next)
{
	ah_reader *r = user;
	r->ended = 1;
}

static void on_error(void *user, int err, const char *msg)
{
	ah_reader *r = user;
	r->err = err ? err : -EIO;
	g_free(r->errmsg);
	r->errmsg = g_strdup(msg);
}

static const dev_sensor_reader_ops reader_ops = {on_opened, on_data, on_gap, on_end, on_error, NULL};

ah_reader *ah_reader_new(GMainContext *ctx, int64_t first, int64_t last, uint32_t flags, const char *params)
{
	return ah_reader_new_on(ctx, "audio/0/data", first, last, flags, params);
}

ah_reader *ah_reader_new_on(GMainContext *ctx, const char *device, int64_t first, int64_t last, uint32_t flags,
			    const char *params)
{
	GError *err = NULL;
	ah_reader *r = g_new0(ah_reader, 1);
	r->data = g_byte_array_new();
	r->next = INT64_MIN;
	r->r = dev_sensor_reader_new(device, first, last, flags, params, params ? strlen(params) : 0, ctx,
				     &reader_ops, r, &err);
	AH_REQUIRE(r->r, "sensor reader: %s", err ? err->message : "");
	return r;
}

void ah_reader_free(ah_reader *r)
{
	if (!r)
		return;
	dev_sensor_reader_free(r->r);
	g_byte_array_free(r->data, TRUE);
	g_free(r->reply);
	g_free(r->errmsg);
	g_free(r);
}

static gboolean tick(gpointer unused)
{
	return G_SOURCE_CONTINUE;
}

void ah_spin(GMainContext *ctx, gboolean (*done)(void *user), void *user)
{
	gint64 end = g_get_monotonic_time() + AH_SAFETY_S * G_USEC_PER_SEC;
	GSource *hb = g_timeout_source_new(5);
	g_source_set_callback(hb, tick, NULL, NULL);
	g_source_attach(hb, ctx);
	while (!done(user) && g_get_monotonic_time() < end)
		g_main_context_iteration(ctx, TRUE);
	g_source_destroy(hb);
	g_source_unref(hb);
	AH_REQUIRE(done(user), "gave up waiting after %d s", AH_SAFETY_S);
}

typedef struct {
	ah_reader **r;
	int n;
} reader_set;

static gboolean all_done(void *user)
{
	reader_set *s = user;
	for (int i = 0; i < s->n; i++)
		if (!s->r[i]->ended && !s->r[i]->err)
			return FALSE;
	return TRUE;
}

void ah_spin_readers(GMainContext *ctx, ah_reader **r, int n)
{
	reader_set s = {r, n};
	ah_spin(ctx, all_done, &s);
}

ah_reader *ah_read(int64_t first, int64_t last, const char *params)
{
	return ah_read_on("audio/0/data", first, last, params);
}

ah_reader *ah_read_on(const char *device, int64_t first, int64_t last, const char *params)
{
	GMainContext *ctx = g_main_context_new();
	ah_reader *r = ah_reader_new_on(ctx, device, first, last, 0, params);
	ah_spin_readers(ctx, &r, 1);
	/* Free the client before its context. */
	dev_sensor_reader_free(r->r);
	r->r = NULL;
	g_main_context_unref(ctx);
	return r;
}
