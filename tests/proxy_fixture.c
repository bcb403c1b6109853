/* proxy_fixture.c — demo devices and a chorus-proxy (see proxy_fixture.h). */
#include "tests/proxy_fixture.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int st_text(void *u, GString *o)
{
	g_string_append_printf(o, "value %d\n", ((pfx *)u)->value);
	return 0;
}

static int st_bin(void *u, GByteArray *o)
{
	g_byte_array_append(o, (const guint8 *)"\x01\x02\x03", 3);
	return 0;
}

static int cmd_run(void *u, const dev_creds *w, const char *c, GString *r)
{
	pfx *f = u;
	if (g_str_has_prefix(c, "set ")) {
		f->value = atoi(c + 4);
		dev_status_notify(f->st);
		g_string_append_printf(r, "value set to %d", f->value);
		return 0;
	}
	g_string_append_printf(r, "no such command: %s", c);
	return -EINVAL;
}

static void cmd_usage(void *u, GString *o) { g_string_append(o, "set N   set the value\n"); }

static int pk_recv(void *u, const dev_creds *w, const void *m, size_t len)
{
	dev_packet_send(((pfx *)u)->pk, m, len); /* echo to every subscriber */
	return 0;
}

static void sn_range(void *u, int64_t *o, int64_t *n)
{
	*o = 0;
	*n = ((pfx *)u)->sn_next;
}

static int sn_read(void *u, void *c, int64_t first, size_t n, void *buf)
{
	for (size_t i = 0; i < n; i++)
		((int16_t *)buf)[i] = (int16_t)(first + (int64_t)i);
	return 0;
}

void pfx_status_restart(pfx *f, gboolean up)
{
	if (!up) {
		dev_status_free(f->st);
		f->st = NULL;
		return;
	}
	GError *e = NULL;
	f->st = dev_status_new("demo/status", NULL, f->ctx, st_text, st_bin, f, &e);
	if (!f->st)
		g_error("demo/status: %s", e->message);
}

static gpointer run(gpointer p)
{
	pfx *f = p;
	g_main_context_push_thread_default(f->ctx);
	g_main_loop_run(f->loop);
	g_main_context_pop_thread_default(f->ctx);
	return NULL;
}

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t l = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || getsockname(fd, (struct sockaddr *)&a, &l) < 0)
		g_error("no free port: %s", g_strerror(errno));
	close(fd);
	return ntohs(a.sin_port);
}

int pfx_tcp(const pfx *f)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

void pfx_proxy_start(pfx *f)
{
	char *prog = g_build_filename(f->bindir, "chorus-proxy", NULL);
	char *argv[] = {prog, "-c", f->conf, NULL};
	int log = open(f->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	GError *e = NULL;
	if (log < 0 || !g_spawn_async_with_fds(NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &f->pid, -1, log,
					       log, &e))
		g_error("cannot start %s: %s", prog, e ? e->message : g_strerror(errno));
	close(log);
	g_free(prog);
	/* ready when it accepts (it listens before it serves) */
	for (int i = 0; i < 1000; i++) {
		int fd = pfx_tcp(f);
		if (fd >= 0) {
			close(fd);
			return;
		}
		if (waitpid(f->pid, NULL, WNOHANG) == f->pid)
			g_error("chorus-proxy exited at start; see %s", f->log);
		g_usleep(10000);
	}
	g_error("chorus-proxy does not accept on port %d", f->port);
}

void pfx_proxy_stop(pfx *f)
{
	if (!f->pid)
		return;
	kill(f->pid, SIGCONT);
	kill(f->pid, SIGTERM);
	int st;
	waitpid(f->pid, &st, 0);
	g_spawn_close_pid(f->pid);
	f->pid = 0;
	/* a clean exit: no crash, and (under SANITIZE=1) no leak or error report */
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		char *log = NULL;
		g_file_get_contents(f->log, &log, NULL, NULL);
		g_error("chorus-proxy ended with status 0x%x; its log:\n%s", st, log ? log : "");
	}
}

