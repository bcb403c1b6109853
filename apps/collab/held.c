/* held.c — detections waiting for a global time (see held.h). */
#include "apps/collab/held.h"

#include "apps/detect/onset_time.h"

struct collab_held {
	GArray *q; /* det_event, oldest first */
	guint max;
	int64_t max_age_ns;
	collab_held_stats st;
};

collab_held *collab_held_new(guint max, int64_t max_age_ns)
{
	collab_held *h = g_new0(collab_held, 1);
	h->q = g_array_new(FALSE, FALSE, sizeof(det_event));
	h->max = MAX(max, 1);
	h->max_age_ns = max_age_ns;
	return h;
}

void collab_held_free(collab_held *h)
{
	if (!h)
		return;
	g_array_free(h->q, TRUE);
	g_free(h);
}

void collab_held_add(collab_held *h, const det_event *e)
{
	if (h->q->len >= h->max) {
		g_array_remove_index(h->q, 0);
		h->st.dropped++;
	}
	g_array_append_val(h->q, *e);
	h->st.added++;
}

guint collab_held_retry(collab_held *h, sync_client *clocks, int64_t now_cpu_ns, GArray *out)
{
	guint n = 0;
	for (guint i = 0; i < h->q->len;) {
		det_event *e = &g_array_index(h->q, det_event, i);
		char why[160];
		if (det_onset_time(clocks, e, sync_clock_global(), &e->global_ns, &e->global_se_ns, why, sizeof why) == 0) {
			e->has_global = TRUE;
			g_array_append_val(out, *e);
			g_array_remove_index(h->q, i);
			h->st.converted++;
			n++;
		} else if (now_cpu_ns - e->cpu_ns > h->max_age_ns) {
			g_array_remove_index(h->q, i);
			h->st.dropped++;
		} else {
			i++;
		}
	}
	return n;
}

void collab_held_counts(const collab_held *h, collab_held_stats *st)
{
	*st = h->st;
	st->held = h->q->len;
}
