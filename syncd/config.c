/* config.c — syncd's configuration table (libcfg); keys carry their unit
 * (interval_s), the names before that are accepted as deprecated aliases. */
#include <arpa/inet.h>
#include <grp.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <glib.h>

#include "libcfg/cfg.h"
#include "syncd/syncd.h"

#define K(...) CFG_KEY(syncd_config, __VA_ARGS__)
#define R(...) CFG_KEY_RENAMED(syncd_config, __VA_ARGS__)

/* A key; R: a key renamed to carry its unit, the old name still accepted. */
static const cfg_key syncd_keys[] = {
	K("node", CFG_INT, "0", 0, 4294967294.0, node, "this node's number (CHORUS_NODE overrides the default)"),
	K("root", CFG_INT, "-1", -1, 4294967294.0, root, "global root node; -1 = this node"),
	K("group", CFG_STRING, "", 1, 0, group, "owner group of the devices (writers must be in it); empty = none"),
	K("history_file", CFG_STRING, "", 1, 0, history_file,
	  "file keeping the pairs' pieces of history across restarts of syncd, for this boot only (empty = $STATE_DIRECTORY/syncd.history under systemd, else syncd.history in the run directory; none = keep nothing: a restarted syncd converts times from before it only by its new fits, extrapolated)"),
	K("history_write_s", CFG_DOUBLE, "30", 1, 86400, history_write_s,
	  "least seconds between two writes of history_file while syncd runs, when pieces changed (it is written at a clean stop too; a crash loses the pieces since the last write, which the restarted syncd bridges; each write is the whole file, ~4 kB per pair: raise it on flash with many RBS neighbours)"),
	{NULL},
};
static const cfg_key realtime_keys[] = {
	R("interval_s", "interval", CFG_DOUBLE, "1.0", 0.01, 3600, rtcpu_interval_s, "seconds between realtime<->cpu samples"),
	K("tries", CFG_INT, "7", 1, 1000, rtcpu_tries, "cpu-realtime-cpu sandwiches per sample, tightest kept"),
	{NULL},
};
static const cfg_key ticker_keys[] = {
	R("interval_s", "interval", CFG_DOUBLE, "0.2", 0.001, 60, ticker_interval_s, "least seconds between ticker notifications"),
	K("part_entries", CFG_INT, "1000", 1, 1000, ticker_part, "conversions per binary ticker part (docs/protocol.md \"sync/ticker\"); fewer only to test the parts"),
	K("keep", CFG_INT, "4", 1, 64, ticker_keep, "ticker snapshots held for readers of their later parts"),
	{NULL},
};
static const cfg_key fit_keys[] = {
	K("window", CFG_INT, "64", 3, 65536, window, "observations per fit"),
	K("reject_k", CFG_DOUBLE, "3.5", 0, 100, reject_k, "outlier rejection threshold, robust sigmas (0 = off)"),
	K("wander_ppm", CFG_DOUBLE, "0.01", 0, 1000, wander_ppm, "frequency wander assumed when extrapolating beyond what the fits measure, ppm"),
	K("path_tolerance_us", CFG_DOUBLE, "5", 0, 1e6, path_tolerance_us,
	  "us: how far one beacon sender's observations of a pair may lie from the other senders' before the link is reported as delayed (radio paths differ by their light time, 3.3 ns a metre)"),
	R("max_span_s", "max_span", CFG_DOUBLE, "600", 1, 86400, max_span_s, "seconds: older observations leave a fit"),
	R("expire_s", "expire", CFG_DOUBLE, "120", 1, 86400, expire_s, "seconds: a pair with no new observation is forgotten"),
	K("history_s", CFG_DOUBLE, "3600", 1, 604800, history_s,
	  "seconds: how long a local pair's (audio<k> -> cpu, cpu -> realtime) pieces of history are kept, so that a past time (an audio frame minutes old) converts with the fit that held then"),
	K("history_pieces", CFG_INT, "32", 0, 256, history_pieces,
	  "pieces of history kept per local pair (0: none: a past time converts only within the current fit's window and the tolerance)"),
	K("history_every_s", CFG_DOUBLE, "120", 0, 86400, history_every_s,
	  "seconds of a local pair's data between two pieces kept (0: only the fit before each reset); times between them are bridged"),
	{NULL},
};
static const cfg_key utc_keys[] = {
	K("steer", CFG_BOOL, "true", 0, 0, utc_steer,
	  "on the root: steer global's rate to the realtime clock when a daemon (chrony, ntpd, GPS) disciplines it to UTC; false: global runs free"),
	K("interval_s", CFG_DOUBLE, "16", 1, 3600, steer_interval_s, "seconds between steering decisions (each starts a segment of the timescale)"),
	K("tau_s", CFG_DOUBLE, "64", 16, 86400, steer_tau_s,
	  "seconds: time constant of global - UTC's decay (shorter while the timescale is young), at least 4 interval_s; longer filters a noisy discipline more, shorter follows a wandering crystal closer"),
	K("max_slew_ppm", CFG_DOUBLE, "100", 0.001, 1000, steer_max_slew_ppm, "largest rate correction of global, ppm"),
	K("error_us", CFG_DOUBLE, "0", 0, 1e7, utc_error_us,
	  "realtime's standard error against UTC, us; 0 = as its discipline states it (the kernel's esterror, set by chronyd and ntpd)"),
	{NULL},
};
static const cfg_key rbs_keys[] = {
	K("enable", CFG_BOOL, "true", 0, 0, rbs, "run RBS with neighbouring nodes over UDP"),
	K("port", CFG_INT, "43000", 1, 65535, rbs_port, "UDP port of the sync protocol"),
	K("address", CFG_STRING, "255.255.255.255", 1, 0, rbs_address,
	  "broadcast or multicast (224.0.0.0/4) address packets go to; 127.255.255.255 on loopback"),
	K("interface", CFG_STRING, "", 1, 0, rbs_interface, "network interface to use (empty = any)"),
	K("beacon", CFG_BOOL, "true", 0, 0, rbs_beacon, "send reference beacons"),
	R("beacon_interval_s", "beacon_interval", CFG_DOUBLE, "1.0", 0.01, 3600, beacon_interval_s, "mean seconds between beacons (each 0.5-1.5x, random phase)"),
	R("report_interval_s", "report_interval", CFG_DOUBLE, "1.0", 0.01, 3600, report_interval_s, "mean seconds between reception reports"),
	R("advert_interval_s", "advert_interval", CFG_DOUBLE, "2.0", 0.01, 3600, advert_interval_s, "mean seconds between conversion advertisements"),
	K("window", CFG_INT, "64", 3, 65536, rbs_window, "observations per RBS fit"),
	K("min_rbs", CFG_INT, "8", 3, 65536, rbs_min, "RBS observations before a pair stops using sender-receiver ones"),
	K("references", CFG_INT, "0", 0, 4096, rbs_references,
	  "0: every node beacons; K >= 2: only the K lowest-numbered nodes of a neighbourhood beacon and the others fit only to them (dense fields)"),
	K("advert_hops", CFG_INT, "0", 0, 64, rbs_advert_hops,
	  "0: advertise every conversion known, so every node learns the whole field's; H >= 1: only those from within H hops and this node's path to global, and news of nodes within H hops and of the root (fields of hundreds of nodes)"),
	K("path_tolerance_us", CFG_DOUBLE, "5", 0, 1e6, path_tolerance_us,
	  "us: how far one beacon sender's observations of a pair may lie from the other senders' before the link is reported as delayed (radio paths differ by their light time, 3.3 ns a metre)"),
	R("max_span_s", "max_span", CFG_DOUBLE, "300", 1, 86400, rbs_max_span_s, "seconds: older observations leave an RBS fit"),
	R("peer_timeout_s", "peer_timeout", CFG_DOUBLE, "10", 0.1, 86400, peer_timeout_s, "seconds: a silent neighbour's fits are forgotten"),
	K("history_s", CFG_DOUBLE, "3600", 1, 604800, rbs_history_s,
	  "seconds: how long a neighbour's fit from before an outage is kept, so that times inside the outage convert across it (bridged) afterwards"),
	K("history_pieces", CFG_INT, "32", 0, 256, rbs_history_pieces,
	  "pieces of history kept per neighbour (0: none: a past time converts only within the current fit's window and the tolerance)"),
	K("history_every_s", CFG_DOUBLE, "300", 0, 86400, rbs_history_every_s,
	  "seconds of data between two pieces kept while a neighbour is heard (0: only the fit before each outage); times between them are bridged"),
	R("node_timeout_s", "node_timeout", CFG_DOUBLE, "15", 0.1, 86400, node_timeout_s, "seconds: a node with no news counts as dead (root rule)"),
	R("edge_expire_s", "edge_expire", CFG_DOUBLE, "30", 0.1, 86400, edge_expire_s, "seconds: a learned conversion not refreshed is forgotten"),
	K("key_file", CFG_STRING, "", 1, 0, key_file, "file whose bytes (16 or more) are the HMAC-SHA256 key the field's nodes share"),
	K("insecure", CFG_BOOL, "false", 0, 0, insecure,
	  "true: run RBS without key_file, so anyone on the network can forge or replay time (a networked syncd without a key refuses to start otherwise)"),
	K("peers", CFG_STRING, "", 1, 0, peers, "node numbers believed, e.g. 1-8, 12 (empty = any, up to max_peers)"),
	K("max_peers", CFG_INT, "256", 1, 65535, max_peers, "senders kept; packets from more are refused and counted"),
	K("boot_file", CFG_STRING, "", 1, 0, boot_file,
	  "file keeping the boot number that makes replays of earlier runs detectable (empty = $STATE_DIRECTORY/syncd.boot under systemd, else none)"),
	{NULL},
};

