/* outage.c — parsing and querying a node's outage windows (outage.h). */
#include "sim/outage.h"

#include <math.h>
#include <string.h>

sim_window *sim_windows_parse(const char *text, size_t *n, char *why, size_t len)
{
	*n = 0;
	if (len)
		why[0] = '\0';
	gchar **parts = g_strsplit(text ? text : "", ",", -1);
	GArray *a = g_array_new(FALSE, FALSE, sizeof(sim_window));
	gboolean ok = TRUE;
	size_t k = 0;
	for (gchar **p = parts; ok && *p; p++) {
		char *q = g_strstrip(*p);
		if (!*q && !p[1] && k > 0)
			break; /* a trailing ',' */
		k++;
		/* "T0-T1": the dash after the first number (times are >= 0) */
		char *end = NULL;
		sim_window w = {.from_s = g_ascii_strtod(q, &end), .to_s = NAN};
		if (end != q && *end) {
			char *e2 = end;
			while (*e2 == ' ' || *e2 == '\t')
				e2++;
			if (*e2 == '-') {
				char *s2 = e2 + 1, *end2 = NULL;
				while (*s2 == ' ' || *s2 == '\t')
					s2++;
				w.to_s = g_ascii_strtod(s2, &end2);
				while (end2 && (*end2 == ' ' || *end2 == '\t'))
					end2++;
				if (end2 == s2 || *end2)
					w.to_s = NAN;
			}
		}
		if (!isfinite(w.from_s) || !isfinite(w.to_s)) {
			g_snprintf(why, len, "window %zu ('%s'): expected T0-T1 (s since the world's start)", k, q);
			ok = FALSE;
		} else if (w.from_s < 0 || w.to_s > 1e7) {
			g_snprintf(why, len, "window %zu (%g-%g s): outside 0-1e7 s", k, w.from_s, w.to_s);
			ok = FALSE;
		} else if (!(w.to_s > w.from_s)) {
			g_snprintf(why, len, "window %zu (%g-%g s): the end is not after the start", k, w.from_s, w.to_s);
			ok = FALSE;
		} else if (a->len && w.from_s < g_array_index(a, sim_window, a->len - 1).to_s) {
			g_snprintf(why, len, "window %zu (%g-%g s) starts before the previous one ends (%g s)", k, w.from_s,
				   w.to_s, g_array_index(a, sim_window, a->len - 1).to_s);
			ok = FALSE;
		} else
			g_array_append_val(a, w);
	}
	g_strfreev(parts);
	if (!ok || a->len == 0) {
		g_array_free(a, TRUE);
		return NULL;
	}
	*n = a->len;
	return (sim_window *)(void *)g_array_free(a, FALSE);
}

gboolean sim_partition_parse(const char *text, sim_window *win, GArray *members, char *why, size_t len)
{
	const char *colon = strchr(text, ':');
	if (!colon) {
		g_snprintf(why, len, "expected T0-T1: NODES | NODES (e.g. 60-180: 1,2 | 3,4)");
		return FALSE;
	}
	char *head = g_strndup(text, (gsize)(colon - text));
	size_t n = 0;
	sim_window *w = sim_windows_parse(head, &n, why, len);
	g_free(head);
	if (!w || n != 1) {
		if (w)
			g_snprintf(why, len, "one window before the ':', not %zu", n);
		g_free(w);
		return FALSE;
	}
	*win = w[0];
	g_free(w);
	gchar **groups = g_strsplit(colon + 1, "|", -1);
	guint ng = g_strv_length(groups), start = members->len;
	gboolean ok = ng >= 2;
	if (!ok)
		g_snprintf(why, len, "a partition needs two or more groups separated by '|'");
	for (guint gi = 0; ok && gi < ng; gi++) {
		gchar **ids = g_strsplit(groups[gi], ",", -1);
		int count = 0;
		for (gchar **p = ids; ok && *p; p++) {
			char *q = g_strstrip(*p), *end = NULL;
			if (!*q)
				continue;
			gint64 v = g_ascii_strtoll(q, &end, 10);
			if (*end || v < 0 || v > 65535) {
				g_snprintf(why, len, "group %u: '%s' is not a node number", gi + 1, q);
				ok = FALSE;
				break;
			}
			for (guint k = start; k < members->len; k++)
				if (g_array_index(members, sim_part_member, k).node == (int)v) {
					g_snprintf(why, len, "node %d is in two groups", (int)v);
					ok = FALSE;
				}
			sim_part_member m = {(int)v, (int)gi};
			if (ok)
				g_array_append_val(members, m);
			count++;
		}
		if (ok && !count) {
			g_snprintf(why, len, "group %u names no node", gi + 1);
			ok = FALSE;
		}
		g_strfreev(ids);
	}
	g_strfreev(groups);
	if (!ok)
		g_array_set_size(members, start);
	return ok;
}

gboolean sim_windows_contain(const sim_window *w, size_t n, double t_s)
{
	for (size_t i = 0; i < n; i++)
		if (t_s >= w[i].from_s && t_s < w[i].to_s)
			return TRUE;
	return FALSE;
}

double sim_windows_last_end(const sim_window *w, size_t n, double t_s)
{
	double e = -1;
	for (size_t i = 0; i < n; i++)
		if (w[i].to_s <= t_s)
			e = fmax(e, w[i].to_s);
	return e;
}

const char *sim_phase_name(sim_phase p)
{
	static const char *const names[SIM_N_PHASES] = {"before", "during", "after", "past"};
	return (unsigned)p < SIM_N_PHASES ? names[p] : "?";
}

sim_phase sim_phase_worse(sim_phase a, sim_phase b)
{
	static const int rank[SIM_N_PHASES] = {0, 2, 1, 3};
	return rank[a] >= rank[b] ? a : b;
}
