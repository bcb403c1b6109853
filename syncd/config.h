/* config.h — syncd's configuration: the values of /etc/chorus/syncd.conf
 * (table and loading in config.c).  Every part of syncd that needs settings
 * takes a `const syncd_config *`; nothing here depends on the rest of syncd.
 */
#ifndef CHORUS_SYNCD_CONFIG_H
#define CHORUS_SYNCD_CONFIG_H

#include <glib.h>

typedef struct {
	gint64 node;              /* this node's number */
	gint64 root;              /* global root node; -1: this node */
	double rtcpu_interval_s;  /* s between realtime<->cpu samples */
	gint64 rtcpu_tries;       /* sandwiches per sample (tightest kept) */
	double ticker_interval_s; /* s: least time between ticker notifications */
	gint64 ticker_part;       /* conversions per binary ticker part (<= SYNC_TICKER_PART_MAX) */
	gint64 ticker_keep;       /* ticker snapshots held for their later parts */
	gint64 window;            /* observations per fit */
	double reject_k;          /* outlier rejection, robust sigmas */
	double wander_ppm;        /* frequency wander for aging, ppm */
	double max_span_s;        /* s: observations older than this leave a fit */
	double expire_s;          /* s: a pair unfed this long is forgotten */
	double history_s;         /* s: a local pair's pieces of history are kept this long (history.h) */
	gint64 history_pieces;    /* ... at most this many per pair (0: no history) */
	double history_every_s;   /* s: a piece every this much of the pair's data */
	char *group;              /* owner group of the devices, or "" */
	char *history_file;       /* the pieces of history kept across restarts (history_file.h; "": default, "none") */
	double history_write_s;   /* s: least time between two writes of that file while syncd runs */
	/* Global time steered to UTC (steer.h, docs/clocks.md "Global tracks UTC") */
	gboolean utc_steer;        /* steer global's rate to a disciplined realtime clock on the root */
	double steer_interval_s;   /* s between steering decisions */
	double steer_tau_s;        /* s: time constant of global - UTC's decay */
	double steer_max_slew_ppm; /* largest rate correction, ppm */
	double utc_error_us;       /* realtime's error against UTC, us; 0: as its discipline states (adjtimex) */
	/* RBS between nodes (rbs.c, docs/protocol.md) */
	gboolean rbs;               /* run RBS with the neighbours */
	gint64 rbs_port;            /* UDP port */
	char *rbs_address;          /* broadcast or multicast address packets go to */
	char *rbs_interface;        /* bind to this interface ("" = any) */
	gboolean rbs_beacon;        /* send reference beacons */
	double beacon_interval_s;   /* s: mean time between our beacons (random phase) */
	double report_interval_s;   /* s: mean time between our reception reports */
	double advert_interval_s;   /* s: mean time between our advertisements */
	gint64 rbs_window;          /* observations per RBS fit */
	gint64 rbs_min;             /* RBS observations before preferring them to sender-receiver ones */
	gint64 rbs_references;      /* 0: every node beacons; K >= 2: reference broadcasters (rbs_core.h) */
	gint64 rbs_advert_hops;     /* 0: advertise all; H >= 1: scoped advertisements (advert_scope.h) */
	double path_tolerance_us;   /* us: beacon senders of a pair may disagree this much (rbs_paths.h) */
	double rbs_max_span_s;      /* s: older observations leave an RBS fit */
	double peer_timeout_s;      /* s: a silent neighbour's fits are forgotten */
	double rbs_history_s;       /* s: a pair's fit from before an outage is kept this long */
	gint64 rbs_history_pieces;  /* ... pieces per neighbour (0: no history) */
	double rbs_history_every_s; /* s: and a neighbour's fit every this much of its data */
	double node_timeout_s;      /* s: a node with no news is dead (root rule) */
	double edge_expire_s;       /* s: a learned conversion not refreshed is forgotten */
	char *key_file;             /* HMAC-SHA256 key ("" = no authentication) */
	gboolean insecure;          /* run RBS without a key: anyone on the network can forge time */
	char *peers;                /* node numbers believed (allow.h; "" = any, up to max_peers) */
	gint64 max_peers;           /* senders kept (replay windows, fits); more are refused */
	char *boot_file;            /* the boot number's file (bootid.h; "" = $STATE_DIRECTORY/syncd.boot) */
} syncd_config;

/* Load defaults, then `path` (missing is fine only when `path_given` is
 * FALSE), into *cfg.  CHORUS_NODE, when set, is the default node.  Returns
 * TRUE or FALSE with *err naming file:line and key. */
gboolean syncd_config_load(syncd_config *cfg, const char *path, gboolean path_given, GError **err);

/* Free the strings of *cfg. */
void syncd_config_clear(syncd_config *cfg);

/* The configuration table as a commented INI text (g_free it). */
char *syncd_config_describe(void);

#endif
