/* chaos_calls.c — judged calls under faults (chaos_calls.h). */
#include "sim/score/chaos_calls.h"

#include <math.h>
#include <string.h>

int chaos_calls_up(const sim_world *w, const demo_call *c, const chaos_fault *f, size_t n)
{
	int up = 0;
	for (int h = 0; h < MIN(c->heard, DEMO_HEARD_IDS); h++) {
		int node = c->heard_id[h];
		double arr = sim_world_arrival_s(w, node, 0, c->src, c->k);
		if (!isfinite(arr))
			arr = c->t_s; /* an unknown node: the call's start */
		double lo = arr - CHAOS_CALLS_BEFORE_S, hi = arr + CHAOS_CALLS_AFTER_S;
		gboolean hit = FALSE;
		for (size_t i = 0; i < n && !hit; i++)
			hit = (f[i].node < 0 || f[i].node == node) && f[i].from_s <= hi && f[i].to_s >= lo;
		up += !hit;
	}
	return up;
}

/* The baseline's verdict on call (source, k): 1 located, 0 not, -1 absent. */
static int baseline_of(const chaos_baseline_call *b, size_t nb, int source, size_t k)
{
	for (size_t i = 0; i < nb; i++)
		if (b[i].source == source && b[i].k == k)
			return b[i].located != 0;
	return -1;
}

int chaos_calls_judge(const sim_world *w, const demo_eval *ev, const chaos_fault *f, size_t n, int min_nodes,
		      const chaos_baseline_call *b, size_t nb, GString *out, chaos_calls_tally *t)
{
	memset(t, 0, sizeof *t);
	int failures = 0;
	for (guint i = 0; i < ev->calls->len; i++) {
		const demo_call *c = &g_array_index(ev->calls, demo_call, i);
		t->calls++;
		int up = chaos_calls_up(w, c, f, n);
		if (up < min_nodes)
			continue;
		t->judged++;
		const char *v = c->verdict ? c->verdict : "missed";
		if (!strcmp(v, "located")) {
			t->located++;
			continue;
		}
		t->off += !strcmp(v, "off");
		t->not_ok += !strcmp(v, "not_ok");
		t->missed += !strcmp(v, "missed");
		gboolean limit = b && baseline_of(b, nb, c->source, c->k) == 0;
		t->baseline += limit;
		failures += !limit;
		if (out)
			g_string_append_printf(out, "  source %d call at %.3f s: heard by %d nodes up for it, %s (%s, error %.3f m)%s\n",
					       c->source, c->t_s, up, v, c->status, c->err_m,
					       limit ? ": not located without faults either (the localization's limit)" : "");
	}
	return failures;
}

GArray *chaos_baseline_load(const char *path, GError **err)
{
	char *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, err))
		return NULL;
	gchar **lines = g_strsplit(text, "\n", -1);
	g_free(text);
	int col_src = -1, col_k = -1, col_loc = -1;
	gchar **head = g_strsplit(lines[0] ? lines[0] : "", ",", -1);
	for (int i = 0; head[i]; i++) {
		if (!strcmp(head[i], "source"))
			col_src = i;
		else if (!strcmp(head[i], "call"))
			col_k = i;
		else if (!strcmp(head[i], "located"))
			col_loc = i;
	}
	g_strfreev(head);
	GArray *a = NULL;
	if (col_src < 0 || col_k < 0 || col_loc < 0) {
		g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:1: not a calls.csv of chorus-demo (no source, call and located columns)",
			    path);
		goto out;
	}
	a = g_array_new(FALSE, FALSE, sizeof(chaos_baseline_call));
	for (int ln = 1; lines[ln]; ln++) {
		if (!*lines[ln])
			continue;
		gchar **v = g_strsplit(lines[ln], ",", -1);
		int nv = (int)g_strv_length(v);
		char *e1 = NULL, *e2 = NULL, *e3 = NULL;
		chaos_baseline_call c = {0, 0, 0};
		gboolean ok = nv > MAX(col_src, MAX(col_k, col_loc));
		if (ok) {
			c.source = (int)g_ascii_strtoll(v[col_src], &e1, 10);
			c.k = (size_t)g_ascii_strtoull(v[col_k], &e2, 10);
			c.located = (int)g_ascii_strtoll(v[col_loc], &e3, 10);
			ok = *v[col_src] && !*e1 && *v[col_k] && !*e2 && *v[col_loc] && !*e3;
		}
		g_strfreev(v);
		if (!ok) {
			g_set_error(err, G_FILE_ERROR, G_FILE_ERROR_INVAL, "%s:%d: expected integers in the source, call and located columns",
				    path, ln + 1);
			g_array_free(a, TRUE);
			a = NULL;
			goto out;
		}
		g_array_append_val(a, c);
	}
out:
	g_strfreev(lines);
	return a;
}
