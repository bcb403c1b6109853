/* chaos_audio.c — every audio gap a client sees is explained (chaos_audio.h). */
#include "sim/launch/chaos_audio.h"

#include <stdio.h>
#include <string.h>

#include "libdev/sensor_reader.h"
#include "sim/launch/nodeenv.h"
#include "sim/scenario.h"

#define STALL_S 10.0 /* no data for this long while connected: opened again from audiod's next frame */

typedef struct {
	csim_chaos_audio *a;
	int node;
	dev_sensor_reader *r;
	char *error;    /* why it could not be read (NULL: it could) */
	int64_t expect; /* the next frame due; INT64_MIN before the first */
	double rate_hz; /* from audiod's reply */
	double last_data_s;
	guint64 frames, chunks, reopened;
} reader;

struct csim_chaos_audio {
	csim *s;
	GArray *readers; /* reader* */
	GArray *gaps;    /* csim_gap */
	guint tick;
};

/* Now on the world's clock, s. */
static double now_s(const csim_chaos_audio *a)
{
	return csim_world_s(a->s);
}

static void add_gap(reader *rd, int64_t from, int64_t to, csim_gap_kind kind)
{
	csim_gap g = {rd->node, from, to, now_s(rd->a), kind};
	g_array_append_val(rd->a->gaps, g);
}

static void on_opened(void *user, int64_t first, int64_t last, uint32_t item_size, const void *reply, size_t len)
{
	reader *rd = user;
	/* The reply's head: "first=F last=L rate=R channels=C ..." */
	char *r = g_strndup(reply, len);
	const char *p = strstr(r, " rate=");
	if (p)
		rd->rate_hz = g_ascii_strtod(p + 6, NULL);
	g_free(r);
}

static void on_data(void *user, int64_t first, const void *items, size_t n)
{
	reader *rd = user;
	if (rd->expect != INT64_MIN && first > rd->expect)
		add_gap(rd, rd->expect, first, CSIM_GAP_SILENT);
	else if (rd->expect != INT64_MIN && first < rd->expect)
		add_gap(rd, first, rd->expect, CSIM_GAP_BACKWARDS);
	rd->expect = first + (int64_t)n;
	rd->frames += n;
	rd->chunks++;
	rd->last_data_s = now_s(rd->a);
}

static void on_gap(void *user, int64_t from, int64_t to)
{
	reader *rd = user;
	/* Frames before the GAP that never came are a silent hole. */
	if (rd->expect != INT64_MIN && from > rd->expect)
		add_gap(rd, rd->expect, from, CSIM_GAP_SILENT);
	add_gap(rd, from, to, CSIM_GAP_DECLARED);
	rd->expect = to;
}

static void on_error(void *user, int err, const char *msg)
{
	reader *rd = user;
	g_free(rd->error);
	rd->error = g_strdup(msg);
}

static void open_reader(reader *rd)
{
	static const dev_sensor_reader_ops ops = {on_opened, on_data, on_gap, NULL, on_error, NULL};
	csim_node_env env = csim_node_env_enter(csim_run_dir(rd->a->s), rd->node);
	GError *err = NULL;
	rd->r = dev_sensor_reader_new("audio/0/data", 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, "channels=0", 10,
				      NULL, &ops, rd, &err);
	csim_node_env_leave(&env);
	if (!rd->r) {
		g_free(rd->error);
		rd->error = g_strdup(err->message);
		g_error_free(err);
	}
	rd->last_data_s = now_s(rd->a);
}

/* A reader that waits for frames audiod will not number again (it numbered
 * anew after a restart: the truth counts that) is opened again from the
 * next frame; what it skipped is judged as going back. */
static gboolean on_tick(gpointer data)
{
	csim_chaos_audio *a = data;
	for (guint i = 0; i < a->readers->len; i++) {
		reader *rd = g_array_index(a->readers, reader *, i);
		if (rd->r && now_s(a) - rd->last_data_s > STALL_S && dev_sensor_reader_connected(rd->r)) {
			dev_sensor_reader_free(rd->r);
			rd->reopened++;
			open_reader(rd);
			/* The next chunk's first frame is compared with expect:
			 * lower is a renumbering (backwards), higher a hole. */
		}
	}
	return G_SOURCE_CONTINUE;
}

