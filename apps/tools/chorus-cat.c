/* chorus-cat — print or follow a chorus device (EmStar's `cat` on a device
 * file).  With no device, list the devices under the run directory.
 *
 * The device's pattern comes from its HELLO: a status device is printed
 * (followed with -f), a packet or sensor device is followed, a command
 * device prints its usage.  See docs/man/chorus-cat.1. */
#include <errno.h>
#include <glib-unix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "libdev/dev.h"

static gboolean opt_follow, opt_binary, opt_raw;
static gint64 opt_from = G_MININT64, opt_to = G_MAXINT64;
static gint opt_count = -1, opt_timeout = 2000;
static gchar *opt_filter;

static GOptionEntry entries[] = {
	{"follow", 'f', 0, G_OPTION_ARG_NONE, &opt_follow, "Status: print again after every change", NULL},
	{"binary", 'b', 0, G_OPTION_ARG_NONE, &opt_binary, "Status: the binary form, as hex; packets as hex", NULL},
	{"raw", 'r', 0, G_OPTION_ARG_NONE, &opt_raw, "Sensor/packet: raw bytes to stdout, notes to stderr", NULL},
	{"from", 0, 0, G_OPTION_ARG_INT64, &opt_from, "Sensor: first index (default: the service's next)", "N"},
	{"to", 0, 0, G_OPTION_ARG_INT64, &opt_to, "Sensor: one past the last index (default: open-ended)", "N"},
	{"count", 'n', 0, G_OPTION_ARG_INT, &opt_count, "Stop after N packets or N status updates", "N"},
	{"filter", 0, 0, G_OPTION_ARG_STRING, &opt_filter, "Packet: subscription filter (prefix by default)", "TEXT"},
	{"timeout", 't', 0, G_OPTION_ARG_INT, &opt_timeout, "Milliseconds to wait for a reply (default 2000)", "MS"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

static GMainLoop *loop;
static const char *dev_name;
static int exit_code;
static int remaining;

static void hexdump(FILE *f, const void *data, size_t len)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < len; i += 16) {
		fprintf(f, "%08zx ", i);
		for (size_t k = i; k < i + 16 && k < len; k++)
			fprintf(f, " %02x", p[k]);
		fputc('\n', f);
	}
}

static gboolean printable(const char *s, size_t len)
{
	if (!g_utf8_validate(s, (gssize)len, NULL))
		return FALSE;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\n' && s[i] != '\t' && s[i] != '\r')
			return FALSE;
	return TRUE;
}

static void print_text(const char *s, size_t len)
{
	fwrite(s, 1, len, stdout);
	if (len == 0 || s[len - 1] != '\n')
		fputc('\n', stdout);
	fflush(stdout);
}

static void count_one(void)
{
	if (remaining > 0 && --remaining == 0)
		g_main_loop_quit(loop);
}

static void on_state(void *user, gboolean up, int err)
{
	static gboolean was_down;
	if (up && was_down)
		fprintf(stderr, "chorus-cat: %s: reconnected\n", dev_name);
	was_down = !up;
	if (!up)
		fprintf(stderr, "chorus-cat: %s: service not available (%s); waiting for it\n", dev_name,
			g_strerror(-err));
}

static void on_status(void *user, int err, const char *data, size_t len)
{
	if (err < 0) {
		fprintf(stderr, "chorus-cat: %s: %s\n", dev_name, data);
	} else if (opt_binary) {
		hexdump(stdout, data, len);
		fflush(stdout);
	} else {
		print_text(data, len);
	}
	count_one();
}

static void on_packet(void *user, const char *msg, size_t len, uint32_t dropped)
{
	if (dropped)
		fprintf(stderr, "chorus-cat: %s: %u message(s) dropped (reader too slow)\n", dev_name, dropped);
	if (opt_raw) {
		fwrite(msg, 1, len, stdout);
		fflush(stdout);
	} else if (!opt_binary && printable(msg, len)) {
		print_text(msg, len);
	} else {
		hexdump(stdout, msg, len);
		fflush(stdout);
	}
	count_one();
}

static uint32_t sensor_item_size;

