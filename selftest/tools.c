/* tools.c — running chorus's clients for the self-test (see tools.h). */
#include "selftest/tools.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *tool_dir;

void tools_set_dir(const char *dir)
{
	g_free(tool_dir);
	tool_dir = dir ? g_strdup(dir) : NULL;
}

/* The path of tool `name`: next to this binary (or in tools_set_dir's
 * directory) when there, else found on PATH; g_free.  NULL if nowhere. */
static char *tool_path(const char *name)
{
	if (!tool_dir) {
		char *exe = g_file_read_link("/proc/self/exe", NULL);
		tool_dir = exe ? g_path_get_dirname(exe) : g_strdup(".");
		g_free(exe);
	}
	char *p = g_build_filename(tool_dir, name, NULL);
	if (g_file_test(p, G_FILE_TEST_IS_EXECUTABLE))
		return p;
	g_free(p);
	return g_find_program_in_path(name);
}

int tools_run(char **argv, char **out, char **errout)
{
	char *path = tool_path(argv[0]), *o = NULL, *e = NULL;
	GError *err = NULL;
	int status = 0;
	if (out)
		*out = NULL;
	if (errout)
		*errout = NULL;
	if (!path) {
		if (errout)
			*errout = g_strdup_printf("%s: not found next to chorus-selftest nor on PATH", argv[0]);
		return -1;
	}
	char *a0 = argv[0];
	argv[0] = path;
	gboolean ok = g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &o, &e, &status, &err);
	argv[0] = a0;
	g_free(path);
	if (!ok) {
		if (errout)
			*errout = g_strdup_printf("%s: %s", a0, err->message);
		g_error_free(err);
		return -1;
	}
	if (out)
		*out = o;
	else
		g_free(o);
	if (errout)
		*errout = e;
	else
		g_free(e);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return -1;
}

int tools_parse_tval(const char *s, sync_tval *v)
{
	char *end;
	errno = 0;
	long long i = strtoll(s, &end, 10);
	if (end == s || errno)
		return -1;
	v->i = i;
	v->f = 0;
	if (*end == '.') {
		double f = strtod(end, NULL); /* ".250" */
		v->f = s[0] == '-' ? -f : f;
	}
	return 0;
}

/* The value of key= in a line of space-separated key=value words, into
 * buf; NULL when absent (pure). */
static const char *field(const char *text, const char *key, char *buf, size_t len)
{
	size_t kl = strlen(key);
	for (const char *p = text; (p = strstr(p, key)); p += kl) {
		if ((p == text || p[-1] == ' ' || p[-1] == '\n') && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, " \n");
			if (n >= len)
				n = len - 1;
			memcpy(buf, p + kl + 1, n);
			buf[n] = 0;
			return buf;
		}
	}
	return NULL;
}

/* The line of text that starts with `head` (pure); NULL if none. */
static const char *line_of(const char *text, const char *head)
{
	size_t hl = strlen(head);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, head, hl))
			return p;
	return NULL;
}

/* A numeric field of the line starting with head, or def (pure). */
static double num(const char *text, const char *head, const char *key, double def)
{
	char b[64], l[512];
	const char *p = line_of(text, head);
	if (!p)
		return def;
	size_t n = strcspn(p, "\n");
	g_strlcpy(l, p, MIN(n + 1, sizeof l));
	return field(l, key, b, sizeof b) ? strtod(b, NULL) : def;
}

/* A word field of the line starting with head into out (pure). */
static void word(const char *text, const char *head, const char *key, char *out, size_t len)
{
	char l[512];
	const char *p = line_of(text, head);
	*out = 0;
	if (!p)
		return;
	size_t n = strcspn(p, "\n");
	g_strlcpy(l, p, MIN(n + 1, sizeof l));
	if (!field(l, key, out, len))
		*out = 0;
}

