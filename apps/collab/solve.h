/* solve.h — one group's call located: every node's clip fetched by global
 * time from its clip service, the solver's inputs and parameters made from
 * the detections and collab's configuration, tdoa_locate run, and its
 * inputs kept in dump_dir when asked (dump.h).  Runs on collab's worker
 * thread: it touches only what it is given.
 */
#ifndef CHORUS_COLLAB_SOLVE_H
#define CHORUS_COLLAB_SOLVE_H

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

#include "apps/collab/config.h"
#include "apps/collab/nodes.h"
#include "apps/collab/result.h"

/* What a solve needs of collab, read only. */
typedef struct {
	const collab_cfg *cfg;
	const collab_nodes *nodes;
	double c_m_s, c_sd_m_s; /* the speed of sound as the team knows it, and its uncertainty */
	const uint8_t *key;     /* the field's key for clip requests, or NULL */
	size_t klen;
} collab_solve_ctx;

/* What a solve says beyond its result. */
typedef struct {
	guint again; /* clips a node could not serve for now (clip.h -EAGAIN; connection refused, reset
		      * or timed out: its collab restarting or stopped): worth solving again */
	int dump_rc; /* its inputs kept in dump_dir: 1; could not be: -1 (dump_err says); 0 not asked */
	char dump_err[256];
} collab_solve_note;

/* Locate the call of the detections dets (det_event, at least one): fills
 * r's kind, dur_s, n, nodes, rc, tr and why (a clip that could not be
 * fetched, too few clips, or the solver's), and *note. */
void collab_solve_group(const collab_solve_ctx *c, const GArray *dets, collab_result *r, collab_solve_note *note);

#endif