static const cfg_group table[] = {
	{.name = "syncd", .keys = syncd_keys, .store = 1},
	{.name = "realtime", .keys = realtime_keys, .store = 1},
	{.name = "ticker", .keys = ticker_keys, .store = 1},
	{.name = "fit", .keys = fit_keys, .store = 1},
	{.name = "utc", .keys = utc_keys, .store = 1},
	{.name = "rbs", .keys = rbs_keys, .store = 1},
	{NULL},
};

/* TRUE when a (network order) is a broadcast address RBS can use: the
 * limited broadcast, a directed one (host part all ones for a /8 to /24,
 * or an interface's broadcast address now, for other masks), or 127.x.y.255
 * on loopback (a simulated field).  Multicast is handled apart. */
static gboolean is_broadcast(struct in_addr a)
{
	uint32_t h = ntohl(a.s_addr);
	if (h == 0xffffffffu || (h & 0xff) == 0xff)
		return TRUE;
	struct ifaddrs *ifs = NULL, *i;
	gboolean yes = FALSE;
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i && !yes; i = i->ifa_next)
			yes = i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_BROADCAST) &&
			      i->ifa_broadaddr &&
			      ((struct sockaddr_in *)(void *)i->ifa_broadaddr)->sin_addr.s_addr == a.s_addr;
		freeifaddrs(ifs);
	}
	return yes;
}