static void s_opened(void *u, int64_t first, int64_t last, uint32_t isz, const void *reply, size_t len)
{
	sensor_item_size = isz;
	FILE *f = opt_raw ? stderr : stdout;
	if (last == DEV_SENSOR_OPEN_END)
		fprintf(f, "open %" G_GINT64_FORMAT " .. (open-ended), %u bytes per item\n", first, isz);
	else
		fprintf(f, "open %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT ", %u bytes per item\n", first, last, isz);
	if (len)
		fprintf(f, "reply %zu bytes\n", len);
}

static void s_data(void *u, int64_t first, const void *items, size_t n)
{
	if (opt_raw) {
		fwrite(items, sensor_item_size, n, stdout);
	} else {
		printf("data %" G_GINT64_FORMAT " +%zu\n", first, n);
		fflush(stdout);
	}
}

static void s_gap(void *u, int64_t from, int64_t to)
{
	fprintf(opt_raw ? stderr : stdout, "gap %" G_GINT64_FORMAT " .. %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT " items lost)\n", from, to, to - from);
}

static void s_end(void *u, int64_t next)
{
	fprintf(opt_raw ? stderr : stdout, "end %" G_GINT64_FORMAT "\n", next);
	g_main_loop_quit(loop);
}

static void s_error(void *u, int err, const char *msg)
{
	fprintf(stderr, "chorus-cat: %s: %s\n", dev_name, msg);
	exit_code = 1;
	g_main_loop_quit(loop);
}

static gboolean on_signal(gpointer unused)
{
	g_main_loop_quit(loop);
	return G_SOURCE_CONTINUE;
}

/* g_ptr_array_sort passes pointers to the elements. */
static gint cmp_names(gconstpointer a, gconstpointer b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* List the sockets under dir (relative names from `rel`), recursively. */
/* TRUE when the socket at path greets as audiod's memfd ring server
 * ("CHRING 1 …": it hands out a descriptor, not libdev messages). */
/* audiod's shared-memory devices greet with a text and descriptors:
 * 1 for the ring (bulk readers, "CHRING 1 "), 2 for its followers
 * ("CHFOLLOW "), 0 for anything else. */
static int ring_greeting(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0); /* audiod/ringserver.c's */
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (fd < 0 || strlen(path) >= sizeof a.sun_path) {
		if (fd >= 0)
			close(fd);
		return FALSE;
	}
	strcpy(a.sun_path, path);
	int ms = opt_timeout > 0 && opt_timeout < 1000 ? opt_timeout : 1000;
	struct timeval tv = {ms / 1000, (ms % 1000) * 1000L};
	char buf[16] = "";
	ssize_t n = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) == 0 &&
				    connect(fd, (struct sockaddr *)&a, sizeof a) == 0
			    ? recv(fd, buf, 9, 0)
			    : -1;
	close(fd); /* any descriptor passed with the greeting is dropped unread */
	if (n == 9 && !memcmp(buf, "CHRING 1 ", 9))
		return 1;
	return n == 9 && !memcmp(buf, "CHFOLLOW ", 9) ? 2 : 0;
}

static void list_dir(const char *dir, const char *rel, int *n)
{
	GDir *d = g_dir_open(dir, 0, NULL);
	if (!d)
		return;
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	const char *e;
	while ((e = g_dir_read_name(d)))
		g_ptr_array_add(names, g_strdup(e));
	g_dir_close(d);
	g_ptr_array_sort(names, cmp_names);
	for (guint i = 0; i < names->len; i++) {
		const char *nm = names->pdata[i];
		char *path = g_build_filename(dir, nm, NULL);
		char *r = *rel ? g_strdup_printf("%s/%s", rel, nm) : g_strdup(nm);
		struct stat st;
		int kind;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			list_dir(path, r, n);
		} else if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
			GError *err = NULL;
			dev_link *l = dev_name_check(r, NULL) == 0 ? dev_link_open(r, opt_timeout, &err) : NULL;
			if (l) {
				printf("%-40s %s\n", r, dev_pattern_name(dev_link_pattern(l)));
				dev_link_close(l);
			} else if ((kind = ring_greeting(path)) == 1) {
				printf("%-40s ring (audiod's shared memory for bulk readers; read it with audioget)\n", r);
			} else if (kind == 2) {
				printf("%-40s follow (the ring, woken by the capture thread; audiod/follower.h)\n", r);
			} else {
				printf("%-40s (not answering: %s)\n", r,
				       err ? g_strerror(err->code) : "name outside the device naming rules");
			}
			g_clear_error(&err);
			(*n)++;
		}
		g_free(r);
		g_free(path);
	}
	g_ptr_array_unref(names);
}

static int list_devices(void)
{
	char dir[4096];
	const char *why;
	if (dev_run_dir(dir, sizeof dir, &why) < 0) {
		fprintf(stderr, "chorus-cat: %s\n", why);
		return 2;
	}
	if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
		fprintf(stderr, "chorus-cat: run directory %s does not exist (no service has started?)\n", dir);
		return 1;
	}
	int n = 0;
	list_dir(dir, "", &n);
	if (!n)
		fprintf(stderr, "chorus-cat: no devices under %s\n", dir);
	return 0;
}

/* List the devices node N's chorus-proxy exports, with their patterns. */
static int list_remote(uint32_t node)
{
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	char why[400];
	int n = dev_remote_list(node, opt_timeout, names, why, sizeof why);
	if (n < 0) {
		fprintf(stderr, "chorus-cat: node%u: %s\n", node, why);
		g_ptr_array_unref(names);
		return 1;
	}
	for (guint i = 0; i < names->len; i++) {
		char *r = g_strdup_printf("node%u:%s", node, (char *)names->pdata[i]);
		GError *err = NULL;
		dev_link *l = dev_link_open(r, opt_timeout, &err);
		if (l)
			printf("%-40s %s\n", r, dev_pattern_name(dev_link_pattern(l)));
		else
			printf("%-40s (not answering: %s)\n", r, g_strerror(err->code));
		dev_link_close(l);
		g_clear_error(&err);
		g_free(r);
	}
	if (!n)
		fprintf(stderr, "chorus-cat: node%u exports no devices\n", node);
	g_ptr_array_unref(names);
	return 0;
}

