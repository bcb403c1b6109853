/* commands.c — the text command language of sync/command (see commands.h
 * and syncd_usage). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "syncd/commands.h"
#include "syncd/root.h"

void syncd_usage(GString *out)
{
	g_string_append(out,
			"sync/command — feed and steer the node's time-conversion service\n"
			"Clocks: node<N>:cpu, node<N>:realtime, node<N>:audio<K>, global, utc; a bare kind\n"
			"(cpu, audio0) means this node.\n"
			"  register CLOCK [FEEDER]        announce a clock you will feed\n"
			"  pair A B mean|lower|upper [NOMINAL [SYSTEMATIC]]\n"
			"                                 how to fit A->B: least squares, lower or upper\n"
			"                                 envelope (one-sided delays), nominal dB/dA (0 = data)\n"
			"  obs A B X Y [X Y ...]          observations: X on A is the same instant as Y on B\n"
			"  reset A B [from=X]             a discontinuity: forget the pair's observations (X: where the run after it starts, on A)\n"
			"  root [N]                       show, or set, the (preferred) global root node\n"
			"  help                           this text\n");
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || errno)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_clock(syncd *s, const char *text, sync_clock_id *id, GString *reply)
{
	const char *why = NULL;
	if (sync_clock_parse(text, s->cfg.node, id, &why) < 0) {
		g_string_append_printf(reply, "bad clock \"%s\": %s", text, why);
		return -EINVAL;
	}
	if (id->kind != SYNC_KIND_GLOBAL && id->kind != SYNC_KIND_UTC && id->node == UINT32_MAX) {
		g_string_append_printf(reply, "bad clock \"%s\": node 4294967295 is the wire's \"no node\"", text);
		return -EINVAL;
	}
	return 0;
}

/* A clock a client may feed: not global, which syncd derives from the
 * root's cpu clock and never takes from a client. */
static int parse_fed_clock(syncd *s, const char *text, sync_clock_id *id, GString *reply)
{
	if (parse_clock(s, text, id, reply) < 0)
		return -EINVAL;
	if (id->kind == SYNC_KIND_GLOBAL) {
		g_string_append_printf(reply, "bad clock \"%s\": global is derived from the root's cpu clock, never fed", text);
		return -EINVAL;
	}
	if (id->kind == SYNC_KIND_UTC) {
		g_string_append_printf(reply, "bad clock \"%s\": utc is derived from the nodes' disciplined realtime clocks, never fed",
				       text);
		return -EINVAL;
	}
	return 0;
}

static int cmd_obs(syncd *s, gchar **argv, int argc, int64_t now_ns, GString *reply)
{
	sync_clock_id a, b;
	const char *why = NULL;
	if (argc < 5 || (argc - 3) % 2) {
		g_string_append(reply, "usage: obs A B X Y [X Y ...]");
		return -EINVAL;
	}
	if (parse_clock(s, argv[1], &a, reply) < 0 || parse_clock(s, argv[2], &b, reply) < 0)
		return -EINVAL;
	int added = 0;
	for (int i = 3; i + 1 < argc; i += 2) {
		int64_t x, y;
		if (parse_i64(argv[i], &x) < 0 || parse_i64(argv[i + 1], &y) < 0) {
			g_string_append_printf(reply, "observation %d: \"%s %s\" is not two integers", (i - 3) / 2 + 1,
					       argv[i], argv[i + 1]);
			return -EINVAL;
		}
		int rc = syncd_pairs_observe(s->pairs, a, b, x, y, now_ns, &why);
		if (rc < 0) {
			g_string_append_printf(reply, "observation %d refused: %s (%d taken before it)",
					       (i - 3) / 2 + 1, why, added);
			return rc;
		}
		added++;
	}
	g_string_append_printf(reply, "%d observation%s added", added, added == 1 ? "" : "s");
	return 0;
}

static int cmd_pair(syncd *s, gchar **argv, int argc, GString *reply)
{
	sync_clock_id a, b;
	sync_fit_mode mode;
	double nominal = 0;
	const char *why = NULL;
	double systematic = 0;
	if (argc < 4 || argc > 6) {
		g_string_append(reply, "usage: pair A B mean|lower|upper [NOMINAL [SYSTEMATIC]]");
		return -EINVAL;
	}
	if (parse_clock(s, argv[1], &a, reply) < 0 || parse_clock(s, argv[2], &b, reply) < 0)
		return -EINVAL;
	if (!strcmp(argv[3], "mean"))
		mode = SYNC_FIT_MEAN;
	else if (!strcmp(argv[3], "lower"))
		mode = SYNC_FIT_LOWER;
	else if (!strcmp(argv[3], "upper"))
		mode = SYNC_FIT_UPPER;
	else {
		g_string_append_printf(reply, "bad fit mode \"%s\" (mean, lower or upper)", argv[3]);
		return -EINVAL;
	}
	if (argc >= 5) {
		char *end;
		nominal = strtod(argv[4], &end);
		if (end == argv[4] || *end) {
			g_string_append_printf(reply, "bad nominal slope \"%s\"", argv[4]);
			return -EINVAL;
		}
	}
	if (argc == 6) {
		char *end;
		systematic = strtod(argv[5], &end);
		if (end == argv[5] || *end || !(systematic >= 0) || !isfinite(systematic)) {
			g_string_append_printf(reply, "bad systematic standard deviation \"%s\" (a number >= 0 in B's units)",
					       argv[5]);
			return -EINVAL;
		}
	}
	int rc = syncd_pairs_configure(s->pairs, a, b, mode, nominal, &why);
	if (rc == 0)
		rc = syncd_pairs_set_systematic(s->pairs, a, b, systematic, &why);
	if (rc < 0) {
		g_string_append(reply, why);
		return rc;
	}
	g_string_append_printf(reply, "pair %s %s fitted by %s", argv[1], argv[2], argv[3]);
	if (systematic > 0)
		g_string_append_printf(reply, ", systematic s.d. %.6g", systematic);
	return 0;
}