int tools_status_read(int k, tools_status *st, char *why, size_t len)
{
	char dev[32], *out = NULL, *err = NULL;
	g_snprintf(dev, sizeof dev, "audio/%d/status", k);
	char *argv[] = {"chorus-cat", dev, NULL};
	int rc = tools_run(argv, &out, &err);
	memset(st, 0, sizeof *st);
	if (rc != 0 || !out || !line_of(out, "tstamp ")) {
		g_snprintf(why, len, "chorus-cat %s: %s", dev, err && *err ? g_strstrip(err) : "no status");
		g_free(out);
		g_free(err);
		return -1;
	}
	g_strlcpy(st->text, out, sizeof st->text);
	word(out, "device ", "pcm", st->pcm, sizeof st->pcm);
	st->rate = (unsigned)num(out, "format ", "rate", 0);
	st->channels = (unsigned)num(out, "format ", "channels", 0);
	st->period = (unsigned)num(out, "format ", "period", 0);
	st->buffer = (unsigned)num(out, "format ", "buffer", 0);
	word(out, "format ", "format", st->format, sizeof st->format);
	st->captured = (uint64_t)num(out, "frames ", "captured", 0);
	st->xruns = (uint64_t)num(out, "xruns ", "count", 0);
	st->frames_lost = (uint64_t)num(out, "xruns ", "frames_lost", 0);
	st->restart_se_frames = num(out, "xruns ", "restart_se_frames", 0);
	word(out, "tstamp ", "source", st->source, sizeof st->source);
	st->records = (uint64_t)num(out, "tstamp ", "records", 0);
	st->lost = (uint64_t)num(out, "tstamp ", "lost", 0);
	st->malformed = (uint64_t)num(out, "tstamp ", "malformed", 0);
	st->systematic_us = num(out, "tstamp ", "systematic_us", 0);
	st->updated = (uint64_t)num(out, "tstamp ", "updated", 0);
	st->bracket_p50_us = num(out, "bracket_us ", "p50", 0);
	st->bracket_p99_us = num(out, "bracket_us ", "p99", 0);
	st->bracket_max_us = num(out, "bracket_us ", "max", 0);
	st->have_fit = line_of(out, "fit ns_per_frame=") != NULL;
	st->fit_rate = num(out, "fit ", "rate", 0);
	st->rate_se_ppm = num(out, "fit ", "rate_se_ppm", 0);
	st->residual_ns = num(out, "fit ", "residual_ns", 0);
	st->fit_n = (unsigned)num(out, "fit ", "n", 0);
	st->segment = (unsigned)num(out, "fit ", "segment", 0);
	st->lat_p50_us = num(out, "latency_us ", "p50", 0);
	st->lat_p99_us = num(out, "latency_us ", "p99", 0);
	st->lat_max_us = num(out, "latency_us ", "max", 0);
	char rt[16];
	word(out, "latency_us ", "rt", rt, sizeof rt);
	st->rt = *rt && strcmp(rt, "no") != 0; /* rt=SCHED_FIFO or rt=no */
	g_free(out);
	g_free(err);
	return 0;
}

/* Parse audioget's report (stderr) into r (pure). */
static void parse_report(const char *text, tools_reply *r)
{
	char b[64];
	const char *p = line_of(text, "audioget: first=");
	if (p) {
		char l[1024];
		g_strlcpy(l, p, MIN(strcspn(p, "\n") + 1, sizeof l));
		r->first = field(l, "first", b, sizeof b) ? strtoll(b, NULL, 10) : -1;
		r->last = field(l, "last", b, sizeof b) ? strtoll(b, NULL, 10) : -1;
		r->se_frames = field(l, "se_frames", b, sizeof b) ? strtod(b, NULL) : 0;
		r->se_ns = field(l, "se_ns", b, sizeof b) ? strtod(b, NULL) : 0;
	}
	/* "audioget: first frame at CLOCK T0 (s.e. SE), frame period P (s.e. PSE)" */
	p = line_of(text, "audioget: first frame at ");
	char t0[64];
	if (p && sscanf(p, "audioget: first frame at %31s %63s (s.e. %lf), frame period %lf (s.e. %lf)", r->t0_clock, t0, &r->t0_se, &r->period, &r->period_se) == 5 &&
	    tools_parse_tval(t0, &r->t0) == 0)
		r->have_t0 = 1;
}

