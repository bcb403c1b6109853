/* nodes.c — node positions from a nodes file (see nodes.h). */
#include "apps/collab/nodes.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define COLLAB_NODES_ERROR g_quark_from_static_string("collab-nodes")

static collab_nodes *nodes_new(void)
{
	collab_nodes *n = g_new0(collab_nodes, 1);
	n->nodes = g_array_new(FALSE, TRUE, sizeof(collab_node));
	return n;
}

collab_nodes *collab_nodes_load(const char *path, GError **err)
{
	char *text = NULL;
	if (!g_file_get_contents(path, &text, NULL, err))
		return NULL;
	collab_nodes *n = nodes_new();
	gchar **lines = g_strsplit(text, "\n", -1);
	g_free(text);
	int ln = 0;
	for (gchar **l = lines; *l; l++) {
		ln++;
		char *hash = strchr(*l, '#');
		if (hash)
			*hash = 0;
		gchar **f = g_strsplit_set(g_strstrip(*l), " \t", -1);
		int nf = 0;
		const char *tok[7] = {0}, *mic1 = NULL, *mic1_sd = NULL;
		for (gchar **q = f; *q; q++)
			if (**q && g_str_has_prefix(*q, "mic1=") && !mic1)
				mic1 = *q + 5;
			else if (**q && g_str_has_prefix(*q, "mic1_sd_deg=") && !mic1_sd)
				mic1_sd = *q + 12;
			else if (**q && nf < 6)
				tok[nf++] = *q;
		if (nf == 0) {
			g_strfreev(f);
			continue;
		}
		collab_node nd = {0};
		char *end;
		long long id = nf >= 4 ? strtoll(tok[0], &end, 10) : -1;
		gboolean ok = nf >= 4 && nf <= 5 && !*end && id >= 0 && id <= UINT32_MAX;
		for (int k = 0; ok && k < 3; k++) {
			nd.pos_m[k] = g_ascii_strtod(tok[1 + k], &end);
			ok = !*end && end != tok[1 + k] && isfinite(nd.pos_m[k]);
		}
		if (ok && mic1) {
			gchar **v = g_strsplit(mic1, ",", -1);
			ok = g_strv_length(v) == 3;
			for (int k = 0; ok && k < 3; k++) {
				nd.mic1_m[k] = g_ascii_strtod(v[k], &end);
				ok = !*end && end != v[k] && isfinite(nd.mic1_m[k]) && fabs(nd.mic1_m[k]) <= 100;
			}
			g_strfreev(v);
			nd.has_mic1 = ok && (nd.mic1_m[0] != 0 || nd.mic1_m[1] != 0 || nd.mic1_m[2] != 0);
			if (ok && mic1_sd) {
				double sd = g_ascii_strtod(mic1_sd, &end);
				ok = !*end && end != mic1_sd && sd >= 0 && sd <= 180;
				nd.mic1_sd_rad = sd * G_PI / 180.0;
			}
			if (!ok) {
				g_set_error(err, COLLAB_NODES_ERROR, EINVAL,
					    "%s:%d: mic1=DX,DY,DZ: three numbers, metres from the first microphone (|.| <= 100); "
					    "mic1_sd_deg=S: 0-180 degrees",
					    path, ln);
				g_strfreev(f);
				g_strfreev(lines);
				collab_nodes_free(n);
				return NULL;
			}
		}
		if (ok && mic1_sd && !mic1) {
			g_set_error(err, COLLAB_NODES_ERROR, EINVAL, "%s:%d: mic1_sd_deg= without mic1=", path, ln);
			g_strfreev(f);
			g_strfreev(lines);
			collab_nodes_free(n);
			return NULL;
		}
		if (ok && collab_nodes_find(n, (uint32_t)id)) {
			g_set_error(err, COLLAB_NODES_ERROR, EINVAL, "%s:%d: node %lld listed twice", path, ln, id);
			ok = FALSE;
		} else if (!ok) {
			g_set_error(err, COLLAB_NODES_ERROR, EINVAL, "%s:%d: expected \"ID X Y Z [ADDRESS] [mic1=DX,DY,DZ]\" (metres)", path, ln);
		}
		if (!ok) {
			g_strfreev(f);
			g_strfreev(lines);
			collab_nodes_free(n);
			return NULL;
		}
		nd.id = (uint32_t)id;
		nd.address = nf == 5 ? g_strdup(tok[4]) : NULL;
		g_array_append_val(n->nodes, nd);
		g_strfreev(f);
	}
	g_strfreev(lines);
	if (n->nodes->len == 0) {
		g_set_error(err, COLLAB_NODES_ERROR, EINVAL, "%s: no nodes", path);
		collab_nodes_free(n);
		return NULL;
	}
	return n;
}

void collab_nodes_free(collab_nodes *n)
{
	if (!n)
		return;
	for (guint i = 0; i < n->nodes->len; i++)
		g_free(g_array_index(n->nodes, collab_node, i).address);
	g_array_free(n->nodes, TRUE);
	g_free(n);
}

const collab_node *collab_nodes_find(const collab_nodes *n, uint32_t id)
{
	for (guint i = 0; i < n->nodes->len; i++)
		if (g_array_index(n->nodes, collab_node, i).id == id)
			return &g_array_index(n->nodes, collab_node, i);
	return NULL;
}

double collab_nodes_aperture(const collab_nodes *n)
{
	double m = 0;
	for (guint i = 0; i < n->nodes->len; i++)
		for (guint j = i + 1; j < n->nodes->len; j++) {
			const double *a = g_array_index(n->nodes, collab_node, i).pos_m;
			const double *b = g_array_index(n->nodes, collab_node, j).pos_m;
			double d = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
			if (d > m)
				m = d;
		}
	return m;
}
