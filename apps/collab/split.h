/* split.h — the grouper's split callback (group.h collab_split_fn) over
 * the field's nodes: two open groups of one kind, their callers within the
 * array's aperture of each other, regrouped where their detections fit two
 * sources (partition.h), each onset weighed by the onsets' gate's error
 * (its bound and the onset floor).  Pure but for a log line when it
 * regroups.
 */
#ifndef CHORUS_COLLAB_SPLIT_H
#define CHORUS_COLLAB_SPLIT_H

#include "apps/collab/nodes.h"
#include "apps/detect/event.h"

typedef struct {
	const collab_nodes *nodes; /* must outlive it */
	double c_m_s;              /* speed of sound, m/s */
	double floor_s;            /* the onsets' floor (collab's onset_floor_ms), s */
	double box[4];             /* the nodes' bounding box and 10 m around it: x_lo, x_hi, y_lo, y_hi */
	double z_m;                /* the sources' height told, else the nodes' mean height, m */
} collab_splitter;

/* Fill s for nodes: the box from their positions, the height z_m when
 * known (isfinite) or their mean height. */
void collab_splitter_init(collab_splitter *s, const collab_nodes *nodes, double c_m_s, double floor_s, double z_m);

/* collab_split_fn with ctx a collab_splitter: 1 and side[] rewritten when
 * two sources fit better (partition.h collab_partition_best), 0 when not,
 * -1 when it cannot tell (too many detections, a node not in the file). */
int collab_splitter_split(void *ctx, const det_event *pool, int n, int *side);

#endif
