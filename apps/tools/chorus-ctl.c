/* chorus-ctl — write a command or query to a chorus device and print the
 * reply (EmStar's `echocat`).  The exit code comes from the service:
 *   0        the service answered status 0
 *   1..124   the service answered status s != 0 (|s|, capped at 124: by
 *            convention s is a negative errno, e.g. -EINVAL -> 22), or the
 *            device refused the request with an error (its errno, e.g.
 *            EPERM -> 1)
 *   125      chorus-ctl itself failed: bad usage, no such device, not a
 *            command/query/packet device, timeout, protocol error
 * See docs/man/chorus-ctl.1. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libdev/dev.h"

#define EXIT_TOOL 125

static gboolean opt_stdin, opt_quiet;
static gint opt_timeout = 5000;

static GOptionEntry entries[] = {
	{"stdin", 's', 0, G_OPTION_ARG_NONE, &opt_stdin, "Query/packet: read the request bytes from stdin", NULL},
	{"quiet", 'q', 0, G_OPTION_ARG_NONE, &opt_quiet, "Print nothing on success", NULL},
	{"timeout", 't', 0, G_OPTION_ARG_INT, &opt_timeout, "Milliseconds to wait for the reply (default 5000)", "MS"},
	{NULL, 0, 0, 0, NULL, NULL, NULL},
};

static int code_of(int v)
{
	if (v == 0)
		return 0;
	if (v == INT32_MIN)
		return 124;
	v = abs(v);
	return v > 124 ? 124 : v;
}

static void print_reply(FILE *f, const GByteArray *b)
{
	if (!b->len)
		return; /* b->data may be NULL */
	fwrite(b->data, 1, b->len, f);
	if (b->len && b->data[b->len - 1] != '\n' && isatty(fileno(f)))
		fputc('\n', f);
}

static GByteArray *read_stdin(void)
{
	GByteArray *b = g_byte_array_new();
	uint8_t buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
		g_byte_array_append(b, buf, (guint)n);
	return b;
}

/* Write a packet (PKT_SEND) and wait for OK or ERROR. */
static int send_packet(dev_link *l, const GByteArray *req, GByteArray *out)
{
	GByteArray *m = g_byte_array_new();
	dev_wire_begin(m, DEV_MSG_PKT_SEND, 0, 1);
	dev_wire_bytes(m, req->data, req->len);
	int e = dev_wire_end(m);
	if (e == 0)
		e = dev_link_send(l, m, opt_timeout);
	dev_msg r;
	while (e == 0) {
		e = dev_link_recv(l, m, &r, opt_timeout);
		if (e < 0 || r.id != 1)
			continue;
		if (r.type == DEV_MSG_ERROR) {
			g_byte_array_append(out, (const guint8 *)r.u.error.text, r.u.error.text_len);
			e = -r.u.error.err;
		}
		break;
	}
	g_byte_array_unref(m);
	return e;
}

int main(int argc, char **argv)
{
	GError *err = NULL;
	GOptionContext *oc = g_option_context_new("DEVICE [ARGS…] — write a command or query, print the reply");
	g_option_context_add_main_entries(oc, entries, NULL);
	g_option_context_set_description(oc,
					 "ARGS are joined with spaces into the command text or request bytes.\n"
					 "With no ARGS, a command device prints its usage.\n"
					 "Exit: 0 ok; 1..124 the service's status or error (|status|, errno); 125 chorus-ctl failed.");
	/* Options only before DEVICE: what follows it is the command's own
	 * (`chorus-ctl sync/command obs cpu audio0 -1 2` has a -1 in it), and a
	 * "--" there ends nothing and is not sent. */
	g_option_context_set_strict_posix(oc, TRUE);
	if (!g_option_context_parse(oc, &argc, &argv, &err)) {
		fprintf(stderr, "chorus-ctl: %s\n", err->message);
		return EXIT_TOOL;
	}
	g_option_context_free(oc);
	int a0 = 1;
	if (argc > a0 && !strcmp(argv[a0], "--"))
		a0++;
	if (argc < a0 + 1) {
		fprintf(stderr, "chorus-ctl: which device? (chorus-cat lists them)\n");
		return EXIT_TOOL;
	}
	const char *name = argv[a0];
	if (argc > a0 + 1 && !strcmp(argv[a0 + 1], "--"))
		a0++;
	argv += a0 - 1; /* argv[1] the device, argv[2..] the command's words */
	argc -= a0 - 1;
	dev_link *l = dev_link_open(name, opt_timeout, &err);
	if (!l) {
		fprintf(stderr, "chorus-ctl: %s\n", err->message);
		return EXIT_TOOL;
	}
	GByteArray *req;
	if (opt_stdin) {
		req = read_stdin();
	} else {
		char *joined = g_strjoinv(" ", argv + 2);
		req = g_byte_array_new_take((guint8 *)joined, strlen(joined));
	}
	GByteArray *out = g_byte_array_new();
	dev_pattern pat = dev_link_pattern(l);
	int code, status = 0, e;
	switch (pat) {
	case DEV_PATTERN_COMMAND:
		if (argc == 2 && !opt_stdin) {
			e = dev_link_usage(l, out, opt_timeout);
			status = 0;
		} else {
			e = dev_link_call(l, req->data, req->len, &status, out, opt_timeout);
		}
		break;
	case DEV_PATTERN_QUERY:
		e = dev_link_call(l, req->data, req->len, &status, out, opt_timeout);
		break;
	case DEV_PATTERN_PACKET:
		e = send_packet(l, req, out);
		break;
	default:
		fprintf(stderr, "chorus-ctl: %s is a %s device: read it with chorus-cat\n", name, dev_pattern_name(pat));
		e = 0;
		status = INT32_MIN;
	}
	if (status == INT32_MIN) {
		code = EXIT_TOOL;
	} else if (e == -ETIMEDOUT || e == -ECONNRESET || e == -EBADMSG || e == -EPROTO || e == -EPROTOTYPE) {
		fprintf(stderr, "chorus-ctl: %s: %s\n", name, g_strerror(-e));
		code = EXIT_TOOL;
	} else if (e < 0) {
		/* the device refused the request: its own message */
		fprintf(stderr, "chorus-ctl: %s: ", name);
		print_reply(stderr, out);
		if (!out->len || out->data[out->len - 1] != '\n')
			fputc('\n', stderr);
		code = code_of(-e);
	} else {
		if (status == 0 && !opt_quiet)
			print_reply(stdout, out);
		else if (status != 0)
			print_reply(stderr, out);
		code = code_of(status);
	}
	g_byte_array_unref(out);
	g_byte_array_unref(req);
	dev_link_close(l);
	return code;
}