static int cmd_root(syncd *s, gchar **argv, int argc, int64_t now_ns, GString *reply)
{
	int64_t n;
	if (argc == 1) {
		g_string_append_printf(reply, "root node%u%s", syncd_root_node(s->root),
				       syncd_root_have_global(s->root) ? "" : " (global not known yet)");
		return 0;
	}
	if (argc != 2 || parse_i64(argv[1], &n) < 0 || n < 0 || n > (int64_t)UINT32_MAX - 1) {
		g_string_append(reply, "usage: root [NODE]");
		return -EINVAL;
	}
	if (n != s->cfg.node) {
		/* A remote root's definition of global arrives in its advertisements. */
		if (!s->cfg.rbs) {
			g_string_append_printf(reply, "node%" G_GINT64_FORMAT " is not this node (node%" G_GINT64_FORMAT ") and RBS is off: a remote root needs network synchronization",
					       n, s->cfg.node);
			return -EOPNOTSUPP;
		}
		syncd_root_prefer(s->root, n);
		g_string_append_printf(reply, "preferred root node%" G_GINT64_FORMAT " (used while it is alive; now root node%u)", n, syncd_root_node(s->root));
		return 0;
	}
	syncd_root_prefer(s->root, n);
	syncd_root_take(s->root, now_ns);
	g_string_append_printf(reply, "root node%u from now", syncd_root_node(s->root));
	return 0;
}

int syncd_command(syncd *s, const dev_creds *who, const char *line, int64_t now_ns, GString *reply)
{
	gchar **argv = g_strsplit_set(line, " \t\r\n", -1);
	int argc = 0, rc = 0;
	/* Drop empty tokens from repeated blanks. */
	for (int i = 0; argv[i]; i++)
		if (*argv[i])
			argv[argc++] = argv[i];
		else
			g_free(argv[i]);
	argv[argc] = NULL;
	if (argc == 0) {
		g_string_append(reply, "empty command; try help");
		rc = -EINVAL;
	} else if (!strcmp(argv[0], "obs")) {
		rc = cmd_obs(s, argv, argc, now_ns, reply);
	} else if (!strcmp(argv[0], "pair")) {
		rc = cmd_pair(s, argv, argc, reply);
	} else if (!strcmp(argv[0], "register")) {
		sync_clock_id id;
		if (argc < 2 || argc > 3) {
			g_string_append(reply, "usage: register CLOCK [FEEDER]");
			rc = -EINVAL;
		} else if ((rc = parse_fed_clock(s, argv[1], &id, reply)) == 0) {
			int known = syncd_pairs_register(s->pairs, id, argc == 3 ? argv[2] : NULL, who ? who->pid : 0, now_ns);
			g_string_append_printf(reply, "%s %s", argv[1], known ? "re-registered" : "registered");
		}
	} else if (!strcmp(argv[0], "reset")) {
		sync_clock_id a, b;
		int64_t from = 0;
		char *end = NULL;
		if (argc == 4 && g_str_has_prefix(argv[3], "from=")) {
			errno = 0;
			from = g_ascii_strtoll(argv[3] + 5, &end, 10);
		}
		if (argc != 3 && !(argc == 4 && end && end != argv[3] + 5 && !*end && errno == 0 && from >= 0)) {
			g_string_append(reply, "usage: reset A B [from=X] (X: the first x of the run after the break, on A)");
			rc = -EINVAL;
		} else if ((rc = parse_clock(s, argv[1], &a, reply)) == 0 &&
			   (rc = parse_clock(s, argv[2], &b, reply)) == 0) {
			rc = syncd_pairs_reset_from(s->pairs, a, b, argc == 4 ? &from : NULL);
			g_string_append_printf(reply, rc ? "no pair %s %s" : "pair %s %s reset", argv[1], argv[2]);
		}
	} else if (!strcmp(argv[0], "root")) {
		rc = cmd_root(s, argv, argc, now_ns, reply);
	} else if (!strcmp(argv[0], "help")) {
		syncd_usage(reply);
	} else {
		g_string_append_printf(reply, "unknown command \"%s\"; try help", argv[0]);
		rc = -EINVAL;
	}
	g_strfreev(argv);
	s->commands++;
	if (rc < 0)
		s->bad_commands++;
	return rc;
}
