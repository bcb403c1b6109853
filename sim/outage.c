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
	static const char *const names[SIM_N_PHASES] = {"before", "during", "after"};
	return (unsigned)p < SIM_N_PHASES ? names[p] : "?";
}

sim_phase sim_phase_worse(sim_phase a, sim_phase b)
{
	static const int rank[SIM_N_PHASES] = {0, 2, 1};
	return rank[a] >= rank[b] ? a : b;
}
