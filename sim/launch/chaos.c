/* chaos.c — faults injected into a running simulation (see chaos.h). */
#include "sim/launch/chaos.h"
#include "sim/launch/chaos_audio.h"
#include "sim/launch/chaos_clients.h"
#include "sim/launch/growth.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROGS CSIM_MAX_PROCS

typedef struct {
	double t_s;     /* the chaos clock: s since the faults began */
	double w_s;     /* the world's clock (csim_epoch_ns) */
	double until_s; /* world s: when a kill, stop or crash ended (the restart, the continue), a cut's end; NAN open */
	int node;
	const char *prog;
	char action[16];
	char detail[160];
} chaos_event;

typedef struct {
	pid_t pid;
	double born_s;
	GArray *usage; /* csim_usage, from 30 s into its life (growth.h) */
	csim_growth g; /* judged when the life ended */
} instance;

typedef struct {
	int node;
	const char *prog;
	int busy;      /* an action is in flight (killed or stopped) */
	instance cur;  /* the running instance's samples */
	GArray *lives; /* instance: the ended ones */
} target;

struct csim_chaos {
	csim *s;
	GRand *rng;
	double interval_s;
	gint64 t0_us;
	GArray *targets; /* target */
	GArray *events;  /* chaos_event */
	guint tick, next;
	int crashes, failed_restarts;
	gboolean finished;
	csim_chaos_restarted_fn restarted;
	void *user;
	gboolean hog;            /* csim_chaos_hog */
	gboolean radio;          /* csim_chaos_radio */
	GString *cuts;           /* the radio cuts so far, as written to radio-cuts */
	int hogs_live;           /* hog processes not yet reaped */
	csim_chaos_audio *audio; /* every audio gap explained (chaos_audio.h) */
};

static double now_s(const csim_chaos *c)
{
	return (double)(g_get_monotonic_time() - c->t0_us) / 1e6;
}

/* Now on the world's clock, s. */
static double world_s(const csim_chaos *c)
{
	return csim_world_s(c->s);
}

/* The newest open kill, stop or crash of t's program ends now. */
static void close_span(csim_chaos *c, const target *t)
{
	for (guint i = c->events->len; i-- > 0;) {
		chaos_event *e = &g_array_index(c->events, chaos_event, i);
		if (e->node == t->node && e->prog == t->prog && isnan(e->until_s) &&
		    (!strcmp(e->action, "kill") || !strcmp(e->action, "stop") || !strcmp(e->action, "crashed"))) {
			e->until_s = world_s(c);
			return;
		}
	}
}

static void note(csim_chaos *c, const target *t, const char *action, const char *fmt, ...) G_GNUC_PRINTF(4, 5);
static void note(csim_chaos *c, const target *t, const char *action, const char *fmt, ...)
{
	chaos_event e = {now_s(c), world_s(c), NAN, t->node, t->prog, "", ""};
	g_strlcpy(e.action, action, sizeof e.action);
	va_list ap;
	va_start(ap, fmt);
	g_vsnprintf(e.detail, sizeof e.detail, fmt, ap);
	va_end(ap);
	g_array_append_val(c->events, e);
	g_message("chaos %.1f s: node%d %s %s %s", e.t_s, t->node, t->prog, action, e.detail);
}

/* The process's own resident memory (kB: RssAnon + RssShmem, its heap,
 * stacks and shared memory; not RssFile, the pages of its libraries' code
 * read in as new paths run) and open descriptors of pid; FALSE if gone. */
static gboolean proc_usage(pid_t pid, long *rss_kb, int *fds)
{
	char path[64], *text = NULL;
	g_snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (!g_file_get_contents(path, &text, NULL, NULL))
		return FALSE;
	const char *a = strstr(text, "RssAnon:"), *m = strstr(text, "RssShmem:");
	*rss_kb = (a ? strtol(a + 8, NULL, 10) : 0) + (m ? strtol(m + 9, NULL, 10) : 0);
	g_free(text);
	g_snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	*fds = 0;
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)))
			*fds += de->d_name[0] != '.';
		closedir(d);
	}
	return TRUE;
}

static void end_life(target *t)
{
	if (t->cur.pid > 0 && t->cur.usage && t->cur.usage->len) {
		csim_growth_judge((const csim_usage *)(void *)t->cur.usage->data, t->cur.usage->len, &t->cur.g);
		g_array_free(t->cur.usage, TRUE);
		t->cur.usage = NULL;
		g_array_append_val(t->lives, t->cur);
	}
	if (t->cur.usage)
		g_array_free(t->cur.usage, TRUE);
	memset(&t->cur, 0, sizeof t->cur);
}