static int cat_status_once(void)
{
	GByteArray *out = g_byte_array_new();
	int e = dev_status_read_sync(dev_name, opt_binary, out, opt_timeout);
	if (e < 0) {
		fprintf(stderr, "chorus-cat: %s: %.*s\n", dev_name, (int)out->len, out->data);
		g_byte_array_unref(out);
		return 1;
	}
	if (opt_binary)
		hexdump(stdout, out->data, out->len);
	else
		print_text((const char *)out->data, out->len);
	g_byte_array_unref(out);
	return 0;
}

int main(int argc, char **argv)
{
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("[DEVICE] — print or follow a chorus device");
	g_option_context_add_main_entries(oc, entries, NULL);
	g_option_context_set_description(oc, "With no DEVICE, list the devices under the run directory "
					     "($CHORUS_RUN, with sim/node<N> when CHORUS_NODE is set); with nodeN: (or "
					     "CHORUS_REMOTE=N), the devices node N's chorus-proxy exports.  DEVICE may be "
					     "nodeN:NAME, a device of node N through its chorus-proxy.");
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "chorus-cat: %s\n", err->message);
		return 2;
	}
	g_option_context_free(oc);
	const char *remote = g_getenv("CHORUS_REMOTE");
	if (argc < 2 && remote && *remote)
		return list_remote((uint32_t)strtoul(remote, NULL, 10));
	if (argc < 2)
		return list_devices();
	size_t al = strlen(argv[1]);
	if (g_str_has_prefix(argv[1], "node") && al > 5 && argv[1][al - 1] == ':') { /* "node3:": its devices */
		char *end;
		unsigned long nd = strtoul(argv[1] + 4, &end, 10);
		if (end != argv[1] + al - 1 || nd > UINT32_MAX) {
			fprintf(stderr, "chorus-cat: %s: a remote node is nodeN:\n", argv[1]);
			return 2;
		}
		return list_remote((uint32_t)nd);
	}
	if (argc > 2) {
		fprintf(stderr, "chorus-cat: one device at a time\n");
		return 2;
	}
	dev_name = argv[1];
	dev_link *l = dev_link_open(dev_name, opt_timeout, &err);
	if (!l) {
		fprintf(stderr, "chorus-cat: %s\n", err->message);
		return 1;
	}
	dev_pattern pat = dev_link_pattern(l);
	if (pat == DEV_PATTERN_COMMAND) {
		GByteArray *out = g_byte_array_new();
		int e = dev_link_usage(l, out, opt_timeout);
		if (e == 0)
			print_text((const char *)out->data, out->len);
		else
			fprintf(stderr, "chorus-cat: %s: %.*s\n", dev_name, (int)out->len, out->data);
		dev_link_close(l);
		g_byte_array_unref(out);
		return e ? 1 : 0;
	}
	dev_link_close(l);
	if (pat == DEV_PATTERN_QUERY) {
		fprintf(stderr, "chorus-cat: %s is a query device: write a request with chorus-ctl\n", dev_name);
		return 1;
	}
	if (pat == DEV_PATTERN_STATUS && !opt_follow)
		return cat_status_once();

	loop = g_main_loop_new(NULL, FALSE);
	remaining = opt_count;
	g_unix_signal_add(SIGINT, on_signal, NULL);
	g_unix_signal_add(SIGTERM, on_signal, NULL);
	void *obj = NULL;
	if (pat == DEV_PATTERN_STATUS) {
		obj = dev_status_reader_new(dev_name, opt_binary, NULL, on_status, on_state, NULL, &err);
	} else if (pat == DEV_PATTERN_PACKET) {
		obj = dev_packet_sub_new(dev_name, opt_filter, opt_filter ? strlen(opt_filter) : 0, NULL, on_packet,
					 on_state, NULL, &err);
	} else if (pat == DEV_PATTERN_SENSOR) {
		static const dev_sensor_reader_ops ops = {s_opened, s_data, s_gap, s_end, s_error, on_state};
		uint32_t flags = opt_from == G_MININT64 ? DEV_SENSOR_FROM_NEXT : 0;
		obj = dev_sensor_reader_new(dev_name, opt_from == G_MININT64 ? 0 : opt_from, opt_to, flags, NULL, 0,
					    NULL, &ops, NULL, &err);
	} else {
		fprintf(stderr, "chorus-cat: %s: unknown device pattern %d\n", dev_name, pat);
		return 1;
	}
	if (!obj) {
		fprintf(stderr, "chorus-cat: %s\n", err->message);
		return 1;
	}
	g_main_loop_run(loop);
	if (pat == DEV_PATTERN_STATUS)
		dev_status_reader_free(obj);
	else if (pat == DEV_PATTERN_PACKET)
		dev_packet_sub_free(obj);
	else
		dev_sensor_reader_free(obj);
	g_main_loop_unref(loop);
	return exit_code;
}
