/* split.c — the grouper's split callback over the field's nodes (split.h). */
#include "apps/collab/split.h"

#include <math.h>
#include <string.h>

#include <glib.h>

#include "apps/collab/partition.h"

void collab_splitter_init(collab_splitter *s, const collab_nodes *nodes, double c_m_s, double floor_s, double z_m)
{
	double zs = 0;
	s->nodes = nodes;
	s->c_m_s = c_m_s;
	s->floor_s = floor_s;
	s->box[0] = s->box[2] = INFINITY;
	s->box[1] = s->box[3] = -INFINITY;
	for (guint i = 0; i < nodes->nodes->len; i++) {
		const collab_node *nd = &g_array_index(nodes->nodes, collab_node, i);
		s->box[0] = fmin(s->box[0], nd->pos_m[0] - 10);
		s->box[1] = fmax(s->box[1], nd->pos_m[0] + 10);
		s->box[2] = fmin(s->box[2], nd->pos_m[1] - 10);
		s->box[3] = fmax(s->box[3], nd->pos_m[1] + 10);
		zs += nd->pos_m[2];
	}
	s->z_m = isfinite(z_m) ? z_m : zs / MAX(nodes->nodes->len, 1);
}

int collab_splitter_split(void *ctx, const det_event *pool, int n, int *side)
{
	const collab_splitter *s = ctx;
	collab_part_obs obs[COLLAB_PARTITION_MAX];
	if (n > COLLAB_PARTITION_MAX)
		return -1;
	for (int i = 0; i < n; i++) {
		const collab_node *nd = collab_nodes_find(s->nodes, pool[i].node);
		if (!nd)
			return -1;
		obs[i] = (collab_part_obs){.node = pool[i].node,
					   .t_s = (double)(pool[i].global_ns - pool[0].global_ns) * 1e-9,
					   .se_s = hypot(det_event_global_crb_se_ns(&pool[i]) * 1e-9, s->floor_s),
					   .side = side[i]};
		memcpy(obs[i].pos_m, nd->pos_m, sizeof obs[i].pos_m);
	}
	double before, after;
	int rc = collab_partition_best(obs, n, s->c_m_s, s->box, s->z_m, &before, &after);
	if (rc == 1) {
		for (int i = 0; i < n; i++)
			side[i] = obs[i].side;
		g_message("two callers' detections regrouped where they fit (chi-square %.1f -> %.1f over %d detections)", before,
			  after, n);
	}
	return rc;
}
