/* synctool — look at and use the node's time conversions from the shell.
 *
 *   synctool clocks                   registered clocks, feeders, fit quality
 *   synctool ticker                   every conversion syncd publishes
 *   synctool convert FROM TO VALUE…   convert values (or "-": one per line on
 *                                     stdin); prints "value ± standard error"
 *   synctool now CLOCK                the current time on CLOCK
 *   synctool --node N …               the same of node N (its chorus-proxy)
 *
 * Clock names: node3:cpu, node3:realtime, node3:audio0, global; a bare kind
 * (cpu, audio0) means the node syncd runs on.  Exit status: 0 ok, 1 a
 * conversion failed (the reason is printed), 2 usage or syncd unreachable.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdev/link.h"
#include "libdev/remote.h"
#include "libsync/graph.h"
#include "libsync/now.h"
#include "libsync/ticker_read.h"
#include "libsync/ticker_text.h"
#include "libsync/ticker_wire.h"

#define TIMEOUT_MS 2000

static int print_status(const char *dev)
{
	GByteArray *b = g_byte_array_new();
	int rc = dev_status_read_sync(dev, FALSE, b, TIMEOUT_MS);
	if (rc < 0)
		fprintf(stderr, "synctool: %s: %s\n", dev, (char *)b->data);
	else
		fwrite(b->data, 1, b->len, stdout);
	g_byte_array_unref(b);
	return rc < 0 ? 2 : 0;
}

typedef struct {
	sync_graph *g;
	sync_ticker_head h;
} ticker;

/* Read the whole ticker (every part) into a, saying why not on stderr. */
static int fetch(sync_ticker_asm *a)
{
	char why[300];
	if (sync_ticker_fetch(TIMEOUT_MS, a, why, sizeof why) < 0) {
		fprintf(stderr, "synctool: %s\n", why);
		return -1;
	}
	return 0;
}

static int load(ticker *t)
{
	char why[200];
	size_t n;
	sync_ticker_asm *a = sync_ticker_asm_new();
	if (fetch(a) < 0) {
		sync_ticker_asm_free(a);
		return -1;
	}
	sync_graph_params p;
	sync_graph_params_default(&p);
	t->g = sync_graph_new(&p);
	t->h = *sync_ticker_asm_head(a);
	const sync_ticker_entry *e = sync_ticker_asm_entries(a, &n);
	sync_ticker_entries_to_graph(e, n, t->g, NULL, why, sizeof why);
	sync_ticker_asm_free(a);
	return 0;
}

/* synctool ticker: every conversion, from the binary parts, in the text
 * form's lines (the text form itself stops at libdev's message size). */
static int cmd_ticker(void)
{
	sync_ticker_asm *a = sync_ticker_asm_new();
	if (fetch(a) < 0) {
		sync_ticker_asm_free(a);
		return 2;
	}
	const sync_ticker_head *h = sync_ticker_asm_head(a);
	size_t n;
	const sync_ticker_entry *e = sync_ticker_asm_entries(a, &n);
	GString *out = g_string_new(NULL);
	sync_ticker_format_head(h, out);
	for (size_t i = 0; i < n; i++)
		sync_ticker_format_entry(&e[i], h->now_ns, out);
	const char *bad;
	size_t skipped = sync_ticker_asm_skipped(a, &bad);
	int rc = 0;
	if (fwrite(out->str, 1, out->len, stdout) != out->len || fflush(stdout) != 0) {
		fprintf(stderr, "synctool: cannot write the ticker: %s\n", g_strerror(errno));
		rc = 2;
	}
	if (skipped)
		fprintf(stderr, "synctool: %zu malformed entries skipped, last: %s\n", skipped, bad);
	g_string_free(out, TRUE);
	sync_ticker_asm_free(a);
	return rc;
}

static int parse_clock(const ticker *t, const char *name, sync_clock_id *id)
{
	const char *why;
	if (sync_clock_parse(name, t->h.node, id, &why) < 0) {
		fprintf(stderr, "synctool: clock \"%s\": %s\n", name, why);
		return -1;
	}
	return 0;
}

/* Parse an integer time, optionally with a fraction ("123.25" frames). */
static int parse_value(const char *s, sync_tval *v)
{
	char *end;
	errno = 0;
	long long i = strtoll(s, &end, 10);
	if (end == s || errno)
		return -1;
	double f = 0;
	if (*end == '.') {
		char *e2;
		f = strtod(end, &e2);
		if (e2 == end || *e2)
			return -1;
		if (i < 0 || (i == 0 && *s == '-'))
			f = -f;
	} else if (*end) {
		return -1;
	}
	v->i = i + (long long)llround(f);
	v->f = f - llround(f);
	return 0;
}

