/* nodes.h — where the nodes are: the microphone position collab uses for
 * each node (channel 0's microphone) and, in the field, its address.
 *
 * A nodes file, one node per line:
 *     ID X Y Z [ADDRESS] [mic1=DX,DY,DZ [mic1_sd_deg=S]]
 * (metres; '#' starts a comment), errors reported as FILE:LINE: why.
 * mic1= places the node's second microphone (audio channel 1) relative to
 * its first: its arrival difference is a bearing for the solve
 * (tdoa_pairs.h); mic1_sd_deg= how well that offset's heading is known
 * (degrees, s.d. of a turn about the vertical: a compass's survey).  The positions are
 * what the field team surveyed; chorus-sim writes one for its nodes
 * (nodes.txt in its output directory, no addresses: simulated nodes share
 * loopback).
 * Errors: GError at this edge (configuration), nothing else does I/O.
 */
#ifndef CHORUS_COLLAB_NODES_H
#define CHORUS_COLLAB_NODES_H

#include <glib.h>
#include <stdint.h>

typedef struct {
	uint32_t id;
	double pos_m[3];    /* microphone of channel 0, m */
	char *address;      /* IPv4/IPv6 literal or host name; NULL = loopback (simulation) */
	int has_mic1;       /* a second microphone, on channel 1 */
	double mic1_m[3];   /* … at pos_m + this, m */
	double mic1_sd_rad; /* … whose heading (a turn about the vertical) is known to this s.d. (mic1_sd_deg=) */
} collab_node;

typedef struct {
	GArray *nodes; /* collab_node */
} collab_nodes;

/* Load a nodes file.  NULL + *err ("FILE:LINE: why"). */
collab_nodes *collab_nodes_load(const char *path, GError **err);

void collab_nodes_free(collab_nodes *n);

/* The node with this id, or NULL. */
const collab_node *collab_nodes_find(const collab_nodes *n, uint32_t id);

/* Largest distance between two nodes, m (the array's aperture). */
double collab_nodes_aperture(const collab_nodes *n);

#endif
