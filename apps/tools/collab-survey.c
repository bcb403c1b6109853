/* collab-survey — refine the nodes' surveyed positions from the calls
 * collab located (a bundle adjustment, apps/collab/survey.h), and write a
 * nodes file of the refined positions.
 *
 *   collab-survey --nodes nodes.txt --position-sd M [--temperature T[,SD]]
 *                 [--speed-of-sound C[,SD]] [--source-z Z] [--min-calls N]
 *                 [--out FILE] RESULTS.jsonl...
 *
 * RESULTS: collab's JSON-lines files (every node's: each node reports only
 * the calls it heard first).  Only "ok" results take part, with their used
 * arrivals ("tdoa_us") and those arrivals' own errors ("sigma_us").  The
 * output is a nodes file (ID X Y Z, with each position's standard error and
 * its shift from the survey in a comment); the summary goes to stderr.
 * Exit: 0; 1 (too few calls, the solve failed, a write failed); 2 (bad
 * usage or input: which file, which line, why).
 */
#include <errno.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/collab/nodes.h"
#include "apps/collab/survey.h"
#include "apps/dsp/air.h"

/* "V" or "V,SD" into v (and sd when given).  FALSE on anything else. */
static gboolean value_sd(const char *s, double *v, double *sd)
{
	char *end;
	*v = g_ascii_strtod(s, &end);
	if (end == s)
		return FALSE;
	if (*end == ',') {
		const char *q = end + 1;
		*sd = g_ascii_strtod(q, &end);
		if (end == q || !(*sd >= 0))
			return FALSE;
	}
	return *end == 0;
}

/* One result line into the adjustment.  Returns 1 (added), 0 (not an ok
 * result: skipped), -1 (malformed: *why). */
static int add_line(survey *sv, const char *line, char *why, size_t wlen)
{
	JsonParser *jp = json_parser_new();
	GError *err = NULL;
	int rc = 0;
	if (!json_parser_load_from_data(jp, line, -1, &err)) {
		g_snprintf(why, wlen, "%s", err->message);
		g_error_free(err);
		g_object_unref(jp);
		return -1;
	}
	JsonNode *root = json_parser_get_root(jp);
	JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
	if (!o || !json_object_has_member(o, "status")) {
		g_snprintf(why, wlen, "not a collab result (no \"status\")");
		rc = -1;
	} else if (!strcmp(json_object_get_string_member(o, "status"), "ok")) {
		JsonArray *used = json_object_has_member(o, "used") ? json_object_get_array_member(o, "used") : NULL;
		JsonObject *t = json_object_has_member(o, "tdoa_us") ? json_object_get_object_member(o, "tdoa_us") : NULL;
		JsonObject *sg = json_object_has_member(o, "sigma_us") ? json_object_get_object_member(o, "sigma_us") : NULL;
		if (!used || !t || !sg || !json_object_has_member(o, "x") || !json_object_has_member(o, "y")) {
			g_snprintf(why, wlen, "an ok result without used, tdoa_us, sigma_us, x or y (collab older than the survey?)");
			rc = -1;
		} else {
			uint32_t node[SURVEY_MAX_NODES];
			double a[SURVEY_MAX_NODES], s[SURVEY_MAX_NODES];
			int m = 0;
			for (guint i = 0; i < json_array_get_length(used) && m < SURVEY_MAX_NODES && rc == 0; i++) {
				char key[16];
				node[m] = (uint32_t)json_array_get_int_element(used, i);
				g_snprintf(key, sizeof key, "%u", node[m]);
				if (!json_object_has_member(t, key) || !json_object_has_member(sg, key)) {
					g_snprintf(why, wlen, "node %s is used but has no tdoa_us or sigma_us", key);
					rc = -1;
					break;
				}
				a[m] = json_object_get_double_member(t, key) * 1e-6;
				s[m] = json_object_get_double_member(sg, key) * 1e-6;
				m++;
			}
			if (rc == 0) {
				int e = survey_add(sv, node, a, s, m, json_object_get_double_member(o, "x"),
						   json_object_get_double_member(o, "y"));
				if (e == 0)
					rc = 1;
				else if (m >= 4) {
					g_snprintf(why, wlen, "a node of the result is not in the nodes file, or an error is not > 0");
					rc = -1;
				}
			}
		}
	}
	g_object_unref(jp);
	return rc;
}

