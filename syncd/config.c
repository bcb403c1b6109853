/* config.c — syncd's configuration table (GKeyFile via libcfg). */
#include <stddef.h>
#include <stdlib.h>

#include "libcfg/cfg.h"
#include "syncd/syncd.h"

#define F(x) offsetof(syncd_config, x)
static const cfg_entry table[] = {
	{"syncd", "node", CFG_INT, "0", 0, 4294967294.0, F(node), "this node's number (CHORUS_NODE overrides the default)"},
	{"syncd", "root", CFG_INT, "-1", -1, 4294967294.0, F(root), "global root node; -1 = this node"},
	{"syncd", "group", CFG_STRING, "", 1, 0, F(group), "owner group of the devices (writers must be in it); empty = none"},
	{"realtime", "interval", CFG_DOUBLE, "1.0", 0.01, 3600, F(rtcpu_interval), "seconds between realtime<->cpu samples"},
	{"realtime", "tries", CFG_INT, "7", 1, 1000, F(rtcpu_tries), "cpu-realtime-cpu sandwiches per sample, tightest kept"},
	{"ticker", "interval", CFG_DOUBLE, "0.2", 0.001, 60, F(ticker_interval), "least seconds between ticker notifications"},
	{"fit", "window", CFG_INT, "64", 3, 65536, F(window), "observations per fit"},
	{"fit", "reject_k", CFG_DOUBLE, "3.5", 0, 100, F(reject_k), "outlier rejection threshold, robust sigmas (0 = off)"},
	{"fit", "wander_ppm", CFG_DOUBLE, "0.1", 0, 1000, F(wander_ppm), "frequency wander assumed when extrapolating, ppm"},
	{"fit", "max_span", CFG_DOUBLE, "600", 1, 86400, F(max_span), "seconds: older observations leave a fit"},
	{"fit", "expire", CFG_DOUBLE, "120", 1, 86400, F(expire), "seconds: a pair with no new observation is forgotten"},
	{"rbs", "enable", CFG_BOOL, "true", 0, 0, F(rbs), "run RBS with neighbouring nodes over UDP"},
	{"rbs", "port", CFG_INT, "43000", 1, 65535, F(rbs_port), "UDP port of the sync protocol"},
	{"rbs", "address", CFG_STRING, "255.255.255.255", 1, 0, F(rbs_address),
	 "broadcast or multicast (224.0.0.0/4) address packets go to; 127.255.255.255 on loopback"},
	{"rbs", "interface", CFG_STRING, "", 1, 0, F(rbs_interface), "network interface to use (empty = any)"},
	{"rbs", "beacon", CFG_BOOL, "true", 0, 0, F(rbs_beacon), "send reference beacons"},
	{"rbs", "beacon_interval", CFG_DOUBLE, "1.0", 0.01, 3600, F(beacon_interval), "mean seconds between beacons (each 0.5-1.5x, random phase)"},
	{"rbs", "report_interval", CFG_DOUBLE, "1.0", 0.01, 3600, F(report_interval), "mean seconds between reception reports"},
	{"rbs", "advert_interval", CFG_DOUBLE, "2.0", 0.01, 3600, F(advert_interval), "mean seconds between conversion advertisements"},
	{"rbs", "window", CFG_INT, "64", 3, 65536, F(rbs_window), "observations per RBS fit"},
	{"rbs", "min_rbs", CFG_INT, "8", 3, 65536, F(rbs_min), "RBS observations before a pair stops using sender-receiver ones"},
	{"rbs", "max_span", CFG_DOUBLE, "300", 1, 86400, F(rbs_max_span), "seconds: older observations leave an RBS fit"},
	{"rbs", "peer_timeout", CFG_DOUBLE, "10", 0.1, 86400, F(peer_timeout), "seconds: a silent neighbour's fits are forgotten"},
	{"rbs", "node_timeout", CFG_DOUBLE, "15", 0.1, 86400, F(node_timeout), "seconds: a node with no news counts as dead (root rule)"},
	{"rbs", "edge_expire", CFG_DOUBLE, "30", 0.1, 86400, F(edge_expire), "seconds: a learned conversion not refreshed is forgotten"},
	{"rbs", "key_file", CFG_STRING, "", 1, 0, F(key_file), "file whose bytes are the HMAC-SHA256 key of the network (empty = none)"},
};
#define N_TABLE (sizeof table / sizeof table[0])

gboolean syncd_config_load(syncd_config *cfg, const char *path, gboolean path_given, GError **err)
{
	if (!cfg_defaults(table, N_TABLE, cfg, err))
		return FALSE;
	const char *env = getenv("CHORUS_NODE");
	if (env && *env && !cfg_set(&table[0], cfg, env, "environment CHORUS_NODE: ", err))
		return FALSE;
	return cfg_load(path, !path_given, table, N_TABLE, cfg, err);
}

void syncd_config_clear(syncd_config *cfg)
{
	cfg_clear(table, N_TABLE, cfg);
}

char *syncd_config_describe(void)
{
	return cfg_describe(table, N_TABLE);
}