/* Follow the instance running now: a new pid starts a new life. */
static void sample(csim_chaos *c, target *t)
{
	pid_t pid = csim_pid(c->s, t->node, t->prog);
	if (pid != t->cur.pid) {
		end_life(t);
		t->cur.pid = pid;
		t->cur.born_s = now_s(c);
	}
	long rss;
	int fds;
	/* The first sample 30 s into a life: start-up allocations are over. */
	if (pid > 0 && !t->busy && now_s(c) - t->cur.born_s >= 30 && proc_usage(pid, &rss, &fds)) {
		if (!t->cur.usage)
			t->cur.usage = g_array_new(FALSE, FALSE, sizeof(csim_usage));
		csim_usage u = {now_s(c), rss, fds};
		g_array_append_val(t->cur.usage, u);
	}
}

typedef struct {
	csim_chaos *c;
	target *t;
} pending;

static gboolean on_restart(gpointer data)
{
	pending *p = data;
	GError *err = NULL;
	if (!csim_proc_restart(p->c->s, p->t->node, p->t->prog, &err)) {
		p->c->failed_restarts++;
		note(p->c, p->t, "restart_failed", "%s", err->message);
		g_error_free(err);
	} else {
		close_span(p->c, p->t);
		note(p->c, p->t, "restarted", "pid %d", (int)csim_pid(p->c->s, p->t->node, p->t->prog));
		if (p->c->restarted)
			p->c->restarted(p->c->user, p->t->node, p->t->prog);
	}
	p->t->busy = 0;
	g_free(p);
	return G_SOURCE_REMOVE;
}

static gboolean on_continue(gpointer data)
{
	pending *p = data;
	if (csim_proc_signal(p->c->s, p->t->node, p->t->prog, SIGCONT) == 0) {
		close_span(p->c, p->t);
		note(p->c, p->t, "continued", "after SIGSTOP");
	}
	p->t->busy = 0;
	g_free(p);
	return G_SOURCE_REMOVE;
}

static gboolean on_action(gpointer data);

static void arm(csim_chaos *c)
{
	double gap = -c->interval_s * log(1.0 - g_rand_double(c->rng));
	c->next = g_timeout_add((guint)MAX(1.0, gap * 1000), on_action, c);
}

static void on_hog_exit(GPid pid, gint status, gpointer data)
{
	csim_chaos *c = data;
	c->hogs_live--;
	g_spawn_close_pid(pid);
}

/* Spin one core of the host for hog_s seconds from a child process. */
static void start_hog(csim_chaos *c, target *t, double hog_s)
{
	pid_t pid = fork();
	if (pid == 0) {
		gint64 end = g_get_monotonic_time() + (gint64)(hog_s * 1e6);
		volatile double x = 1;
		while (g_get_monotonic_time() < end)
			for (int i = 0; i < 100000; i++)
				x = x * 1.0000001 + 1e-9;
		_exit(0);
	}
	if (pid < 0) {
		note(c, t, "hog_failed", "fork: %s", g_strerror(errno));
		return;
	}
	c->hogs_live++;
	g_child_watch_add(pid, on_hog_exit, c);
	note(c, t, "hog", "a process spins on the host's cores for %.1f s (pid %d)", hog_s, (int)pid);
}

void csim_chaos_hog(csim_chaos *c, gboolean on)
{
	c->hog = on;
}

void csim_chaos_radio(csim_chaos *c, gboolean on)
{
	c->radio = on;
}

/* Cut t's node's radio for cut_s from now: the whole list rewritten and
 * renamed into place (the radios read it whole). */
static void cut_radio(csim_chaos *c, target *t, double cut_s)
{
	double now = world_s(c);
	if (!c->cuts)
		c->cuts = g_string_new(NULL);
	g_string_append_printf(c->cuts, "%d %.3f %.3f\n", t->node, now, now + cut_s);
	char *path = g_build_filename(csim_run_dir(c->s), "radio-cuts", NULL);
	GError *e = NULL;
	if (!g_file_set_contents(path, c->cuts->str, (gssize)c->cuts->len, &e)) {
		note(c, t, "radio_failed", "%s", e->message);
		g_error_free(e);
	} else {
		note(c, t, "radio", "the node's radio cut for %.1f s (world %.1f-%.1f s)", cut_s, now, now + cut_s);
		g_array_index(c->events, chaos_event, c->events->len - 1).until_s = now + cut_s;
	}
	g_free(path);
}

