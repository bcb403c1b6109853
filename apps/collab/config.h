/* config.h — collab's configuration: the [collab] group of collab.conf
 * (libcfg; every key, its default, range and meaning in config.c, and
 * `collab --help-config`).
 */
#ifndef CHORUS_COLLAB_CONFIG_H
#define CHORUS_COLLAB_CONFIG_H

#include <glib.h>

#include "libcfg/cfg.h"

typedef struct {
	gint64 node, device, channel;
	char *nodes; /* nodes file (required) */
	char *share_address;
	gint64 share_port, clip_port;
	char *clip_bind;                        /* address the clip service listens on */
	char *key_file;                         /* the field's shared key ("" = none) */
	gboolean insecure;                      /* networked without a key, said in so many words */
	gint64 max_peers;                       /* senders whose replay windows are kept */
	gint64 clip_max_conn;                   /* clip requests served at once */
	double speed_of_sound_m_s;              /* m/s, as measured; 0: from temperature_c */
	double speed_of_sound_sd_m_s;           /* m/s: its uncertainty when stated */
	double temperature_c, temperature_sd_c; /* °C: the air's, as measured, and its uncertainty */
	double position_sd_m;                   /* m: survey s.d. of the node positions per axis */
	double wind_speed_m_s, wind_from_deg;   /* the wind as measured: m/s, and where from (° clockwise from +y) */
	double margin_ms, hold_s, hold_untested_s;
	gint64 min_nodes;
	double pre_ms, max_clip_ms, gcc_beta, onset_floor_ms, search_margin_m, ambiguity_ratio, dominance_ratio, alpha;
	double onset_check;      /* s.e. beyond which two onsets refuse the correlation's answer (0: no check) */
	gboolean onset_timing;   /* time a call by its onsets where the clips do not correlate */
	double coarse_m;         /* an onset-timed answer wider than this (95 % semi-major, m) is coarse */
	double source_speed_m_s; /* the fastest the callers move, m/s (0: still): Doppler measured and taken out */
	char *gcc_weighting;
	gboolean source_plane;
	double source_z_m;
	char *jsonl, *map;
	gint64 map_every, fetch_timeout_ms;
	gboolean queue;    /* queue shared detections on disk and catch up */
	char *queue_file;  /* its path ("" = state directory) */
	gint64 queue_max;  /* detections queued at most */
	double queue_s;    /* and none older, s */
	gint64 catchup_ms; /* HAVE/WANT period */
	gint64 resend_per_s;
	gint64 history;      /* results kept for subscribers that resume */
	char *dump_dir;      /* solves' inputs kept here ("" = none; dump.h) */
	gboolean dump_ok;    /* ok solves' too */
	gint64 clip_retries; /* solves again of a group whose clip a node could not serve yet */
} collab_cfg;

/* The [collab] keys, for cfg_defaults / cfg_load / cfg_options. */
extern const cfg_group collab_cfg_table[];

/* Seconds between two solves of a group whose clip a node could not serve
 * yet (clip.h: -EAGAIN). */
#define COLLAB_CLIP_RETRY_S 2

#endif
