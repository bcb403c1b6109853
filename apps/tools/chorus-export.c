/* chorus-export — a global time window of chorus-archive's recordings, one
 * file per node, with a CSV and a JSON of each file's first-frame time,
 * rate in global time and their uncertainties (docs/archive.md §4):
 *
 *   chorus-export --dir /srv/chorus --from 2026-12-01T14:03:00Z --to 2026-12-01T14:04:00Z \
 *                 --nodes 2,4 --clock global -o call/
 *
 * Each file starts at the first frame at or after T0 on that node and ends
 * before T1; frames the archive does not hold are written as zeros (the
 * files stay aligned on their first frames) and listed as gaps.  The times
 * come from the conversions each segment kept (archive/timeline.h).
 * Exit status: 0 every node exported, 1 some node failed, 2 usage.
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/segment.h"
#include "archive/serve.h"
#include "archive/store.h"

typedef struct {
	SNDFILE *sf;
	const archive_index *x;
	const char *path;
	int64_t frames;
	GArray *gaps; /* int64_t pairs */
	int failed;
} exporter;

static void ex_data(void *user, int64_t first, const void *frames, size_t n)
{
	exporter *e = user;
	if (e->failed)
		return;
	if (archive_sf_writef(e->sf, e->x->format, e->x->channels, frames, n) != (sf_count_t)n) {
		fprintf(stderr, "chorus-export: %s: %s\n", e->path, sf_strerror(e->sf));
		e->failed = 1;
	}
	e->frames += (int64_t)n;
}

static void ex_gap(void *user, int64_t from, int64_t to)
{
	exporter *e = user;
	g_array_append_val(e->gaps, from);
	g_array_append_val(e->gaps, to);
	size_t fb = archive_sample_bytes(e->x->format) * e->x->channels;
	void *z = g_malloc0(fb * 4096);
	for (int64_t left = to - from; left > 0 && !e->failed; left -= 4096)
		ex_data(e, 0, z, (size_t)MIN(left, 4096));
	g_free(z);
}

static const archive_read_ops ex_ops = {NULL, ex_data, ex_gap};

/* A number, or null when it is not finite (JSON has no inf or NaN). */
static void add_number(JsonBuilder *jb, double v)
{
	if (isfinite(v))
		json_builder_add_double_value(jb, v);
	else
		json_builder_add_null_value(jb);
}