static gboolean on_action(gpointer data)
{
	csim_chaos *c = data;
	c->next = 0;
	target *t = &g_array_index(c->targets, target, g_rand_int_range(c->rng, 0, (gint32)c->targets->len));
	double roll = g_rand_double(c->rng), stop_s = g_rand_double_range(c->rng, 1.0, 5.0);
	double kind = g_rand_double(c->rng);
	if (c->hog && kind < 0.2) {
		start_hog(c, t, stop_s + 1.0);
		arm(c);
		return G_SOURCE_REMOVE;
	}
	if (c->radio && kind >= 0.2 && kind < 0.4) {
		cut_radio(c, t, 3.0 * stop_s);
		arm(c);
		return G_SOURCE_REMOVE;
	}
	if (!t->busy && csim_pid(c->s, t->node, t->prog) > 0) {
		pending *p = g_new(pending, 1);
		*p = (pending){c, t};
		t->busy = 1;
		if (roll < 0.6) {
			pid_t pid = csim_pid(c->s, t->node, t->prog);
			csim_proc_signal(c->s, t->node, t->prog, SIGKILL);
			note(c, t, "kill", "SIGKILL pid %d; restart in 1 s", (int)pid);
			g_timeout_add(1000, on_restart, p);
		} else {
			csim_proc_signal(c->s, t->node, t->prog, SIGSTOP);
			note(c, t, "stop", "SIGSTOP for %.1f s", stop_s);
			g_timeout_add((guint)(stop_s * 1000), on_continue, p);
		}
	}
	arm(c);
	return G_SOURCE_REMOVE;
}

/* Every second: crashes (a process gone that no action killed) are counted
 * and restarted, as systemd would; usage is sampled. */
static gboolean on_tick(gpointer data)
{
	csim_chaos *c = data;
	for (guint i = 0; i < c->targets->len; i++) {
		target *t = &g_array_index(c->targets, target, i);
		int status = 0;
		if (!t->busy && csim_proc_exited(c->s, t->node, t->prog, &status)) {
			c->crashes++;
			note(c, t, "crashed", "%s %d", WIFSIGNALED(status) ? "signal" : "exit status",
			     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			GError *err = NULL;
			if (!csim_proc_restart(c->s, t->node, t->prog, &err)) {
				c->failed_restarts++;
				note(c, t, "restart_failed", "%s", err->message);
				g_error_free(err);
			} else {
				close_span(c, t);
				if (c->restarted)
					c->restarted(c->user, t->node, t->prog);
			}
		}
		sample(c, t);
	}
	return G_SOURCE_CONTINUE;
}

csim_chaos *csim_chaos_new(csim *s, guint64 seed, double interval_s, csim_chaos_restarted_fn restarted, void *user)
{
	csim_chaos *c = g_new0(csim_chaos, 1);
	c->s = s;
	c->restarted = restarted;
	c->user = user;
	c->rng = g_rand_new_with_seed_array((const guint32[]){(guint32)seed, (guint32)(seed >> 32)}, 2);
	c->interval_s = interval_s > 0 ? interval_s : 10;
	c->t0_us = g_get_monotonic_time();
	c->targets = g_array_new(FALSE, TRUE, sizeof(target));
	c->events = g_array_new(FALSE, FALSE, sizeof(chaos_event));
	const char *names[MAX_PROGS];
	int np = csim_procs(s, names, MAX_PROGS);
	const sim_scenario *sc = csim_scenario(s);
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++)
		for (int k = 0; k < np; k++) {
			target t = {sim_scenario_node(sc, i)->id, names[k], 0, {0}, g_array_new(FALSE, FALSE, sizeof(instance))};
			g_array_append_val(c->targets, t);
		}
	c->tick = g_timeout_add(1000, on_tick, c);
	c->audio = csim_chaos_audio_new(s);
	arm(c);
	return c;
}

void csim_chaos_finish(csim_chaos *c)
{
	if (c->finished)
		return;
	c->finished = TRUE;
	if (c->next)
		g_source_remove(c->next);
	c->next = 0;
	/* Let the actions in flight complete (at most 5 s), then judge. */
	gint64 end = g_get_monotonic_time() + 6000000;
	gboolean busy = TRUE;
	while (busy && g_get_monotonic_time() < end) {
		g_main_context_iteration(NULL, FALSE);
		g_usleep(10000);
		busy = FALSE;
		for (guint i = 0; i < c->targets->len; i++)
			busy |= g_array_index(c->targets, target, i).busy;
	}
	on_tick(c);
	g_source_remove(c->tick);
	c->tick = 0;
	for (guint i = 0; i < c->targets->len; i++)
		end_life(&g_array_index(c->targets, target, i));
}

GArray *csim_chaos_spans(const csim_chaos *c)
{
	GArray *a = g_array_new(FALSE, FALSE, sizeof(csim_chaos_span));
	double end = world_s(c);
	for (guint i = 0; i < c->events->len; i++) {
		const chaos_event *e = &g_array_index(c->events, chaos_event, i);
		gboolean down = !strcmp(e->action, "kill") || !strcmp(e->action, "stop") || !strcmp(e->action, "crashed");
		if (!down && strcmp(e->action, "radio"))
			continue;
		csim_chaos_span sp = {e->node, down ? e->prog : "radio", e->w_s, isnan(e->until_s) ? end : e->until_s};
		/* A crash is seen at the next tick: down since the one before. */
		if (!strcmp(e->action, "crashed"))
			sp.from_s -= 1.0;
		g_array_append_val(a, sp);
	}
	return a;
}