static int convert_one(ticker *t, sync_clock_id from, sync_clock_id to, const char *text, int64_t now_ns)
{
	sync_tval x;
	sync_graph_result r;
	char why[256];
	if (parse_value(text, &x) < 0) {
		fprintf(stderr, "synctool: \"%s\" is not a time (an integer, optionally with a fraction)\n", text);
		return 1;
	}
	int rc = sync_graph_convert(t->g, from, to, x, now_ns, &r, why, sizeof why);
	if (rc < 0) {
		fprintf(stderr, "synctool: %s: %s\n", text, why);
		return 1;
	}
	/* value = i + f with |f| <= 0.5: print the integer and the fraction. */
	int64_t i = r.value.i;
	double f = r.value.f;
	if (f < 0) {
		i -= 1;
		f += 1;
	}
	printf("%" PRId64 ".%03d ± %.3f (%u hop%s%s)\n", i, (int)fmin(999, floor(f * 1000)), sqrt(r.var), r.hops,
	       r.hops == 1 ? "" : "s", r.flags & SYNC_GRAPH_EXTRAPOLATED ? ", extrapolated" : "");
	return 0;
}

static int cmd_convert(int argc, char **argv)
{
	ticker t = {0};
	sync_clock_id from, to;
	int bad = 0;
	if (argc < 5) {
		fprintf(stderr, "usage: synctool convert FROM TO VALUE... (or - for stdin)\n");
		return 2;
	}
	if (load(&t) < 0)
		return 2;
	if (parse_clock(&t, argv[2], &from) < 0 || parse_clock(&t, argv[3], &to) < 0) {
		sync_graph_free(t.g);
		return 2;
	}
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	for (int i = 4; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0 && i == 4)
			continue; /* `convert cpu global -- -5`: the values that follow may be negative */
		if (strcmp(argv[i], "-") == 0) {
			char line[256];
			while (fgets(line, sizeof line, stdin)) {
				g_strstrip(line);
				if (*line)
					bad |= convert_one(&t, from, to, line, now_ns);
			}
		} else {
			bad |= convert_one(&t, from, to, argv[i], now_ns);
		}
	}
	sync_graph_free(t.g);
	return bad;
}

static int cmd_now(int argc, char **argv)
{
	ticker t = {0};
	sync_clock_id to;
	char v[32];
	if (argc != 3) {
		fprintf(stderr, "usage: synctool now CLOCK\n");
		return 2;
	}
	if (load(&t) < 0)
		return 2;
	if (parse_clock(&t, argv[2], &to) < 0) {
		sync_graph_free(t.g);
		return 2;
	}
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	snprintf(v, sizeof v, "%" PRId64, now_ns);
	int rc = convert_one(&t, sync_clock_cpu(t.h.node), to, v, now_ns);
	sync_graph_free(t.g);
	return rc;
}

int main(int argc, char **argv)
{
	const char *why;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "synctool: %s\n", why);
		return 2;
	}
	/* --node N: another node's syncd, through its chorus-proxy when the
	 * nodes file lists it (libdev/remote.h), else a simulated node here */
	gboolean remote = FALSE;
	if (argc >= 3 && (!strcmp(argv[1], "--node") || !strcmp(argv[1], "-N"))) {
		char *end;
		unsigned long n = strtoul(argv[2], &end, 10);
		if (*end || !*argv[2] || n > UINT32_MAX) {
			fprintf(stderr, "synctool: --node: '%s' is not a node number\n", argv[2]);
			return 2;
		}
		remote = dev_remote_use_node((uint32_t)n) == 1;
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	if (remote && argc >= 2 && !strcmp(argv[1], "now")) {
		fprintf(stderr, "synctool: now reads this machine's clocks: run it on the node itself\n");
		return 2;
	}
	if (argc >= 2 && !strcmp(argv[1], "clocks"))
		return print_status("sync/clocks");
	if (argc >= 2 && !strcmp(argv[1], "ticker"))
		return cmd_ticker();
	if (argc >= 2 && !strcmp(argv[1], "convert"))
		return cmd_convert(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "now"))
		return cmd_now(argc, argv);
	fprintf(stderr, "usage: synctool [--node N] clocks | ticker | convert FROM TO VALUE... | now CLOCK\n");
	return 2;
}
