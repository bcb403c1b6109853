/* result.c — JSON lines and the PNG map of located calls (see result.h). */
#include "apps/collab/result.h"

#include "apps/collab/sharemsg.h"

#include <json-glib/json-glib.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *collab_result_status(const collab_result *r)
{
	if (r->rc < 0 && (r->tr.loc.status == DSP_LOC_OK || r->tr.loc.status == DSP_LOC_UNTESTED))
		return "failed";
	switch (r->tr.loc.status) {
	case DSP_LOC_OK:
		return r->duplicate_of ? "duplicate" : r->tr.ambiguous ? "ambiguous"
					       : r->tr.coarse          ? "coarse"
								       : "ok";
	case DSP_LOC_TOO_FEW:
		return "too_few";
	case DSP_LOC_DEGENERATE:
		return "degenerate";
	case DSP_LOC_ILL_CONDITIONED:
		return "ill_conditioned";
	case DSP_LOC_INCONSISTENT:
		return "inconsistent";
	case DSP_LOC_NO_CONVERGENCE:
		return "no_convergence";
	case DSP_LOC_UNTESTED:
		return "untested";
	}
	return "failed";
}

gboolean collab_result_same_sound(const collab_result *a, const collab_result *b)
{
	double dt = fabs((double)(a->t_global_ns - b->t_global_ns));
	/* The bounds' errors, as the grouping window: a varied call's whole
	 * onset error (tens of ms for a pulse train) would make one frog
	 * calling again a duplicate. */
	double sa = a->t_crb_se_ns > 0 ? a->t_crb_se_ns : a->t_se_ns, sb = b->t_crb_se_ns > 0 ? b->t_crb_se_ns : b->t_se_ns;
	double win = 3 * hypot(sa, sb) + 1e6;
	if (!(a->kind != 0 && a->kind == b->kind))
		win += 1e9 * fmax(a->dur_s, b->dur_s);
	if (!(dt <= win))
		return FALSE;
	const dsp_loc_result *A = &a->tr.loc, *B = &b->tr.loc;
	double ex = A->pos_m[0] - B->pos_m[0], ey = A->pos_m[1] - B->pos_m[1];
	double sxx = A->cov[0][0] + B->cov[0][0], syy = A->cov[1][1] + B->cov[1][1], sxy = A->cov[0][1] + B->cov[0][1];
	double det = sxx * syy - sxy * sxy;
	if (!(det > 0))
		return FALSE;
	double m2 = (syy * ex * ex - 2 * sxy * ex * ey + sxx * ey * ey) / det;
	return m2 <= -2 * log(0.01); /* chi2_2 at 0.99 */
}

/* A finite number rounded as fmt prints it, or null (JSON has no inf/nan). */
static void jnum(JsonBuilder *b, const char *key, double v, const char *fmt)
{
	char t[G_ASCII_DTOSTR_BUF_SIZE];
	json_builder_set_member_name(b, key);
	if (isfinite(v))
		json_builder_add_double_value(b, g_ascii_strtod(g_ascii_formatd(t, sizeof t, fmt, v), NULL));
	else
		json_builder_add_null_value(b);
}

static void jint(JsonBuilder *b, const char *key, gint64 v)
{
	json_builder_set_member_name(b, key);
	json_builder_add_int_value(b, v);
}

/* "key":{"NODE":v,...} over the arrivals used, v in microseconds. */
static void per_node_us(JsonBuilder *b, const collab_result *r, const char *key, const double *v_s, const char *fmt)
{
	json_builder_set_member_name(b, key);
	json_builder_begin_object(b);
	for (int i = 0; i < r->n; i++)
		if (r->tr.ok[i]) {
			char k[16];
			g_snprintf(k, sizeof k, "%u", r->nodes[i]);
			jnum(b, k, v_s[i] * 1e6, fmt);
		}
	json_builder_end_object(b);
}

