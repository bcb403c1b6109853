/* group.c — detections of one call across nodes (see group.h). */
#include "apps/collab/group.h"

#include <errno.h>
#include <math.h>
#include <string.h>

struct collab_grouper {
	int64_t aperture_ns, margin_ns, hold_ns;
	GPtrArray *open; /* collab_group * */
};

collab_grouper *collab_grouper_new(int64_t aperture_ns, int64_t margin_ns, int64_t hold_ns)
{
	collab_grouper *g = g_new0(collab_grouper, 1);
	g->aperture_ns = aperture_ns;
	g->margin_ns = margin_ns;
	g->hold_ns = hold_ns;
	g->open = g_ptr_array_new_with_free_func((GDestroyNotify)collab_group_free);
	return g;
}

void collab_grouper_free(collab_grouper *g)
{
	if (!g)
		return;
	g_ptr_array_free(g->open, TRUE);
	g_free(g);
}

void collab_group_free(collab_group *gr)
{
	if (!gr)
		return;
	g_array_free(gr->dets, TRUE);
	g_free(gr);
}

static gboolean has_node(const collab_group *gr, uint32_t node, uint64_t seq, gboolean *dup)
{
	for (guint i = 0; i < gr->dets->len; i++) {
		const det_event *d = &g_array_index(gr->dets, det_event, i);
		if (d->node == node) {
			*dup = d->seq == seq;
			return TRUE;
		}
	}
	return FALSE;
}

static gint by_onset(gconstpointer a, gconstpointer b)
{
	const det_event *x = a, *y = b;
	return x->global_ns < y->global_ns ? -1 : x->global_ns > y->global_ns ? 1
									      : (x->node < y->node ? -1 : x->node > y->node);
}

int collab_grouper_add(collab_grouper *g, const det_event *e, int64_t now_ns)
{
	if (!e->has_global)
		return -EINVAL;
	collab_group *best = NULL;
	int64_t best_d = INT64_MAX;
	for (guint i = 0; i < g->open->len; i++) {
		collab_group *gr = g_ptr_array_index(g->open, i);
		gboolean dup = FALSE;
		int64_t d = llabs(e->global_ns - gr->first_ns);
		/* The window is measured from the earliest onset in either
		 * direction: the first arrival may be shared last. */
		double win = (double)(g->aperture_ns + g->margin_ns) + 3 * e->global_se_ns;
		if (has_node(gr, e->node, e->seq, &dup)) {
			if (dup)
				return -EALREADY;
			continue;
		}
		/* A call matched by one template is not a call matched by
		 * another (two species calling at once); 0 = no template. */
		const det_event *f = &g_array_index(gr->dets, det_event, 0);
		gboolean kind_ok = !strcmp(f->profile, e->profile) &&
				   (f->template_id == 0 || e->template_id == 0 || f->template_id == e->template_id);
		if (kind_ok && (double)d <= win && d < best_d) {
			best = gr;
			best_d = d;
		}
	}
	if (best) {
		g_array_append_val(best->dets, *e);
		g_array_sort(best->dets, by_onset);
		best->first_ns = g_array_index(best->dets, det_event, 0).global_ns;
		return 1;
	}
	collab_group *gr = g_new0(collab_group, 1);
	gr->dets = g_array_new(FALSE, FALSE, sizeof(det_event));
	g_array_append_val(gr->dets, *e);
	gr->created_ns = now_ns;
	gr->first_ns = e->global_ns;
	g_ptr_array_add(g->open, gr);
	return 0;
}

guint collab_grouper_poll(collab_grouper *g, int64_t now_ns, GPtrArray *out)
{
	guint n = 0;
	for (guint i = 0; i < g->open->len;) {
		collab_group *gr = g_ptr_array_index(g->open, i);
		if (now_ns - gr->created_ns >= g->hold_ns) {
			g_ptr_array_add(out, g_ptr_array_steal_index(g->open, i));
			n++;
		} else {
			i++;
		}
	}
	return n;
}

guint collab_grouper_open(const collab_grouper *g)
{
	return g->open->len;
}

uint32_t collab_group_reporter(const collab_group *gr)
{
	/* dets are sorted by (global onset, node): the first one is the rule's. */
	return g_array_index(gr->dets, det_event, 0).node;
}