csim_chaos_audio *csim_chaos_audio_new(csim *s)
{
	csim_chaos_audio *a = g_new0(csim_chaos_audio, 1);
	a->s = s;
	a->readers = g_array_new(FALSE, FALSE, sizeof(reader *));
	a->gaps = g_array_new(FALSE, FALSE, sizeof(csim_gap));
	const sim_scenario *sc = csim_scenario(s);
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++) {
		int node = sim_scenario_node(sc, i)->id;
		if (csim_pid(s, node, "audiod") <= 0)
			continue;
		reader *rd = g_new0(reader, 1);
		rd->a = a;
		rd->node = node;
		rd->expect = INT64_MIN;
		open_reader(rd);
		g_array_append_val(a->readers, rd);
	}
	a->tick = g_timeout_add(1000, on_tick, a);
	return a;
}

/* audiod's reported overruns on node, from its journal, appended to ov. */
static void read_overruns(const csim *s, int node, GArray *ov)
{
	char *path = g_strdup_printf("%s/node%d-audiod.log", csim_out_dir(s), node), *text = NULL;
	if (g_file_get_contents(path, &text, NULL, NULL)) {
		gchar **lines = g_strsplit(text, "\n", -1);
		for (gchar **l = lines; *l; l++) {
			csim_overrun o = {node, 0, 0};
			if (csim_gap_parse_overrun(*l, &o.from, &o.to))
				g_array_append_val(ov, o);
		}
		g_strfreev(lines);
	}
	g_free(text);
	g_free(path);
}

int csim_chaos_audio_report(csim_chaos_audio *a, const csim_downtime *dt, size_t n_dt, GString *out)
{
	GArray *ov = g_array_new(FALSE, FALSE, sizeof(csim_overrun));
	int failures = 0;
	guint by[3] = {0};
	for (guint i = 0; i < a->readers->len; i++) {
		reader *rd = g_array_index(a->readers, reader *, i);
		read_overruns(a->s, rd->node, ov);
		if (rd->error || !rd->frames) {
			failures++;
			g_string_append_printf(out, "  node%-2d audio/0/data could not be read: %s\n", rd->node,
					       rd->error ? rd->error : "no frame received");
		}
	}
	for (guint i = 0; i < a->gaps->len; i++) {
		const csim_gap *g = &g_array_index(a->gaps, csim_gap, i);
		double rate = 0;
		for (guint k = 0; k < a->readers->len; k++)
			if (g_array_index(a->readers, reader *, k)->node == g->node)
				rate = g_array_index(a->readers, reader *, k)->rate_hz;
		csim_gap_verdict v = csim_gap_judge(g, rate, (const csim_overrun *)(void *)ov->data, ov->len, dt, n_dt);
		by[v]++;
		if (v == CSIM_GAP_UNEXPLAINED) {
			failures++;
			g_string_append_printf(out, "  node%-2d audio gap at %.1f s: frames [%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ") (%s, %.3f s) not explained by an overrun audiod reported or its downtime\n",
					       g->node, g->t_s, g->from, g->to, csim_gap_kind_name(g->kind),
					       rate > 0 ? (double)(g->to - g->from) / rate : 0.0);
		}
	}
	guint64 frames = 0, reopened = 0;
	for (guint i = 0; i < a->readers->len; i++) {
		frames += g_array_index(a->readers, reader *, i)->frames;
		reopened += g_array_index(a->readers, reader *, i)->reopened;
	}
	g_string_append_printf(out, "chaos: audio: %u nodes read (%" G_GUINT64_FORMAT " frames, %" G_GUINT64_FORMAT " reopened after a stall); gaps: %u by an overrun audiod reported, %u by its downtime, %u unexplained (%u overruns in the journals)\n",
			       a->readers->len, frames, reopened, by[CSIM_GAP_BY_OVERRUN], by[CSIM_GAP_BY_DOWNTIME],
			       by[CSIM_GAP_UNEXPLAINED], ov->len);
	g_array_free(ov, TRUE);
	return failures;
}

void csim_chaos_audio_free(csim_chaos_audio *a)
{
	if (!a)
		return;
	if (a->tick)
		g_source_remove(a->tick);
	for (guint i = 0; i < a->readers->len; i++) {
		reader *rd = g_array_index(a->readers, reader *, i);
		dev_sensor_reader_free(rd->r);
		g_free(rd->error);
		g_free(rd);
	}
	g_array_free(a->readers, TRUE);
	g_array_free(a->gaps, TRUE);
	g_free(a);
}