int tools_get(int k, const char *clock, int64_t a, int64_t b, tools_reply *r, char *why, size_t len)
{
	char dev[16], sa[32], sb[32], *err = NULL;
	memset(r, 0, sizeof *r);
	r->first = -1;
	/* A name of our own (sndfile picks the format by the extension). */
	char *path = g_strdup_printf("%s/chorus-selftest-%d-%" G_GINT64_FORMAT ".wav", g_get_tmp_dir(), (int)getpid(),
				     g_get_monotonic_time());
	g_snprintf(dev, sizeof dev, "%d", k);
	g_snprintf(sa, sizeof sa, "%" G_GINT64_FORMAT, a);
	g_snprintf(sb, sizeof sb, "%" G_GINT64_FORMAT, b);
	char *argv_t[] = {"audioget", "--device", dev, "--clock", (char *)clock, "--from", sa, "--to", sb, "-o", path, NULL};
	char *argv_f[] = {"audioget", "--device", dev, "--first", sa, "--last", sb, "-o", path, NULL};
	int rc = tools_run(clock ? argv_t : argv_f, NULL, &err);
	if (rc != 0) {
		g_snprintf(why, len, "audioget %s %s..%s: %s", clock ? clock : "frames", sa, sb,
			   err ? g_strstrip(err) : "failed");
		goto out;
	}
	parse_report(err, r);
	SF_INFO info = {0};
	SNDFILE *sf = sf_open(path, SFM_READ, &info);
	if (!sf) {
		g_snprintf(why, len, "%s: %s", path, sf_strerror(NULL));
		rc = -1;
		goto out;
	}
	r->channels = (unsigned)info.channels;
	r->nframes = info.frames;
	r->samples = g_new0(int32_t, (size_t)(info.frames * info.channels) + 1);
	sf_count_t got = sf_readf_int(sf, r->samples, info.frames);
	sf_close(sf);
	if (got != info.frames) {
		g_snprintf(why, len, "%s: read %lld of %lld frames", path, (long long)got, (long long)info.frames);
		rc = -1;
		goto out;
	}
	/* libsndfile scales 16- and 24-bit samples into the top of an int. */
	int sub = info.format & SF_FORMAT_SUBMASK;
	int shift = sub == SF_FORMAT_PCM_16 ? 16 : sub == SF_FORMAT_PCM_24 ? 8
									   : 0;
	for (sf_count_t i = 0; shift && i < info.frames * info.channels; i++)
		r->samples[i] >>= shift;
	if (r->first < 0) {
		g_snprintf(why, len, "audioget reported no frame range: %s", err);
		rc = -1;
	}
out:
	g_unlink(path);
	g_free(path);
	g_free(err);
	return rc == 0 ? 0 : -1;
}

void tools_reply_clear(tools_reply *r)
{
	g_free(r->samples);
	r->samples = NULL;
}

int tools_convert(const char *from, const char *to, sync_tval value, sync_tval *out, double *se, char *why, size_t len)
{
	char v[64], *o = NULL, *e = NULL;
	double f = value.f;
	int64_t i = value.i;
	while (f < 0) {
		f += 1;
		i -= 1;
	}
	while (f >= 1) {
		f -= 1;
		i += 1;
	}
	g_snprintf(v, sizeof v, "%" G_GINT64_FORMAT ".%06d", i, (int)(f * 1e6));
	char *argv[] = {"synctool", "convert", (char *)from, (char *)to, v, NULL};
	int rc = tools_run(argv, &o, &e);
	char val[64];
	if (rc != 0 || !o || sscanf(o, "%63s ± %lf", val, se) != 2 || tools_parse_tval(val, out) < 0) {
		g_snprintf(why, len, "synctool convert %s %s %s: %s", from, to, v,
			   e && *e ? g_strstrip(e) : (o ? o : "failed"));
		rc = -1;
	}
	g_free(o);
	g_free(e);
	return rc == 0 ? 0 : -1;
}