/* Export one node; appends its CSV row and JSON object.  0 or -1. */
static int export_node(archive_store *s, uint32_t node, uint32_t device, int64_t t0, int64_t t1, const char *outdir,
		       const char *ext, GString *csv, JsonBuilder *jb)
{
	archive_request q = {.node = node, .device = device, .by_time = 1, .from_ns = t0, .to_ns = t1};
	archive_answer a;
	GError *err = NULL;
	if (!archive_resolve(s, &q, &a, &err)) {
		fprintf(stderr, "chorus-export: node%u: %s\n", node, err->message);
		g_error_free(err);
		return -1;
	}
	char *path = g_strdup_printf("%s/node%u-audio%u.%s", outdir, node, device, ext);
	SF_INFO info = {.samplerate = (int)a.x->rate_hz, .channels = (int)a.x->channels};
	info.format = strcmp(ext, "wav") ? archive_sf_format(a.x->format)
					 : SF_FORMAT_WAV | (archive_sample_bytes(a.x->format) == 3 ? SF_FORMAT_PCM_24 : SF_FORMAT_PCM_16);
	exporter e = {.x = a.x, .path = path, .gaps = g_array_new(FALSE, FALSE, sizeof(int64_t))};
	e.sf = sf_open(path, SFM_WRITE, &info);
	int rc = 0;
	if (!e.sf) {
		fprintf(stderr, "chorus-export: %s: %s\n", path, sf_strerror(NULL));
		rc = -1;
		goto out;
	}
	if (a.has_time)
		sf_set_string(e.sf, SF_STR_COMMENT, a.reply);
	if (archive_store_read(s, node, device, a.first, a.last, &ex_ops, &e, &err) < 0) {
		fprintf(stderr, "chorus-export: node%u: %s\n", node, err->message);
		g_error_free(err);
		rc = -1;
	}
	if (sf_close(e.sf) != 0) {
		fprintf(stderr, "chorus-export: %s: closing failed\n", path);
		rc = -1;
	}
	if (e.failed)
		rc = -1;
	if (rc < 0)
		goto out;
	char *base = g_path_get_basename(path);
	double rate_g = a.has_time ? 1e9 / a.when.period_ns : 0;
	GString *gaps = g_string_new(NULL);
	for (guint i = 0; i < e.gaps->len; i += 2)
		g_string_append_printf(gaps, "%s%" PRId64 "-%" PRId64, i ? ";" : "", g_array_index(e.gaps, int64_t, i),
				       g_array_index(e.gaps, int64_t, i + 1));
	char root[16] = ""; /* whose timescale t0 is in (archive/timeline.h) */
	if (a.has_time && a.when.root != ARCHIVE_ROOT_UNKNOWN)
		g_snprintf(root, sizeof root, "%" PRIu32, a.when.root);
	if (a.has_time)
		g_string_append_printf(csv, "%u,%u,%s,%" PRId64 ",%" PRId64 ",%u,%" PRId64 ".%03d,%.1f,%.4f,%.4f,%.6f,%s,%s\n",
				       node, device, base, a.first, e.frames, a.x->rate_hz, a.when.global_ns,
				       (int)(a.when.frac_ns * 1000), a.when.se_ns, a.when.period_ns, a.when.period_se_ns, rate_g,
				       gaps->str, root);
	else
		g_string_append_printf(csv, "%u,%u,%s,%" PRId64 ",%" PRId64 ",%u,,,,,,%s,\n", node, device, base, a.first,
				       e.frames, a.x->rate_hz, gaps->str);
	json_builder_begin_object(jb);
	json_builder_set_member_name(jb, "node");
	json_builder_add_int_value(jb, node);
	json_builder_set_member_name(jb, "device");
	json_builder_add_int_value(jb, device);
	json_builder_set_member_name(jb, "file");
	json_builder_add_string_value(jb, base);
	json_builder_set_member_name(jb, "first_frame");
	json_builder_add_int_value(jb, a.first);
	json_builder_set_member_name(jb, "frames");
	json_builder_add_int_value(jb, e.frames);
	json_builder_set_member_name(jb, "rate_hz");
	json_builder_add_int_value(jb, a.x->rate_hz);
	if (a.has_time) {
		json_builder_set_member_name(jb, "t0_global_ns");
		json_builder_add_int_value(jb, a.when.global_ns);
		json_builder_set_member_name(jb, "t0_frac_ns");
		add_number(jb, a.when.frac_ns);
		json_builder_set_member_name(jb, "t0_se_ns");
		add_number(jb, a.when.se_ns);
		json_builder_set_member_name(jb, "period_ns");
		add_number(jb, a.when.period_ns);
		json_builder_set_member_name(jb, "period_se_ns");
		add_number(jb, a.when.period_se_ns);
		json_builder_set_member_name(jb, "rate_global_hz");
		add_number(jb, rate_g);
		if (a.when.root != ARCHIVE_ROOT_UNKNOWN) {
			json_builder_set_member_name(jb, "t0_root");
			json_builder_add_int_value(jb, a.when.root);
		}
	}
	json_builder_set_member_name(jb, "gaps");
	json_builder_begin_array(jb);
	for (guint i = 0; i < e.gaps->len; i += 2) {
		json_builder_begin_array(jb);
		json_builder_add_int_value(jb, g_array_index(e.gaps, int64_t, i));
		json_builder_add_int_value(jb, g_array_index(e.gaps, int64_t, i + 1));
		json_builder_end_array(jb);
	}
	json_builder_end_array(jb);
	json_builder_end_object(jb);
	fprintf(stderr, "chorus-export: %s: frames [%" PRId64 ", %" PRId64 "), %u gap%s\n", path, a.first, a.last,
		e.gaps->len / 2, e.gaps->len == 2 ? "" : "s");
	g_string_free(gaps, TRUE);
	g_free(base);
out:
	g_array_free(e.gaps, TRUE);
	g_free(path);
	return rc;
}

static gboolean write_text(const char *path, const char *text)
{
	GError *err = NULL;
	if (!g_file_set_contents(path, text, -1, &err)) {
		fprintf(stderr, "chorus-export: %s\n", err->message);
		g_error_free(err);
		return FALSE;
	}
	return TRUE;
}

