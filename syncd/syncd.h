/* syncd.h — the state of the node's time-conversion daemon, shared by its
 * files: configuration (config.c), the command language (commands.c), the
 * devices (devices.c) and the main loop (main.c).
 */
#ifndef CHORUS_SYNCD_H
#define CHORUS_SYNCD_H

#include <glib.h>
#include <stdint.h>

#include "libdev/dev.h"
#include "libsync/ticker_wire.h"
#include "syncd/pairs.h"

typedef struct {
	gint64 node;            /* this node's number */
	gint64 root;            /* global root node; -1: this node */
	double rtcpu_interval;  /* s between realtime<->cpu samples */
	gint64 rtcpu_tries;     /* sandwiches per sample (tightest kept) */
	double ticker_interval; /* s: least time between ticker notifications */
	gint64 window;          /* observations per fit */
	double reject_k;        /* outlier rejection, robust sigmas */
	double wander_ppm;      /* frequency wander for aging, ppm */
	double max_span;        /* s: observations older than this leave a fit */
	double expire;          /* s: a pair unfed this long is forgotten */
	char *group;            /* owner group of the devices, or "" */
	/* RBS between nodes (rbs.c, docs/protocol.md) */
	gboolean rbs;           /* run RBS with the neighbours */
	gint64 rbs_port;        /* UDP port */
	char *rbs_address;      /* broadcast or multicast address packets go to */
	char *rbs_interface;    /* bind to this interface ("" = any) */
	gboolean rbs_beacon;    /* send reference beacons */
	double beacon_interval; /* s: mean time between our beacons (random phase) */
	double report_interval; /* s: mean time between our reception reports */
	double advert_interval; /* s: mean time between our advertisements */
	gint64 rbs_window;      /* observations per RBS fit */
	gint64 rbs_min;         /* RBS observations before preferring them to sender-receiver ones */
	double rbs_max_span;    /* s: older observations leave an RBS fit */
	double peer_timeout;    /* s: a silent neighbour's fits are forgotten */
	double node_timeout;    /* s: a node with no news is dead (root rule) */
	double edge_expire;     /* s: a learned conversion not refreshed is forgotten */
	char *key_file;         /* HMAC-SHA256 key ("" = no authentication) */
} syncd_config;

struct syncd_rbs;

/* Load defaults, then `path` (missing is fine only when `path_given` is
 * FALSE), into *cfg.  CHORUS_NODE, when set, is the default node.  Returns
 * TRUE or FALSE with *err naming file:line and key. */
gboolean syncd_config_load(syncd_config *cfg, const char *path, gboolean path_given, GError **err);

/* Free the strings of *cfg. */
void syncd_config_clear(syncd_config *cfg);

/* The configuration table as a commented INI text (g_free it). */
char *syncd_config_describe(void);

typedef struct {
	syncd_config cfg;
	syncd_pairs *pairs;
	uint32_t root;          /* current global root node */
	gboolean have_global;   /* global <-> root cpu known */
	int64_t global_cpu0;    /* root cpu time when the root was chosen, ns */
	int64_t global_utc0;    /* realtime then: global = cpu - cpu0 + utc0, ns */
	int64_t last_notify;    /* node cpu time of the last ticker notification */
	guint64 notified_gen;   /* pairs generation at that notification */
	dev_status *ticker;
	dev_status *clocks;
	dev_command *command;
	guint64 commands;       /* commands served */
	guint64 bad_commands;   /* commands refused */
	guint64 net_gen;        /* bumped when network state changes the ticker */
	struct syncd_rbs *rbs;  /* NULL when RBS is off */
	dev_status *rbs_status; /* sync/rbs */
	guint root_switches;    /* times the root changed */
	int64_t root_since;     /* node cpu ns of the last root change */
} syncd;

/* Run one command line from `who` against *s (now = node cpu ns); write the
 * reply message; return 0 or a negative errno (EINVAL for malformed input,
 * ENOENT for an unknown pair). */
int syncd_command(syncd *s, const dev_creds *who, const char *line, int64_t now, GString *reply);

/* The usage text of sync/command. */
void syncd_usage(GString *out);

/* Make this node the global root now: global = cpu + (realtime - cpu). */
void syncd_take_root(syncd *s, int64_t now);

/* The ticker: every conversion, plus global <-> root cpu (new array, *n). */
sync_ticker_entry *syncd_ticker_entries(syncd *s, size_t *n);

/* Create the three devices.  FALSE + *err on failure. */
gboolean syncd_devices_open(syncd *s, GMainContext *ctx, GError **err);

/* Notify ticker and clocks readers if something changed and the last
 * notification is at least ticker_interval old. */
void syncd_devices_flush(syncd *s, int64_t now);

/* Close the devices. */
void syncd_devices_close(syncd *s);

#endif