struct tools_follow {
	GPid pid;
	int out_fd, err_fd;
	GThread *out_thread, *err_thread;
	GByteArray *data;
	GMutex lock; /* guards first, gaps */
	int64_t first;
	GArray *gaps; /* int64 pairs */
};

/* Thread: collect the raw stream. */
static gpointer follow_out(gpointer data)
{
	tools_follow *f = data;
	uint8_t buf[65536];
	ssize_t n;
	while ((n = read(f->out_fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			g_byte_array_append(f->data, buf, (guint)n);
	return NULL;
}

/* Thread: parse the report lines (first=, gaps). */
static gpointer follow_err(gpointer data)
{
	tools_follow *f = data;
	FILE *in = fdopen(f->err_fd, "r");
	char line[1024];
	while (in && fgets(line, sizeof line, in)) {
		long long a, b;
		g_mutex_lock(&f->lock);
		if (!strncmp(line, "audioget: first=", 16) && f->first < 0)
			f->first = strtoll(line + 16, NULL, 10);
		else if (sscanf(line, "audioget: gap: frames [%lld, %lld)", &a, &b) == 2) {
			int64_t g[2] = {a, b};
			g_array_append_vals(f->gaps, g, 2);
		}
		g_mutex_unlock(&f->lock);
	}
	if (in)
		fclose(in);
	return NULL;
}

tools_follow *tools_follow_start(int k, char *why, size_t len)
{
	char dev[16];
	char *path = tool_path("audioget");
	GError *err = NULL;
	if (!path) {
		g_snprintf(why, len, "audioget: not found next to chorus-selftest nor on PATH");
		return NULL;
	}
	g_snprintf(dev, sizeof dev, "%d", k);
	char *argv[] = {path, "--device", dev, "--follow", NULL};
	tools_follow *f = g_new0(tools_follow, 1);
	f->first = -1;
	g_mutex_init(&f->lock);
	f->data = g_byte_array_new();
	f->gaps = g_array_new(FALSE, FALSE, sizeof(int64_t));
	if (!g_spawn_async_with_pipes(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &f->pid, NULL,
				      &f->out_fd, &f->err_fd, &err)) {
		g_snprintf(why, len, "audioget --follow: %s", err->message);
		g_error_free(err);
		g_free(path);
		g_byte_array_unref(f->data);
		g_array_free(f->gaps, TRUE);
		g_free(f);
		return NULL;
	}
	g_free(path);
	f->out_thread = g_thread_new("follow-out", follow_out, f);
	f->err_thread = g_thread_new("follow-err", follow_err, f);
	return f;
}

int64_t tools_follow_first(tools_follow *f)
{
	g_mutex_lock(&f->lock);
	int64_t v = f->first;
	g_mutex_unlock(&f->lock);
	return v;
}

int tools_follow_stop(tools_follow *f, uint8_t **data, size_t *bytes, int64_t *first, int64_t **gaps, int *ngaps)
{
	int status = 0;
	kill(f->pid, SIGINT);
	if (waitpid(f->pid, &status, 0) < 0)
		status = -1;
	g_thread_join(f->out_thread);
	g_thread_join(f->err_thread);
	close(f->out_fd);
	g_spawn_close_pid(f->pid);
	*bytes = f->data->len;
	*data = g_byte_array_free(f->data, FALSE);
	*first = f->first;
	*ngaps = (int)f->gaps->len / 2;
	*gaps = (int64_t *)(void *)g_array_free(f->gaps, FALSE);
	g_mutex_clear(&f->lock);
	g_free(f);
	return status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status)
						   : -1;
}