int main(int argc, char **argv)
{
	char *dir = NULL, *from = NULL, *to = NULL, *nodes = NULL, *clock = NULL, *out = NULL, *format = NULL;
	gint64 device = 0;
	GOptionEntry entries[] = {
		{"dir", 'A', 0, G_OPTION_ARG_FILENAME, &dir, "archive directory (default /var/lib/chorus/archive)", "DIR"},
		{"from", 0, 0, G_OPTION_ARG_STRING, &from, "start, global time (ns, ISO 8601 or HH:MM:SS[.frac] today UTC)", "T0"},
		{"to", 0, 0, G_OPTION_ARG_STRING, &to, "end (exclusive)", "T1"},
		{"nodes", 0, 0, G_OPTION_ARG_STRING, &nodes, "nodes to export, e.g. 2,4 (default: every node in DIR)", "LIST"},
		{"device", 'd', 0, G_OPTION_ARG_INT64, &device, "audio device index (default 0)", "K"},
		{"clock", 'c', 0, G_OPTION_ARG_STRING, &clock, "clock of --from/--to: global (the only one)", "CLOCK"},
		{"format", 'f', 0, G_OPTION_ARG_STRING, &format, "flac (default) or wav", "FMT"},
		{"output", 'o', 0, G_OPTION_ARG_FILENAME, &out, "output directory (created)", "DIR"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("- export a global time window of the archive, one file per node");
	g_option_context_add_main_entries(oc, entries, NULL);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "chorus-export: %s\n", err->message);
		return 2;
	}
	g_option_context_free(oc);
	int64_t t0, t1;
	if (!from || !to || !out) {
		fprintf(stderr, "chorus-export: give --from, --to and -o DIR\n");
		return 2;
	}
	if (clock && strcmp(clock, "global")) {
		fprintf(stderr, "chorus-export: --clock %s: the archive exports by global time only\n", clock);
		return 2;
	}
	if (archive_parse_time(from, &t0) < 0 || archive_parse_time(to, &t1) < 0) {
		fprintf(stderr, "chorus-export: --from/--to must be integers (ns), HH:MM:SS.frac or ISO 8601\n");
		return 2;
	}
	if (t1 <= t0) {
		fprintf(stderr, "chorus-export: --to must be after --from\n");
		return 2;
	}
	const char *ext = format ? format : "flac";
	if (strcmp(ext, "flac") && strcmp(ext, "wav")) {
		fprintf(stderr, "chorus-export: --format %s: expected flac or wav\n", ext);
		return 2;
	}
	archive_store *s = archive_store_open(dir ? dir : "/var/lib/chorus/archive", FALSE, &err);
	if (!s) {
		fprintf(stderr, "chorus-export: %s\n", err->message);
		return 1;
	}
	GArray *list = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	if (nodes) {
		char **v = g_strsplit(nodes, ",", -1);
		for (char **p = v; *p; p++) {
			char *end;
			long long n = strtoll(*p, &end, 10);
			if (end == *p || *end || n < 0 || n > UINT32_MAX) {
				fprintf(stderr, "chorus-export: --nodes: \"%s\" is not a node number\n", *p);
				return 2;
			}
			uint32_t u = (uint32_t)n;
			g_array_append_val(list, u);
		}
		g_strfreev(v);
	} else {
		for (guint i = 0; i < archive_store_count(s); i++) {
			uint32_t n = archive_store_entry(s, i)->x->node;
			gboolean seen = FALSE;
			for (guint k = 0; k < list->len; k++)
				seen |= g_array_index(list, uint32_t, k) == n;
			if (!seen)
				g_array_append_val(list, n);
		}
	}
	if (g_mkdir_with_parents(out, 0755) < 0) {
		fprintf(stderr, "chorus-export: %s: %s\n", out, g_strerror(errno));
		return 1;
	}
	GString *csv = g_string_new("node,device,file,first_frame,frames,rate_hz,t0_global_ns,t0_se_ns,period_ns,"
				    "period_se_ns,rate_global_hz,gaps,t0_root\n");
	JsonBuilder *jb = json_builder_new();
	json_builder_begin_object(jb);
	json_builder_set_member_name(jb, "from_global_ns");
	json_builder_add_int_value(jb, t0);
	json_builder_set_member_name(jb, "to_global_ns");
	json_builder_add_int_value(jb, t1);
	json_builder_set_member_name(jb, "files");
	json_builder_begin_array(jb);
	int rc = list->len ? 0 : 1;
	if (!list->len)
		fprintf(stderr, "chorus-export: %s holds no segment\n", archive_store_dir(s));
	for (guint k = 0; k < list->len; k++)
		if (export_node(s, g_array_index(list, uint32_t, k), (uint32_t)device, t0, t1, out, ext, csv, jb) < 0)
			rc = 1;
	json_builder_end_array(jb);
	json_builder_end_object(jb);
	JsonGenerator *gen = json_generator_new();
	JsonNode *root = json_builder_get_root(jb);
	json_generator_set_root(gen, root);
	json_generator_set_pretty(gen, TRUE);
	char *json = json_generator_to_data(gen, NULL);
	char *cp = g_strdup_printf("%s/times.csv", out), *jp = g_strdup_printf("%s/times.json", out);
	if (!write_text(cp, csv->str) || !write_text(jp, json))
		rc = 1;
	g_free(cp);
	g_free(jp);
	g_free(json);
	json_node_unref(root);
	g_object_unref(gen);
	g_object_unref(jb);
	g_string_free(csv, TRUE);
	g_array_free(list, TRUE);
	archive_store_free(s);
	g_free(dir);
	g_free(from);
	g_free(to);
	g_free(nodes);
	g_free(clock);
	g_free(out);
	g_free(format);
	return rc;
}