/* The values the table cannot judge, at their lines (issue 15: a unicast
 * address, an interface, group or key file that does not exist). */
static void check(cfg_file *f, const void *target)
{
	const syncd_config *c = target;
	struct in_addr a;
	if (cfg_file_has(f, "rbs", "address")) {
		if (inet_pton(AF_INET, c->rbs_address, &a) != 1)
			cfg_file_fail(f, "rbs", "address", "\"%s\" is not an IPv4 address", c->rbs_address);
		else if (!IN_MULTICAST(ntohl(a.s_addr)) && !is_broadcast(a))
			cfg_file_fail(f, "rbs", "address",
				      "%s is neither a broadcast nor a multicast address: reference broadcasts must reach "
				      "every node at once (give the field network's broadcast address, e.g. "
				      "192.168.1.255 as `ip -br addr` shows it, or a group in 224.0.0.0/4)",
				      c->rbs_address);
	}
	if (cfg_file_has(f, "rbs", "interface") && *c->rbs_interface && if_nametoindex(c->rbs_interface) == 0)
		cfg_file_fail(f, "rbs", "interface", "no network interface \"%s\" (`ip link` lists them)",
			      c->rbs_interface);
	if ((cfg_file_has(f, "utc", "tau_s") || cfg_file_has(f, "utc", "interval_s")) &&
	    c->steer_tau_s < 4 * c->steer_interval_s)
		cfg_file_fail(f, "utc", cfg_file_has(f, "utc", "tau_s") ? "tau_s" : "interval_s",
			      "tau_s (%g s) must be at least 4 interval_s (%g s): a faster loop overshoots", c->steer_tau_s,
			      c->steer_interval_s);
	if (cfg_file_has(f, "syncd", "group") && *c->group && !getgrnam(c->group))
		cfg_file_fail(f, "syncd", "group", "no group \"%s\" on this system (/etc/group)", c->group);
	if (cfg_file_has(f, "syncd", "history_file") && *c->history_file && strcmp(c->history_file, "none")) {
		char *dir = g_path_get_dirname(c->history_file);
		if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
			cfg_file_fail(f, "syncd", "history_file", "no directory %s for %s", dir, c->history_file);
		g_free(dir);
	}
	if (cfg_file_has(f, "rbs", "key_file") && *c->key_file) {
		gchar *k = NULL;
		gsize kl = 0;
		GError *e = NULL;
		if (!g_file_get_contents(c->key_file, &k, &kl, &e)) {
			cfg_file_fail(f, "rbs", "key_file", "%s", e->message);
			g_error_free(e);
		} else if (kl < 16)
			cfg_file_fail(f, "rbs", "key_file", "%s holds %zu bytes; a key needs 16 or more", c->key_file,
				      (size_t)kl);
		if (k)
			memset(k, 0, kl);
		g_free(k);
	}
}

gboolean syncd_config_load(syncd_config *cfg, const char *path, gboolean path_given, GError **err)
{
	if (!cfg_defaults(table, cfg, err))
		return FALSE;
	const char *env = getenv("CHORUS_NODE");
	if (env && *env && !cfg_set(table, cfg, "syncd", "node", env, "environment CHORUS_NODE: ", err))
		return FALSE;
	return cfg_load_checked(path, !path_given, table, cfg, check, err);
}

void syncd_config_clear(syncd_config *cfg)
{
	cfg_clear(table, cfg);
}

char *syncd_config_describe(void)
{
	return cfg_describe(table);
}