pfx *pfx_start(const char *bindir, int keepalive_ms, const char *extra)
{
	pfx *f = g_new0(pfx, 1);
	f->bindir = g_strdup(bindir);
	f->dir = g_dir_make_tmp("chorus-proxy-XXXXXX", NULL);
	f->key = g_build_filename(f->dir, "network.key", NULL);
	f->conf = g_build_filename(f->dir, "proxy.conf", NULL);
	f->log = g_build_filename(f->dir, "proxy.log", NULL);
	char *nodes = g_build_filename(f->dir, "nodes", NULL);
	f->port = free_port();
	uint8_t key[32];
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)g_random_int();
	gchar *conf = g_strdup_printf("[proxy]\nport = %d\nkey_file = %s\nkeepalive_ms = %d\n"
				      "export = demo/*;proxy/status\nwritable = demo/ctl;demo/locked;demo/events\n%s",
				      f->port, f->key, keepalive_ms, extra ? extra : "");
	if (!g_file_set_contents(f->key, (const char *)key, sizeof key, NULL) ||
	    !g_file_set_contents(nodes, "1 0 0 0 192.0.2.1\n3 0 0 0 127.0.0.1\n", -1, NULL) ||
	    !g_file_set_contents(f->conf, conf, -1, NULL))
		g_error("cannot write the fixture's files in %s", f->dir);
	g_free(conf);
	char port[16];
	g_snprintf(port, sizeof port, "%d", f->port);
	g_setenv("CHORUS_NODES", nodes, TRUE);
	g_setenv("CHORUS_PROXY_PORT", port, TRUE);
	g_setenv("CHORUS_KEY_FILE", f->key, TRUE);
	g_unsetenv("CHORUS_NODE");
	g_unsetenv("CHORUS_REMOTE");
	g_free(nodes);
	f->ctx = g_main_context_new();
	f->loop = g_main_loop_new(f->ctx, FALSE);
	f->sn_next = 100000;
	GError *e = NULL;
	f->st = dev_status_new("demo/status", NULL, f->ctx, st_text, st_bin, f, &e);
	if (f->st)
		f->ctl = dev_command_new("demo/ctl", NULL, f->ctx, cmd_run, cmd_usage, f, &e);
	if (f->ctl)
		f->ro = dev_command_new("demo/ro", NULL, f->ctx, cmd_run, cmd_usage, f, &e);
	static uid_t other;
	other = getuid() + 1;
	dev_options lo;
	dev_options_init(&lo);
	lo.write_uids = &other;
	lo.n_write_uids = 1;
	if (f->ro)
		f->locked = dev_command_new("demo/locked", &lo, f->ctx, cmd_run, cmd_usage, f, &e);
	dev_packet_ops pops = {.recv = pk_recv};
	dev_options po;
	dev_options_init(&po);
	po.queue_limit = 4096;
	po.overflow = DEV_OVERFLOW_BACKPRESSURE; /* a slow reader would stall it: the proxy must not be one */
	if (f->locked)
		f->pk = dev_packet_new("demo/events", &po, f->ctx, &pops, f, &e);
	dev_sensor_ops sops = {sn_range, sn_read, NULL, NULL, NULL};
	if (f->pk)
		f->sn = dev_sensor_new("demo/data", NULL, f->ctx, 2, &sops, f, &e);
	if (!f->sn)
		g_error("demo devices: %s", e->message);
	f->th = g_thread_new("svc", run, f);
	pfx_proxy_start(f);
	return f;
}

typedef struct {
	pfx *f;
	void (*fn)(pfx *f, void *data);
	void *data;
	GMutex m;
	GCond c;
	gboolean done;
} call;

static gboolean do_call(gpointer p)
{
	call *c = p;
	c->fn(c->f, c->data);
	g_mutex_lock(&c->m);
	c->done = TRUE;
	g_cond_signal(&c->c);
	g_mutex_unlock(&c->m);
	return G_SOURCE_REMOVE;
}

void pfx_call(pfx *f, void (*fn)(pfx *f, void *data), void *data)
{
	call c = {.f = f, .fn = fn, .data = data};
	g_mutex_init(&c.m);
	g_cond_init(&c.c);
	GSource *s = g_idle_source_new();
	g_source_set_callback(s, do_call, &c, NULL);
	g_source_attach(s, f->ctx);
	g_source_unref(s);
	g_mutex_lock(&c.m);
	while (!c.done)
		g_cond_wait(&c.c, &c.m);
	g_mutex_unlock(&c.m);
	g_mutex_clear(&c.m);
	g_cond_clear(&c.c);
}

void pfx_stop(pfx *f)
{
	pfx_proxy_stop(f);
	g_main_loop_quit(f->loop);
	g_thread_join(f->th);
	dev_status_free(f->st);
	dev_command_free(f->ctl);
	dev_command_free(f->ro);
	dev_command_free(f->locked);
	dev_packet_free(f->pk);
	dev_sensor_free(f->sn);
	g_main_loop_unref(f->loop);
	g_main_context_unref(f->ctx);
	const char *names[] = {"network.key", "proxy.conf", "proxy.log", "nodes"};
	for (int i = 0; i < 4; i++) {
		char *p = g_build_filename(f->dir, names[i], NULL);
		unlink(p);
		g_free(p);
	}
	rmdir(f->dir);
	g_free(f->dir);
	g_free(f->bindir);
	g_free(f->key);
	g_free(f->conf);
	g_free(f->log);
	g_free(f);
}

char *pfx_bindir(const char *argv0, const char *name)
{
	char *dir = g_path_get_dirname(argv0);
	char *bindir = g_build_filename(dir, "..", "bin", NULL);
	g_free(dir);
	char *prog = g_build_filename(bindir, "chorus-proxy", NULL);
	gboolean ok = g_file_test(prog, G_FILE_TEST_IS_EXECUTABLE);
	if (!ok) {
		printf("%s: SKIP (%s not built)\n", name, prog);
		g_free(bindir);
		bindir = NULL;
	}
	g_free(prog);
	return bindir;
}