/* audiod's downtimes (csim_downtime) from the spans. */
static GArray *audiod_downtimes(const csim_chaos *c)
{
	GArray *sp = csim_chaos_spans(c), *dt = g_array_new(FALSE, FALSE, sizeof(csim_downtime));
	for (guint i = 0; i < sp->len; i++) {
		const csim_chaos_span *s = &g_array_index(sp, csim_chaos_span, i);
		if (!strcmp(s->prog, "audiod")) {
			csim_downtime d = {s->node, s->from_s, s->to_s};
			g_array_append_val(dt, d);
		}
	}
	g_array_free(sp, TRUE);
	return dt;
}

int csim_chaos_report(csim_chaos *c, GString *out, const char *csv_path)
{
	csim_chaos_finish(c);
	int unlinked = csim_chaos_clients_check(c->s, out);
	GArray *dt = audiod_downtimes(c);
	int gaps = csim_chaos_audio_report(c->audio, (const csim_downtime *)(void *)dt->data, dt->len, out);
	g_array_free(dt, TRUE);
	int kills = 0, stops = 0, hogs = 0, cuts = 0, growth = 0, dead = 0;
	FILE *f = fopen(csv_path, "w");
	int wrote = f && fprintf(f, "t_s,node,program,action,detail,world_s\n") > 0;
	for (guint i = 0; i < c->events->len; i++) {
		const chaos_event *e = &g_array_index(c->events, chaos_event, i);
		kills += !strcmp(e->action, "kill");
		stops += !strcmp(e->action, "stop");
		hogs += !strcmp(e->action, "hog");
		cuts += !strcmp(e->action, "radio");
		if (f && fprintf(f, "%.3f,%d,%s,%s,\"%s\",%.3f\n", e->t_s, e->node, e->prog, e->action, e->detail, e->w_s) < 0)
			wrote = 0;
	}
	if (!f || fclose(f) != 0)
		wrote = 0;
	g_string_append_printf(out, "chaos: %d kills (restarted after 1 s), %d stops (1-5 s), %d hogs, %d radio cuts, %d crashes, %d failed restarts\n",
			       kills, stops, hogs, cuts, c->crashes, c->failed_restarts);
	g_string_append(out, "chaos: resources per process instance (from 30 s into its life; memory is its own, RssAnon + RssShmem; judged over 20 minutes: memory's median and descriptors' fewest in its first and last 10 minutes, else its first and last samples)\n");
	g_string_append_printf(out, "  %-6s %-8s %8s %10s %10s %6s %6s %s\n", "node", "program", "life_s", "mem0_kB", "mem_kB",
			       "fd0", "fd", "verdict");
	for (guint i = 0; i < c->targets->len; i++) {
		const target *t = &g_array_index(c->targets, target, i);
		if (csim_pid(c->s, t->node, t->prog) <= 0) {
			dead++;
			g_string_append_printf(out, "  node%-2d %-8s not running at the end\n", t->node, t->prog);
		}
		for (guint k = 0; k < t->lives->len; k++) {
			const csim_growth *g = &g_array_index(t->lives, instance, k).g;
			growth += g->grew;
			if (g->judged || k + 1 == t->lives->len)
				g_string_append_printf(out, "  node%-2d %-8s %8.0f %10ld %10ld %6d %6d %s\n", t->node, t->prog,
						       g->life_s, g->rss_first_kb, g->rss_last_kb, g->fd_first, g->fd_last,
						       g->grew ? "GREW over 5 %" : g->judged ? "ok"
											     : "too short to judge");
		}
	}
	int failures = c->crashes + c->failed_restarts + dead + growth + unlinked + gaps;
	g_string_append_printf(out, "chaos: %d failures (crashes, failed restarts, not running, growth, clients that did not reconnect, audio gaps unexplained); actions in %s\n",
			       failures, csv_path);
	return wrote ? failures : -1;
}

void csim_chaos_free(csim_chaos *c)
{
	if (!c)
		return;
	if (c->next)
		g_source_remove(c->next);
	if (c->tick)
		g_source_remove(c->tick);
	csim_chaos_audio_free(c->audio);
	for (guint i = 0; i < c->targets->len; i++) {
		target *t = &g_array_index(c->targets, target, i);
		if (t->cur.usage)
			g_array_free(t->cur.usage, TRUE);
		g_array_free(t->lives, TRUE);
	}
	g_array_free(c->targets, TRUE);
	g_array_free(c->events, TRUE);
	if (c->cuts)
		g_string_free(c->cuts, TRUE);
	g_rand_free(c->rng);
	g_free(c);
}
