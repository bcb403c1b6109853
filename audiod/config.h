/* config.h — audiod's configuration: [audiod] and one [device.K] group per
 * captured device (K = 0..AUDIOD_MAX_DEVICES-1), validated by libcfg with
 * file:line:key errors.  A device is configured when its `pcm` is set.
 */
#ifndef CHORUS_AUDIOD_CONFIG_H
#define CHORUS_AUDIOD_CONFIG_H

#include <glib.h>

#define AUDIOD_MAX_DEVICES 4

/* [device.K] format, in the order of its choices. */
typedef enum { AUDIOD_FMT_S16_LE = 0,
	       AUDIOD_FMT_S32_LE,
	       AUDIOD_FMT_FLOAT_LE,
	       AUDIOD_FMT_S24_3LE } audiod_format;

typedef struct {
	char *pcm;      /* ALSA PCM name; NULL/"" = device not used */
	gint64 rate_hz; /* frames per second */
	gint64 channels;
	int format;                 /* audiod_format */
	gint64 period;              /* frames per period */
	gint64 periods;             /* periods in the ALSA buffer */
	double ring_s;              /* history kept, s */
	int tstamp;                 /* index of auto, kpatch, alsa, sim: tsrc_kind's order */
	char *sidechannel;          /* simulator side channel path; "" = default */
	double latency_floor_us;    /* calibrated least interrupt-to-timestamp delay, µs (subtracted) */
	double latency_floor_sd_us; /* its standard error, µs (stated on every conversion) */
} audiod_device_config;

typedef struct {
	gint64 node;              /* this node's number */
	gint64 rt_priority;       /* SCHED_FIFO priority of capture threads; 0 = none */
	gboolean lock_memory;     /* mlockall */
	double status_interval_s; /* s between status notifications */
	char *archive_dir;        /* chorus-archive's directory ("" = $CHORUS_ARCHIVE_DIR or the default if there; "none") */
	audiod_device_config dev[AUDIOD_MAX_DEVICES];
} audiod_config;

/* Defaults, then `path` (missing is fine unless path_given), into *cfg.
 * CHORUS_NODE sets the default node.  FALSE + *err (file:line: [group] key: why). */
gboolean audiod_config_load(audiod_config *cfg, const char *path, gboolean path_given, GError **err);

/* Override one key (a command-line option): "device.0" "format" "S32_LE".
 * `where` prefixes the error ("--format: ").  FALSE + *err (an unknown
 * choice lists the choices). */
gboolean audiod_config_set(audiod_config *cfg, const char *group, const char *key, const char *text, const char *where,
			   GError **err);

/* Free the strings. */
void audiod_config_clear(audiod_config *cfg);

/* Every key with its default and help, as INI text (g_free). */
char *audiod_config_describe(void);

#endif
