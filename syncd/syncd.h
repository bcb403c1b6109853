/* syncd.h — the state of the node's time-conversion daemon: what main.c
 * owns and hands to the command language (commands.h) and the devices
 * (devices.h).  The parts below it — configuration (config.h), pairs
 * (pairs.h), the global root (root.h) and RBS (rbs.h) — do not know this
 * struct; they are given what they need.
 *
 * Calls go one way (a DAG): main -> {devices, rbs, root, pairs,
 * history_file}; history_file -> {pairs, rbs_core, history_store};
 * devices -> {commands, conversions, rbs, root, history_file};
 * commands -> {root, pairs};
 * rbs -> {conversions, root, pairs, rbs_core, rbs_mesh, rbs_wire, rxfilter};
 * conversions -> {root, pairs, rbs_core, rbs_mesh}.  Changes travel back up
 * only through the syncd_notify listener the daemon gives (notify.h).
 */
#ifndef CHORUS_SYNCD_H
#define CHORUS_SYNCD_H

#include <glib.h>
#include <stdint.h>

#include "libdev/dev.h"
#include "syncd/config.h"
#include "syncd/history_file.h"
#include "syncd/pairs.h"
#include "syncd/rbs.h"
#include "syncd/root.h"
#include "syncd/ticker_store.h"

typedef struct {
	syncd_config cfg;
	syncd_pairs *pairs;
	syncd_root *root;       /* global time's root */
	syncd_rbs *rbs;         /* NULL when RBS is off */
	history_file *hfile;    /* the pieces of history kept across restarts */
	struct rtstep *rtstep;  /* the realtime clock's steps (rtstep.h), or NULL: not watched */
	char rtstep_off[200];   /* why not, when rtstep is NULL */
	int64_t last_notify_ns; /* node cpu time of the last ticker notification */
	guint64 notified_gen;   /* pairs generation + net_gen at that notification */
	guint64 net_gen;        /* bumped when root or network state changes what the devices show */
	dev_status *ticker;
	dev_query *ticker_part;     /* sync/ticker-part: later parts of a snapshot */
	syncd_ticker_store *tstore; /* the snapshots both hand out */
	dev_status *clocks;
	dev_status *rbs_status;   /* sync/rbs */
	dev_status *peers_status; /* sync/peers: where each node's packets come from */
	dev_command *command;
	guint64 commands;     /* commands served */
	guint64 bad_commands; /* commands refused */
} syncd;

#endif