void collab_result_json(const collab_result *r, GString *o)
{
	const dsp_loc_result *L = &r->tr.loc;
	gboolean solved = r->rc == 0;
	JsonBuilder *b = json_builder_new();
	json_builder_begin_object(b);
	jint(b, "v", 1);
	jint(b, "reporter", r->reporter);
	jint(b, "seq", (gint64)r->seq);
	json_builder_set_member_name(b, "status");
	json_builder_add_string_value(b, collab_result_status(r));
	/* The solver's reason, and a clip that could not be fetched (r->why):
	 * both when both, so a failed solve says what it lacked and why it
	 * failed without it. */
	const char *sw = *r->tr.why ? r->tr.why : (L->why && L->status != DSP_LOC_OK) ? L->why
										      : NULL;
	if (*r->why || sw) {
		gchar *w = *r->why && sw ? g_strdup_printf("%s (without %s)", sw, r->why) : g_strdup(*r->why ? r->why : sw);
		json_builder_set_member_name(b, "why");
		json_builder_add_string_value(b, w);
		g_free(w);
	}
	if (solved) {
		jnum(b, "x", L->pos_m[0], "%.4f");
		jnum(b, "y", L->pos_m[1], "%.4f");
		jnum(b, "z", L->pos_m[2], "%.4f");
		jnum(b, "sd_x", sqrt(L->cov[0][0]), "%.6g");
		jnum(b, "sd_y", sqrt(L->cov[1][1]), "%.6g");
		jnum(b, "cov_xy", L->cov[0][1], "%.6g");
		double ma = NAN, mi = NAN, an = NAN;
		if (dsp_loc_ellipse(L, 0.95, &ma, &mi, &an) == 0)
			an *= 180 / M_PI;
		jnum(b, "ell95_major", ma, "%.4g");
		jnum(b, "ell95_minor", mi, "%.4g");
		jnum(b, "ell95_angle_deg", an, "%.2f");
		jint(b, "dim", L->dim);
		jint(b, "t_global_ns", r->t_global_ns);
		jnum(b, "t_se_ns", r->t_se_ns, "%.4g");
		jnum(b, "chi2", L->chi2, "%.4g");
		jint(b, "dof", L->dof);
		jnum(b, "p_value", L->p_value, "%.4g");
		jnum(b, "srp_power", r->tr.srp_power, "%.4g");
		json_builder_set_member_name(b, "gated");
		json_builder_add_boolean_value(b, r->tr.gated);
		json_builder_set_member_name(b, "timing");
		json_builder_add_string_value(b, r->tr.from_onsets ? "onsets" : "correlation");
		if (isfinite(r->tr.alt_power)) {
			jnum(b, "alt_x", r->tr.alt_pos_m[0], "%.4f");
			jnum(b, "alt_y", r->tr.alt_pos_m[1], "%.4f");
			jnum(b, "alt_power", r->tr.alt_power, "%.4g");
			if (r->tr.alt_ruled_out) {
				json_builder_set_member_name(b, "alt_ruled_out");
				json_builder_add_boolean_value(b, TRUE);
			}
		}
		if (r->tr.flank_m > 0)
			jnum(b, "flank_m", r->tr.flank_m, "%.3f");
		if (r->tr.separated) {
			jnum(b, "masker_x", r->tr.masker_pos_m[0], "%.4f");
			jnum(b, "masker_y", r->tr.masker_pos_m[1], "%.4f");
			jnum(b, "masker_power", r->tr.masker_power, "%.4g");
		}
		if (r->tr.cov_scale > 1)
			jnum(b, "cov_scale", r->tr.cov_scale, "%.4g");
	}
	json_builder_set_member_name(b, "nodes");
	json_builder_begin_array(b);
	for (int i = 0; i < r->n; i++)
		json_builder_add_int_value(b, r->nodes[i]);
	json_builder_end_array(b);
	json_builder_set_member_name(b, "used");
	json_builder_begin_array(b);
	for (int i = 0; i < r->n; i++)
		if (r->tr.ok[i] && (int)r->nodes[i] != r->tr.rejected_node)
			json_builder_add_int_value(b, r->nodes[i]);
	json_builder_end_array(b);
	jint(b, "rejected", r->tr.rejected_node);
	jint(b, "ref", r->n ? r->nodes[r->tr.ref] : 0);
	if (r->duplicate_of)
		jint(b, "duplicate_of", (gint64)r->duplicate_of);
	if (r->supersedes)
		jint(b, "supersedes", (gint64)r->supersedes);
	per_node_us(b, r, "tdoa_us", r->tr.a_s, "%.3f");
	per_node_us(b, r, "sigma_us", r->tr.meas_sigma_s, "%.4g");
	/* Nodes' second microphones measured: node -> [t(mic1) - t(mic0), its
	 * s.e.] in us; pairs_used of them in the answer's solve. */
	if (r->tr.n_pairs > 0) {
		json_builder_set_member_name(b, "pairs_us");
		json_builder_begin_object(b);
		for (int k = 0; k < r->tr.n_pairs; k++) {
			int i = r->tr.pair_in[k];
			char key[16];
			g_snprintf(key, sizeof key, "%u", i >= 0 && i < r->n ? r->nodes[i] : 0u);
			json_builder_set_member_name(b, key);
			json_builder_begin_array(b);
			json_builder_add_double_value(b, round(r->tr.pairs[k].dt_s * 1e9) / 1e3);
			json_builder_add_double_value(b, round(r->tr.pairs[k].sigma_s * 1e10) / 1e4);
			json_builder_end_array(b);
		}
		json_builder_end_object(b);
		jint(b, "pairs_used", r->tr.pairs_used);
	}
	jnum(b, "latency_s", r->latency_s, "%.3f");
	if (r->late) {
		json_builder_set_member_name(b, "late");
		json_builder_add_boolean_value(b, TRUE);
		json_builder_set_member_name(b, "late_why");
		json_builder_begin_array(b);
		if (r->late & COLLAB_LATE_RESENT)
			json_builder_add_string_value(b, "caught_up");
		if (r->late & COLLAB_LATE_HELD)
			json_builder_add_string_value(b, "held");
		if (r->late & COLLAB_LATE_RETIMED)
			json_builder_add_string_value(b, "retimed");
		json_builder_end_array(b);
	}
	json_builder_set_member_name(b, "t_cpu_ns");
	if (r->t_cpu_ns != INT64_MIN)
		json_builder_add_int_value(b, r->t_cpu_ns);
	else
		json_builder_add_null_value(b);
	json_builder_set_member_name(b, "onset_cpu_ns");
	if (r->onset_cpu_ns != INT64_MIN)
		json_builder_add_int_value(b, r->onset_cpu_ns);
	else
		json_builder_add_null_value(b);
	json_builder_end_object(b);
	JsonNode *root = json_builder_get_root(b);
	JsonGenerator *g = json_generator_new();
	json_generator_set_root(g, root);
	gchar *text = json_generator_to_data(g, NULL);
	g_string_append(o, text);
	g_free(text);
	g_object_unref(g);
	json_node_unref(root);
	g_object_unref(b);
}

