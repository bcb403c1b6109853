/* config.h — audiod's configuration: [audiod] and one [device.K] group per
 * captured device (K = 0..AUDIOD_MAX_DEVICES-1), validated by libcfg with
 * file:line:key errors.  A device is configured when its `pcm` is set.
 */
#ifndef CHORUS_AUDIOD_CONFIG_H
#define CHORUS_AUDIOD_CONFIG_H

#include <glib.h>

#define AUDIOD_MAX_DEVICES 4

typedef struct {
	char *pcm;      /* ALSA PCM name; NULL/"" = device not used */
	gint64 rate_hz; /* frames per second */
	gint64 channels;
	char *format;      /* S16_LE, S32_LE, FLOAT_LE */
	gint64 period;     /* frames per period */
	gint64 periods;    /* periods in the ALSA buffer */
	double ring_s;     /* history kept, s */
	char *tstamp;      /* auto, kpatch, alsa, sim */
	char *sidechannel; /* simulator side channel path; "" = default */
} audiod_device_config;

typedef struct {
	gint64 node;              /* this node's number */
	gint64 rt_priority;       /* SCHED_FIFO priority of capture threads; 0 = none */
	gboolean lock_memory;     /* mlockall */
	double status_interval_s; /* s between status notifications */
	audiod_device_config dev[AUDIOD_MAX_DEVICES];
} audiod_config;

/* Defaults, then `path` (missing is fine unless path_given), into *cfg.
 * CHORUS_NODE sets the default node.  FALSE + *err (file:line: [group] key: why). */
gboolean audiod_config_load(audiod_config *cfg, const char *path, gboolean path_given, GError **err);

/* Free the strings. */
void audiod_config_clear(audiod_config *cfg);

/* Every key with its default and help, as INI text (g_free). */
char *audiod_config_describe(void);

#endif
