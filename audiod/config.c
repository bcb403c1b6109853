/* config.c — audiod's configuration table (see config.h). */
#include "audiod/config.h"

#include <stddef.h>
#include <stdlib.h>

#include "libcfg/cfg.h"

#define PER_DEVICE 9
#define N_TABLE (4 + AUDIOD_MAX_DEVICES * PER_DEVICE)

static cfg_entry table[N_TABLE];
static char groups[AUDIOD_MAX_DEVICES][16];

static const cfg_entry *get_table(void)
{
	if (table[0].group)
		return table;
	size_t i = 0;
#define F(x) offsetof(audiod_config, x)
	table[i++] = (cfg_entry){"audiod", "node", CFG_INT, "0", 0, 4294967294.0, F(node), "this node's number (CHORUS_NODE sets the default)"};
	table[i++] = (cfg_entry){"audiod", "rt_priority", CFG_INT, "0", 0, 99, F(rt_priority), "SCHED_FIFO priority of the capture threads; 0 = normal scheduling"};
	table[i++] = (cfg_entry){"audiod", "lock_memory", CFG_BOOL, "false", 1, 0, F(lock_memory), "lock all memory (mlockall) so capture never pages"};
	table[i++] = (cfg_entry){"audiod", "status_interval", CFG_DOUBLE, "0.5", 0.01, 60, F(status_interval), "seconds between status notifications"};
	for (int k = 0; k < AUDIOD_MAX_DEVICES; k++) {
		const char *g = groups[k];
		g_snprintf(groups[k], sizeof groups[k], "device.%d", k);
		size_t b = F(dev) + (size_t)k * sizeof(audiod_device_config);
#define D(x) (b + offsetof(audiod_device_config, x))
		table[i++] = (cfg_entry){g, "pcm", CFG_STRING, k == 0 ? "default" : "", 1, 0, D(pcm), "ALSA PCM to capture (hw:1, plughw:1,0, chorus_sim); empty = unused"};
		table[i++] = (cfg_entry){g, "rate", CFG_INT, "48000", 8000, 384000, D(rate), "sample rate, frames/s"};
		table[i++] = (cfg_entry){g, "channels", CFG_INT, "1", 1, 64, D(channels), "channels"};
		table[i++] = (cfg_entry){g, "format", CFG_STRING, "S16_LE", 1, 0, D(format), "sample format: S16_LE, S32_LE or FLOAT_LE"};
		table[i++] = (cfg_entry){g, "period", CFG_INT, "480", 16, 1 << 20, D(period), "frames per period (one DMA interrupt each)"};
		table[i++] = (cfg_entry){g, "periods", CFG_INT, "8", 2, 1024, D(periods), "periods in the ALSA buffer"};
		table[i++] = (cfg_entry){g, "ring_seconds", CFG_DOUBLE, "60", 1, 86400, D(ring_seconds), "seconds of audio kept for clients"};
		table[i++] = (cfg_entry){g, "tstamp", CFG_STRING, "auto", 1, 0, D(tstamp), "timestamp source: auto, kpatch, alsa or sim"};
		table[i++] = (cfg_entry){g, "sidechannel", CFG_STRING, "", 1, 0, D(sidechannel), "simulator side channel path; empty = the default for the PCM"};
	}
	return table;
}

gboolean audiod_config_load(audiod_config *cfg, const char *path, gboolean path_given, GError **err)
{
	const cfg_entry *t = get_table();
	if (!cfg_defaults(t, N_TABLE, cfg, err))
		return FALSE;
	const char *env = getenv("CHORUS_NODE");
	if (env && *env && !cfg_set(&t[0], cfg, env, "environment CHORUS_NODE: ", err))
		return FALSE;
	return cfg_load(path, !path_given, t, N_TABLE, cfg, err);
}

void audiod_config_clear(audiod_config *cfg)
{
	cfg_clear(get_table(), N_TABLE, cfg);
}

char *audiod_config_describe(void)
{
	return cfg_describe(get_table(), N_TABLE);
}