static gint cmp_double(gconstpointer a, gconstpointer b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The line's top-level object's member key, or NULL; *parser to unref. */
static JsonNode *member(const char *line, const char *key, JsonParser **parser)
{
	*parser = json_parser_new();
	if (!json_parser_load_from_data(*parser, line, -1, NULL))
		return NULL;
	JsonNode *root = json_parser_get_root(*parser);
	if (!root || !JSON_NODE_HOLDS_OBJECT(root))
		return NULL;
	return json_object_get_member(json_node_get_object(root), key);
}

double collab_json_number(const char *line, const char *key)
{
	JsonParser *p;
	JsonNode *m = member(line, key, &p);
	double v = NAN;
	if (m && JSON_NODE_HOLDS_VALUE(m) &&
	    (json_node_get_value_type(m) == G_TYPE_DOUBLE || json_node_get_value_type(m) == G_TYPE_INT64))
		v = json_node_get_double(m);
	g_object_unref(p);
	return v;
}

int collab_json_bool(const char *line, const char *key)
{
	JsonParser *p;
	JsonNode *m = member(line, key, &p);
	int v = -1;
	if (m && JSON_NODE_HOLDS_VALUE(m) && json_node_get_value_type(m) == G_TYPE_BOOLEAN)
		v = json_node_get_boolean(m) ? 1 : 0;
	g_object_unref(p);
	return v;
}

int collab_json_string(const char *line, const char *key, char *buf, size_t len)
{
	JsonParser *p;
	JsonNode *m = member(line, key, &p);
	int rc = -1;
	if (m && JSON_NODE_HOLDS_VALUE(m) && json_node_get_value_type(m) == G_TYPE_STRING) {
		g_strlcpy(buf, json_node_get_string(m), len);
		rc = 0;
	}
	g_object_unref(p);
	return rc;
}

long collab_json_array_len(const char *line, const char *key)
{
	JsonParser *p;
	JsonNode *m = member(line, key, &p);
	long n = m && JSON_NODE_HOLDS_ARRAY(m) ? (long)json_array_get_length(json_node_get_array(m)) : -1;
	g_object_unref(p);
	return n;
}

guint collab_json_late(const char *line)
{
	JsonParser *p;
	JsonNode *late = member(line, "late", &p); /* one parse for both members */
	guint why = 0;
	if (late && JSON_NODE_HOLDS_VALUE(late) && json_node_get_value_type(late) == G_TYPE_BOOLEAN &&
	    json_node_get_boolean(late)) {
		JsonNode *root = json_parser_get_root(p);
		JsonNode *m = json_object_get_member(json_node_get_object(root), "late_why");
		if (m && JSON_NODE_HOLDS_ARRAY(m)) {
			JsonArray *a = json_node_get_array(m);
			for (guint i = 0; i < json_array_get_length(a); i++) {
				JsonNode *e = json_array_get_element(a, i);
				const char *s = JSON_NODE_HOLDS_VALUE(e) && json_node_get_value_type(e) == G_TYPE_STRING
							? json_node_get_string(e)
							: NULL;
				why |= !g_strcmp0(s, "caught_up") ? COLLAB_LATE_RESENT
				       : !g_strcmp0(s, "held")    ? COLLAB_LATE_HELD
				       : !g_strcmp0(s, "retimed") ? COLLAB_LATE_RETIMED
								  : 0;
			}
		} else {
			why = COLLAB_LATE_RESENT;
		}
	}
	g_object_unref(p);
	return why;
}

static int status_ok(const char *line)
{
	char st[16];
	return collab_json_string(line, "status", st, sizeof st) == 0 && !strcmp(st, "ok");
}

int collab_map(const char *jsonl, const collab_nodes *nodes, const double *truth_xy, size_t n_truth, const char *png,
	       const char *title, char *why, size_t len)
{
	char *text = NULL;
	GString *est = g_string_new(NULL), *bad = g_string_new(NULL), *nod = g_string_new(NULL), *src = g_string_new(NULL);
	GArray *majors = g_array_new(FALSE, FALSE, sizeof(double));
	gchar **lines = NULL;
	if (g_file_get_contents(jsonl, &text, NULL, NULL)) {
		lines = g_strsplit(text, "\n", -1);
		g_free(text);
		for (gchar **l = lines; *l; l++) {
			double ma = collab_json_number(*l, "ell95_major");
			if (isfinite(ma) && status_ok(*l))
				g_array_append_val(majors, ma);
		}
	}
	/* Ellipses of millimetres vanish on a map of tens of metres: magnify
	 * them (by a round factor, said in the key) so the median one is about
	 * 1.5 % of the field across. */
	double span = 1;
	for (guint i = 0; i < nodes->nodes->len; i++)
		for (guint j = 0; j < nodes->nodes->len; j++)
			span = fmax(span, fabs(g_array_index(nodes->nodes, collab_node, i).pos_m[0] -
					       g_array_index(nodes->nodes, collab_node, j).pos_m[0]));
	double mag = 1;
	if (majors->len) {
		g_array_sort(majors, (GCompareFunc)cmp_double);
		double med = g_array_index(majors, double, majors->len / 2);
		while (med * mag * 10 <= 0.015 * span && mag < 1e6)
			mag *= 10;
	}
	g_array_free(majors, TRUE);
	for (gchar **l = lines; l && *l; l++) {
		double x = collab_json_number(*l, "x"), y = collab_json_number(*l, "y"), ma = collab_json_number(*l, "ell95_major"),
		       mi = collab_json_number(*l, "ell95_minor"), an = collab_json_number(*l, "ell95_angle_deg");
		if (!isfinite(x) || !isfinite(y))
			continue;
		/* gnuplot's ellipses take full axes (diameters) in degrees;
		 * results that failed the consistency test are drawn apart. */
		g_string_append_printf(status_ok(*l) ? est : bad, "%.4f %.4f %.4f %.4f %.2f\n", x, y,
				       isfinite(ma) ? 2 * ma * mag : 0, isfinite(mi) ? 2 * mi * mag : 0, isfinite(an) ? an : 0);
	}
	g_strfreev(lines);
	for (guint i = 0; i < nodes->nodes->len; i++) {
		const collab_node *n = &g_array_index(nodes->nodes, collab_node, i);
		g_string_append_printf(nod, "%.3f %.3f %u\n", n->pos_m[0], n->pos_m[1], n->id);
	}
	for (size_t i = 0; i < n_truth; i++)
		g_string_append_printf(src, "%.3f %.3f\n", truth_xy[2 * i], truth_xy[2 * i + 1]);
	char *dir = g_dir_make_tmp("chorus-map-XXXXXX", NULL);
	if (!dir) {
		g_snprintf(why, len, "no temporary directory");
		return -EIO;
	}
	char *fe = g_build_filename(dir, "est.dat", NULL), *fn = g_build_filename(dir, "nodes.dat", NULL),
	     *fs = g_build_filename(dir, "truth.dat", NULL), *fg = g_build_filename(dir, "map.gp", NULL),
	     *fb = g_build_filename(dir, "bad.dat", NULL);
	g_file_set_contents(fe, est->len ? est->str : "nan nan 0 0 0\n", -1, NULL);
	g_file_set_contents(fb, bad->len ? bad->str : "nan nan 0 0 0\n", -1, NULL);
	g_file_set_contents(fn, nod->str, -1, NULL);
	g_file_set_contents(fs, src->len ? src->str : "nan nan\n", -1, NULL);
	char magtxt[32] = "";
	if (mag > 1)
		g_snprintf(magtxt, sizeof magtxt, " (x%.0f)", mag);
	char *gp = g_strdup_printf(
		"set terminal pngcairo size 900,800 noenhanced\nset output '%s'\nset title '%s'\n"
		"set size ratio -1\nset grid\nset xlabel 'x (m)'\nset ylabel 'y (m)'\nset key outside bottom center horizontal\n"
		"plot '%s' using 1:2 with points pt 5 ps 1.5 lc rgb '#1f4e79' title 'nodes', "
		"'' using 1:2:3 with labels offset 1.2,1.2 notitle, "
		"'%s' using 1:2 with points pt 6 ps 3 lw 2 lc rgb '#2ca02c' title 'true sources', "
		"'%s' using 1:2:3:4:5 with ellipses lc rgb '#d62728' title '95%% ellipses%s', "
		"'%s' using 1:2 with points pt 2 ps 1 lc rgb '#d62728' title 'estimates', "
		"'%s' using 1:2 with points pt 4 ps 1 lc rgb '#ff7f0e' title 'inconsistent (chi^2 test failed)'\n",
		png, title, fn, fs, fe, magtxt, fe, fb);
	g_file_set_contents(fg, gp, -1, NULL);
	gchar *argv[] = {"gnuplot", fg, NULL}, *err_out = NULL;
	gint status = 0;
	GError *err = NULL;
	int rc = 0;
	if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err_out,
			  &status, &err)) {
		g_snprintf(why, len, "gnuplot: %s", err->message);
		g_error_free(err);
		rc = -ENOENT;
	} else if (!g_spawn_check_wait_status(status, NULL)) {
		g_snprintf(why, len, "gnuplot failed: %s", err_out ? g_strstrip(err_out) : "");
		rc = -ECHILD;
	}
	g_free(err_out);
	unlink(fe);
	unlink(fb);
	unlink(fn);
	unlink(fs);
	unlink(fg);
	rmdir(dir);
	g_free(fe);
	g_free(fb);
	g_free(fn);
	g_free(fs);
	g_free(fg);
	g_free(gp);
	g_free(dir);
	g_string_free(est, TRUE);
	g_string_free(bad, TRUE);
	g_string_free(nod, TRUE);
	g_string_free(src, TRUE);
	return rc;
}
