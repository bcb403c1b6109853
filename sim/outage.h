/* outage.h — a node's outages in the simulated world (issue 16):
 * `[node.N] radio_down = T0-T1, T2-T3` (s since the world's epoch: the node
 * hears and is heard by no one) and `[node.N] down = T0-T1` (its services
 * are stopped, as by a power blip, and started again with its clocks
 * continuing).  Pure.
 */
#ifndef CHORUS_SIM_OUTAGE_H
#define CHORUS_SIM_OUTAGE_H

#include <glib.h>
#include <stddef.h>

/* One window [from_s, to_s), s since the world's epoch. */
typedef struct {
	double from_s, to_s;
} sim_window;

/* Parse "T0-T1, T2-T3, ..." (s; each T0 < T1, the windows in increasing
 * order and not overlapping, all within 0..1e7 s) into a g_malloc'd array
 * of *n windows.  NULL with the reason in why[len] (which window, what is
 * wrong).  An empty text gives NULL with *n = 0 and why[0] = '\0'. */
sim_window *sim_windows_parse(const char *text, size_t *n, char *why, size_t len);

/* TRUE when t_s lies in one of the n windows w[]. */
gboolean sim_windows_contain(const sim_window *w, size_t n, double t_s);

/* The end of the last window that ended at or before t_s, or -1 (none). */
double sim_windows_last_end(const sim_window *w, size_t n, double t_s);

/* A partition of the field ([world] partition = "T0-T1: 1,2 | 3,4"): in
 * the window the nodes of different groups hear each other not at all. */
typedef struct {
	int node, group;
} sim_part_member;

/* Parse a partition: one window, then ':', then two or more groups of
 * node numbers separated by '|' (numbers by ','), no node in two groups.
 * TRUE with *win and the members appended to `members` (sim_part_member),
 * or FALSE with the reason in why[len]. */
gboolean sim_partition_parse(const char *text, sim_window *win, GArray *members, char *why, size_t len);

/* Where a time stands relative to a node's outages. */
typedef enum {
	SIM_PHASE_BEFORE = 0, /* no outage of the node has begun (or it has none) */
	SIM_PHASE_DURING = 1, /* inside one of its outages */
	SIM_PHASE_AFTER = 2,  /* after one of them ended, outside any */
	SIM_PHASE_PAST = 3,   /* chorus-sim's truth: a time inside an outage converted after it
			       * ended, through the history joined across it (issue 16 item 3);
			       * never a node's phase (sim_node_phase) */
	SIM_N_PHASES
} sim_phase;

/* "before", "during", "after", "past". */
const char *sim_phase_name(sim_phase p);

/* The later of two phases in the order before < after < during (a
 * conversion between two nodes is "during" when either is cut off). */
sim_phase sim_phase_worse(sim_phase a, sim_phase b);

#endif