int main(int argc, char **argv)
{
	char *nodes_path = NULL, *out_path = NULL, *temp = NULL, *speed = NULL;
	double pos_sd = 0, source_z = NAN;
	gint min_calls = 10;
	GOptionEntry entries[] = {
		{"nodes", 0, 0, G_OPTION_ARG_FILENAME, &nodes_path, "the surveyed nodes file (ID X Y Z per line)", "FILE"},
		{"position-sd", 0, 0, G_OPTION_ARG_DOUBLE, &pos_sd, "the survey's s.d. per axis, m (> 0)", "M"},
		{"temperature", 0, 0, G_OPTION_ARG_STRING, &temp, "air temperature as measured, and its s.d. (default 20,10: not measured, as collab's)", "T[,SD]"},
		{"speed-of-sound", 0, 0, G_OPTION_ARG_STRING, &speed, "speed of sound as measured, m/s, and its s.d. (default s.d. 1)", "C[,SD]"},
		{"source-z", 0, 0, G_OPTION_ARG_DOUBLE, &source_z, "the sources' known height, m (default: collab's 2-D model)", "Z"},
		{"min-calls", 0, 0, G_OPTION_ARG_INT, &min_calls, "fewest ok results to solve (default 10)", "N"},
		{"out", 'o', 0, G_OPTION_ARG_FILENAME, &out_path, "refined nodes file (default standard output)", "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("RESULTS.jsonl... - refine node positions from located calls");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "collab-survey: %s\n", err->message);
		return 2;
	}
	g_option_context_free(oc);
	if (!nodes_path || !(pos_sd > 0) || argc < 2) {
		fprintf(stderr, "collab-survey: give --nodes FILE, --position-sd M (> 0) and at least one results file\n");
		return 2;
	}
	survey_params sp = {.pos_sd_m = pos_sd, .source_z_m = source_z};
	double t = 20, t_sd = 10; /* collab's defaults: not measured */
	if (temp && !value_sd(temp, &t, &t_sd)) {
		fprintf(stderr, "collab-survey: --temperature %s: not T or T,SD\n", temp);
		return 2;
	}
	double dc_dt;
	sp.c_m_s = dsp_speed_of_sound_m_s(t, &dc_dt);
	sp.c_sd_m_s = t_sd * dc_dt;
	if (speed) {
		sp.c_sd_m_s = 1;
		if (!value_sd(speed, &sp.c_m_s, &sp.c_sd_m_s) || !(sp.c_m_s > 0)) {
			fprintf(stderr, "collab-survey: --speed-of-sound %s: not C or C,SD with C > 0\n", speed);
			return 2;
		}
	}
	collab_nodes *nodes = collab_nodes_load(nodes_path, &err);
	if (!nodes) {
		fprintf(stderr, "collab-survey: %s\n", err->message);
		return 2;
	}
	sp.n_nodes = (int)MIN(nodes->nodes->len, SURVEY_MAX_NODES);
	for (int i = 0; i < sp.n_nodes; i++) {
		const collab_node *n = &g_array_index(nodes->nodes, collab_node, i);
		sp.id[i] = n->id;
		memcpy(sp.pos_m[i], n->pos_m, sizeof sp.pos_m[i]);
	}
	const char *why;
	survey *sv = survey_new(&sp, &why);
	if (!sv) {
		fprintf(stderr, "collab-survey: %s\n", why);
		return 2;
	}
	int rc = 0, skipped = 0;
	for (int f = 1; f < argc && rc == 0; f++) {
		gchar *text;
		gsize len;
		if (!g_file_get_contents(argv[f], &text, &len, &err)) {
			fprintf(stderr, "collab-survey: %s\n", err->message);
			rc = 2;
			break;
		}
		gchar **lines = g_strsplit(text, "\n", -1);
		for (int l = 0; lines[l] && rc == 0; l++) {
			if (!*g_strstrip(lines[l]))
				continue;
			char w[256];
			int e = add_line(sv, lines[l], w, sizeof w);
			if (e < 0) {
				fprintf(stderr, "collab-survey: %s:%d: %s\n", argv[f], l + 1, w);
				rc = 2;
			}
			skipped += e == 0;
		}
		g_strfreev(lines);
		g_free(text);
	}
	survey_result res;
	if (rc == 0 && survey_calls(sv) < min_calls) {
		fprintf(stderr, "collab-survey: %d ok results (%d others skipped), fewer than --min-calls %d\n",
			survey_calls(sv), skipped, min_calls);
		rc = 1;
	} else if (rc == 0 && survey_solve(sv, &res, &why) < 0) {
		fprintf(stderr, "collab-survey: %s\n", why);
		rc = 1;
	}
	if (rc == 0) {
		FILE *out = out_path ? fopen(out_path, "w") : stdout;
		if (!out) {
			fprintf(stderr, "collab-survey: %s: %s\n", out_path, g_strerror(errno));
			rc = 1;
		} else {
			fprintf(out, "# collab-survey: %d calls, %d arrivals, chi2 %.1f on %d dof; c %.2f +- %.2f m/s\n"
				     "# ID X Y Z   # sd_x sd_y (m), shift from the survey (m)\n",
				res.n_calls, res.n_obs, res.chi2, res.dof, res.c_m_s, res.c_sd_m_s);
			for (int i = 0; i < sp.n_nodes; i++)
				fprintf(out, "%u %.4f %.4f %.4f  # %.4f %.4f  %.4f\n", sp.id[i], res.pos_m[i][0], res.pos_m[i][1],
					res.pos_m[i][2], res.sd_m[i][0], res.sd_m[i][1],
					hypot(res.pos_m[i][0] - sp.pos_m[i][0], res.pos_m[i][1] - sp.pos_m[i][1]));
			if (fflush(out) != 0 || ferror(out) || (out_path && fclose(out) != 0)) {
				fprintf(stderr, "collab-survey: %s: %s\n", out_path ? out_path : "standard output", g_strerror(errno));
				rc = 1;
			}
			fprintf(stderr, "collab-survey: %d calls (%d results skipped), chi2 %.1f on %d dof, c %.2f +- %.2f m/s\n",
				res.n_calls, skipped, res.chi2, res.dof, res.c_m_s, res.c_sd_m_s);
		}
	}
	survey_free(sv);
	collab_nodes_free(nodes);
	g_free(nodes_path);
	g_free(out_path);
	g_free(temp);
	g_free(speed);
	return rc;
}
