/* launch.c — start, watch and stop the processes of virtual nodes (see launch.h). */
#include "sim/launch/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CSIM_ERROR g_quark_from_static_string("chorus-sim")

/* The processes of every node, started in this order: syncd, audiod (with
 * audio), then the apps of csim_opts.apps.  An argument "%n" becomes the
 * node's number, "%c" its microphone count, inside any argument. */
typedef struct {
	char *name;   /* program in bin_dir */
	char **args;  /* argument templates (NULL-terminated) */
	double cpu_s; /* user+system CPU of every stopped instance, s */
} proc_spec;

typedef struct {
	int id;
	const sim_node_cfg *cfg;
	pid_t pid[CSIM_MAX_PROCS];
	char netns[32];
	char veth_host[16], veth_node[16];
} node_rec;

struct csim {
	csim_opts o;
	sim_scenario *sc;
	char *out_dir, *run_dir, *bin_dir, *notify_dir;
	char *syncd_conf_path, *syncd_conf, *audiod_conf_path, *alsa_path, *scenario_abs;
	char *radio_so;   /* the simulated radio, installed in syncd as its receive filter */
	char *nodes_path; /* OUT/nodes.txt for collab */
	char bridge[16];
	int port;
	int64_t epoch_ns;
	GArray *nodes; /* node_rec */
	guint spawned;
	proc_spec procs[CSIM_MAX_PROCS];
	int nprocs;
};

static int64_t host_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static node_rec *find(csim *s, int id)
{
	for (guint i = 0; i < s->nodes->len; i++)
		if (g_array_index(s->nodes, node_rec, i).id == id)
			return &g_array_index(s->nodes, node_rec, i);
	return NULL;
}

/* Run a command (netns set-up) and wait; FALSE + *err with its status. */
static gboolean run_cmd(GError **err, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
static gboolean run_cmd(GError **err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *cmd = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	gint status = 0;
	gchar *errout = NULL;
	gboolean ok = g_spawn_command_line_sync(cmd, NULL, &errout, &status, err) && g_spawn_check_wait_status(status, NULL);
	if (!ok && err && !*err)
		g_set_error(err, CSIM_ERROR, EIO, "`%s` failed: %s", cmd, errout ? g_strstrip(errout) : "");
	g_free(errout);
	g_free(cmd);
	return ok;
}

static void netns_down(csim *s, node_rec *n)
{
	if (!*n->netns)
		return;
	run_cmd(NULL, "ip netns del %s", n->netns);
	run_cmd(NULL, "ip link del %s", n->veth_host);
	*n->netns = 0;
}

static gboolean netns_up(csim *s, node_rec *n, GError **err)
{
	int pid = (int)(getpid() % 100000);
	g_snprintf(n->netns, sizeof n->netns, "chorus-n%d-%d", n->id, pid);
	g_snprintf(n->veth_host, sizeof n->veth_host, "cs%dn%d", pid, n->id);
	g_snprintf(n->veth_node, sizeof n->veth_node, "cp%dn%d", pid, n->id);
	int h = n->id + 1;
	return run_cmd(err, "ip netns add %s", n->netns) &&
	       run_cmd(err, "ip link add %s type veth peer name %s", n->veth_host, n->veth_node) &&
	       run_cmd(err, "ip link set %s netns %s", n->veth_node, n->netns) &&
	       run_cmd(err, "ip link set %s master %s up", n->veth_host, s->bridge) &&
	       run_cmd(err, "ip -n %s addr add 10.213.%d.%d/16 brd 10.213.255.255 dev %s", n->netns, h / 256, h % 256,
		       n->veth_node) &&
	       run_cmd(err, "ip -n %s link set %s up", n->netns, n->veth_node) &&
	       run_cmd(err, "ip -n %s link set lo up", n->netns);
}

/* Fork prog for node n with its environment and NOTIFY_SOCKET, then wait
 * for READY=1 (or its death, or the timeout). */
static gboolean spawn(csim *s, node_rec *n, int which, GError **err)
{
	char sock[108];
	const proc_spec *ps = &s->procs[which];
	g_snprintf(sock, sizeof sock, "%s/%d-%s-%u", s->notify_dir, n->id, ps->name, s->spawned++);
	unlink(sock);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	g_strlcpy(a.sun_path, sock, sizeof a.sun_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		g_set_error(err, CSIM_ERROR, errno, "notify socket %s: %s", sock, g_strerror(errno));
		if (fd >= 0)
			close(fd);
		return FALSE;
	}
	chmod(sock, 0666);
	char *log = g_strdup_printf("%s/node%d-%s.log", s->out_dir, n->id, ps->name);
	char *prog = g_build_filename(s->bin_dir, ps->name, NULL);
	sync_simclock cpu = n->cfg->cpu;
	cpu.epoch_ns = s->epoch_ns;
	char clkbuf[256];
	char *clk = g_strdup(sync_simclock_format(&cpu, clkbuf, sizeof clkbuf));
	/* The realtime clock's UTC source (none: CHORUS_SIM_UTC unset, the
	 * realtime clock undisciplined), its error starting at the same epoch. */
	sync_simutc utc = n->cfg->utc;
	utc.epoch_ns = s->epoch_ns;
	char utcbuf[160];
	sync_simutc_format(&utc, utcbuf, sizeof utcbuf);
	GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
	if (*n->netns) {
		g_ptr_array_add(argv, g_strdup("ip"));
		g_ptr_array_add(argv, g_strdup("netns"));
		g_ptr_array_add(argv, g_strdup("exec"));
		g_ptr_array_add(argv, g_strdup(n->netns));
	}
	g_ptr_array_add(argv, g_strdup(prog));
	char node_id[16], mics[16];
	g_snprintf(node_id, sizeof node_id, "%d", n->id);
	g_snprintf(mics, sizeof mics, "%zu", n->cfg->n_mics ? n->cfg->n_mics : 1);
	for (char **a = ps->args; a && *a; a++) {
		GString *t = g_string_new(*a);
		g_string_replace(t, "%n", node_id, 0);
		g_string_replace(t, "%c", mics, 0);
		g_string_replace(t, "%N", s->nodes_path, 0);
		g_ptr_array_add(argv, g_string_free(t, FALSE));
	}
	g_ptr_array_add(argv, NULL);
	char node_s[16], epoch_s[32];
	g_snprintf(node_s, sizeof node_s, "%d", n->id);
	g_snprintf(epoch_s, sizeof epoch_s, "%" G_GINT64_FORMAT, s->epoch_ns);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* Die with the launcher, however it ends (a failed test, a crash). */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		int lf = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (lf >= 0) {
			dup2(lf, 1);
			dup2(lf, 2);
		}
		setenv("CHORUS_NODE", node_s, 1);
		setenv("CHORUS_RUN", s->run_dir, 1);
		setenv("G_SLICE", "always-malloc", 1); /* as the units do (libdev/heap.h) */
		setenv("CHORUS_SIM_CLOCK", clk, 1);
		if (utc.kind != SYNC_SIMUTC_NONE)
			setenv("CHORUS_SIM_UTC", utcbuf, 1);
		else
			unsetenv("CHORUS_SIM_UTC");
		setenv("CHORUS_SCENARIO", s->scenario_abs, 1);
		setenv("CHORUS_SIM_EPOCH_NS", epoch_s, 1);
		char *cuts = g_build_filename(s->run_dir, "radio-cuts", NULL);
		setenv("CHORUS_SIM_RADIO_CUTS", cuts, 1); /* chaos's radio cuts (sim/radio/radio.c) */
		g_free(cuts);
		setenv("NOTIFY_SOCKET", sock, 1);
		setenv("ALSA_CONFIG_PATH", s->alsa_path, 1);
		setenv("CHORUS_RX_FILTER", s->radio_so, 1);
		setenv("CHORUS_RX_FILTER_ARG", s->scenario_abs, 1);
		if (*n->netns)
			setenv("CHORUS_SIM_NETNS", "1", 1);
		execvp((char *)argv->pdata[0], (char **)argv->pdata);
		fprintf(stderr, "chorus-sim: cannot run %s: %s\n", (char *)argv->pdata[0], strerror(errno));
		_exit(127);
	}
	g_ptr_array_free(argv, TRUE);
	g_free(prog);
	g_free(clk);
	gboolean ready = FALSE;
	if (pid < 0) {
		g_set_error(err, CSIM_ERROR, errno, "fork: %s", g_strerror(errno));
		goto out;
	}
	n->pid[which] = pid;
	int64_t deadline = host_raw() + (int64_t)(s->o.ready_timeout_ms ? s->o.ready_timeout_ms : 20000) * 1000000;
	while (!ready) {
		struct pollfd p = {fd, POLLIN, 0};
		int64_t left = (deadline - host_raw()) / 1000000;
		if (left <= 0) {
			g_set_error(err, CSIM_ERROR, ETIMEDOUT, "node%d %s not ready in time (log: %s)", n->id,
				    ps->name, log);
			break;
		}
		/* Wake at least every 100 ms to notice a child that died. */
		if (poll(&p, 1, (int)MIN(left, 100)) > 0) {
			char msg[512];
			ssize_t k = recv(fd, msg, sizeof msg - 1, 0);
			if (k > 0) {
				msg[k] = 0;
				ready = strstr(msg, "READY=1") != NULL;
			}
		}
		int st;
		if (!ready && waitpid(pid, &st, WNOHANG) == pid) {
			n->pid[which] = 0;
			g_set_error(err, CSIM_ERROR, ECHILD, "node%d %s exited before it was ready (status %d; log: %s)",
				    n->id, ps->name, st, log);
			break;
		}
	}
out:
	close(fd);
	unlink(sock);
	g_free(log);
	return ready;
}

/* SIGTERM, reap (SIGKILL after 5 s), and add the process's CPU time. */
static void stop_pid(pid_t *pid, proc_spec *ps)
{
	struct rusage ru;
	if (*pid <= 0)
		return;
	kill(*pid, SIGTERM);
	int i;
	for (i = 0; i < 500; i++) {
		if (wait4(*pid, NULL, WNOHANG, &ru) == *pid)
			break;
		g_usleep(10000);
	}
	if (i == 500) {
		kill(*pid, SIGKILL);
		wait4(*pid, NULL, 0, &ru);
	}
	ps->cpu_s += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
		     ru.ru_stime.tv_usec * 1e-6;
	*pid = 0;
}

int csim_node_stop(csim *s, int node)
{
	node_rec *n = find(s, node);
	if (!n)
		return -ENOENT;
	for (int w = s->nprocs; w-- > 0;)
		stop_pid(&n->pid[w], &s->procs[w]);
	return 0;
}

gboolean csim_node_start(csim *s, int node, GError **err)
{
	node_rec *n = find(s, node);
	if (!n) {
		g_set_error(err, CSIM_ERROR, ENOENT, "no node%d in the scenario", node);
		return FALSE;
	}
	for (int w = 0; w < s->nprocs; w++)
		if (!n->pid[w] && !spawn(s, n, w, err))
			return FALSE;
	return TRUE;
}

gboolean csim_node_running(csim *s, int node)
{
	node_rec *n = find(s, node);
	if (!n)
		return FALSE;
	gboolean all = TRUE;
	for (int w = 0; w < s->nprocs; w++) {
		if (n->pid[w] > 0 && waitpid(n->pid[w], NULL, WNOHANG) == n->pid[w])
			n->pid[w] = 0;
		all = all && n->pid[w] > 0;
	}
	return all;
}

static gboolean write_configs(csim *s, GError **err)
{
	const char *addr = s->o.netns ? "10.213.255.255" : "127.255.255.255";
	/* The field's shared key, fresh for each run (a networked syncd runs
	 * with none only when told insecure = true), unless the caller's own
	 * [rbs] lines name one. */
	const char *extra = s->o.syncd_extra ? s->o.syncd_extra : "";
	char *key_line = NULL;
	if (!strstr(extra, "key_file") && !strstr(extra, "insecure")) {
		guint8 key[32];
		for (size_t i = 0; i < sizeof key; i += 4) {
			guint32 v = g_random_int();
			memcpy(key + i, &v, 4);
		}
		char *key_path = g_build_filename(s->out_dir, "network.key", NULL);
		if (!g_file_set_contents_full(key_path, (const char *)key, sizeof key, G_FILE_SET_CONTENTS_CONSISTENT, 0600,
					      err)) {
			g_free(key_path);
			return FALSE;
		}
		key_line = g_strdup_printf("key_file = %s\n", key_path);
		g_free(key_path);
	}
	s->syncd_conf = g_strdup_printf("# generated by chorus-sim\n[rbs]\nport = %d\naddress = %s\n%s%s%s", s->port, addr,
					key_line ? key_line : "", *extra ? "\n" : "", extra);
	g_free(key_line);
	s->syncd_conf_path = g_build_filename(s->out_dir, "syncd.conf", NULL);
	if (!g_file_set_contents(s->syncd_conf_path, s->syncd_conf, -1, err))
		return FALSE;
	const sim_world_cfg *w = sim_scenario_world(s->sc);
	unsigned rate_hz = s->o.audio_rate_hz ? s->o.audio_rate_hz : w->sample_rate_hz;
	/* One audiod.conf per node (audiod-N.conf): the same device, with the
	 * latency floor the node's operator states as calibrated, if any. */
	gboolean ok = TRUE;
	char periods[32] = "";
	if (s->o.audio_periods)
		g_snprintf(periods, sizeof periods, "periods = %u\n", s->o.audio_periods);
	for (size_t i = 0; ok && i < sim_scenario_n_nodes(s->sc); i++) {
		const sim_node_cfg *nc = sim_scenario_node(s->sc, i);
		char *ac = g_strdup_printf("# generated by chorus-sim\n[device.0]\npcm = chorus_sim\nrate_hz = %u\nperiod = %u\n"
					   "tstamp = %s\nring_s = %.17g\nlatency_floor_us = %.17g\nlatency_floor_sd_us = %.17g\n%s",
					   rate_hz, MAX(rate_hz / 100, 16u),
					   s->o.audio_tstamp ? s->o.audio_tstamp : "sim", s->o.audio_ring_s > 0 ? s->o.audio_ring_s : 20.0, nc->calibrated_floor_ns * 1e-3,
					   nc->calibrated_floor_sd_ns * 1e-3, periods);
		char name[32];
		g_snprintf(name, sizeof name, "audiod-%d.conf", nc->id);
		char *path = g_build_filename(s->out_dir, name, NULL);
		ok = g_file_set_contents(path, ac, -1, err);
		g_free(path);
		g_free(ac);
	}
	s->audiod_conf_path = g_build_filename(s->out_dir, "audiod-%n.conf", NULL);
	/* The shipped ALSA config with the plugin in the build tree, after
	 * ALSA's own top-level config; the installed one (`make install`, the
	 * chorus-sim package) when bin is not a build tree's. */
	char *simconf = g_build_filename(s->bin_dir, "..", "sim", "chorus_sim.conf", NULL);
	if (!g_file_test(simconf, G_FILE_TEST_EXISTS) && g_file_test(CSIM_INSTALLED_SIM_CONF, G_FILE_TEST_EXISTS)) {
		g_free(simconf);
		simconf = g_strdup(CSIM_INSTALLED_SIM_CONF);
	}
	char *abs = g_canonicalize_filename(simconf, NULL);
	s->alsa_path = g_strdup_printf("/usr/share/alsa/alsa.conf:%s", abs);
	g_free(simconf);
	g_free(abs);
	/* What a field team knows of its nodes: where each first microphone
	 * is (as surveyed; exact in this world), for collab. */
	char *nf = csim_nodes_text(s->sc);
	s->nodes_path = g_build_filename(s->out_dir, "nodes.txt", NULL);
	if (ok && !g_file_set_contents(s->nodes_path, nf, -1, err))
		ok = FALSE;
	g_free(nf);
	/* The simulated radio (sim/radio/radio.c) beside it; CHORUS_SIM_RADIO
	 * names another object (an installed one, or a test's). */
	const char *radio = g_getenv("CHORUS_SIM_RADIO");
	char *so = radio && *radio ? g_strdup(radio)
				   : g_build_filename(s->bin_dir, "..", "sim", "libchorus_sim_radio.so", NULL);
	if (!(radio && *radio) && !g_file_test(so, G_FILE_TEST_EXISTS) &&
	    g_file_test(CSIM_INSTALLED_RADIO, G_FILE_TEST_EXISTS)) {
		g_free(so);
		so = g_strdup(CSIM_INSTALLED_RADIO);
	}
	s->radio_so = g_canonicalize_filename(so, NULL);
	g_free(so);
	if (ok && !g_file_test(s->radio_so, G_FILE_TEST_EXISTS)) {
		g_set_error(err, CSIM_ERROR, ENOENT, "the simulated radio %s is missing (build it, or set CHORUS_SIM_RADIO)",
			    s->radio_so);
		ok = FALSE;
	}
	return ok;
}

static void add_proc(csim *s, const char *name, char **args)
{
	s->procs[s->nprocs].name = g_strdup(name);
	s->procs[s->nprocs].args = args;
	s->nprocs++;
}

/* syncd, audiod (one channel per microphone of the node), then the apps. */
static gboolean add_procs(csim *s, GError **err)
{
	char *sargs[] = {"-c", s->syncd_conf_path, NULL};
	add_proc(s, "syncd", g_strdupv(sargs));
	if (s->o.audio) {
		char *aargs[] = {"-c", s->audiod_conf_path, "--channels", "%c", NULL};
		add_proc(s, "audiod", g_strdupv(aargs));
	}
	for (const char *const *a = s->o.apps; a && *a; a++) {
		char **argv = NULL;
		GError *e = NULL;
		if (s->nprocs == CSIM_MAX_PROCS) {
			g_set_error(err, CSIM_ERROR, E2BIG, "more than %d processes per node", CSIM_MAX_PROCS);
			return FALSE;
		}
		if (!g_shell_parse_argv(*a, NULL, &argv, &e)) {
			g_set_error(err, CSIM_ERROR, EINVAL, "app \"%s\": %s", *a, e->message);
			g_error_free(e);
			return FALSE;
		}
		add_proc(s, argv[0], g_strdupv(argv + 1));
		g_strfreev(argv);
	}
	return TRUE;
}

csim *csim_start(const csim_opts *o, GError **err)
{
	csim *s = g_new0(csim, 1);
	s->o = *o;
	s->nodes = g_array_new(FALSE, TRUE, sizeof(node_rec));
	s->sc = sim_scenario_load(o->scenario, err);
	if (!s->sc)
		goto fail;
	s->scenario_abs = g_canonicalize_filename(o->scenario, NULL);
	s->out_dir = g_canonicalize_filename(o->out_dir, NULL);
	s->run_dir = o->run_dir ? g_canonicalize_filename(o->run_dir, NULL) : g_build_filename(s->out_dir, "run", NULL);
	s->bin_dir = g_canonicalize_filename(o->bin_dir ? o->bin_dir : "build/bin", NULL);
	s->notify_dir = g_strdup_printf("/tmp/chorus-sim-notify-%d", (int)getpid());
	if (g_mkdir_with_parents(s->out_dir, 0755) < 0 || g_mkdir_with_parents(s->run_dir, 0755) < 0 ||
	    g_mkdir_with_parents(s->notify_dir, 0755) < 0) {
		g_set_error(err, CSIM_ERROR, errno, "cannot create %s or %s: %s", s->out_dir, s->run_dir, g_strerror(errno));
		goto fail;
	}
	s->port = o->port ? o->port : 20000 + (int)(getpid() % 20000);
	if (!write_configs(s, err) || !add_procs(s, err))
		goto fail;
	s->epoch_ns = host_raw();
	if (o->netns) {
		g_snprintf(s->bridge, sizeof s->bridge, "chbr%d", (int)(getpid() % 100000));
		if (!run_cmd(err, "ip link add %s type bridge", s->bridge) ||
		    !run_cmd(err, "ip addr add 10.213.255.254/16 dev %s", s->bridge) ||
		    !run_cmd(err, "ip link set %s up", s->bridge))
			goto fail;
	}
	for (size_t i = 0; i < sim_scenario_n_nodes(s->sc); i++) {
		node_rec n = {0};
		n.cfg = sim_scenario_node(s->sc, i);
		n.id = n.cfg->id;
		g_array_append_val(s->nodes, n);
	}
	for (guint i = 0; i < s->nodes->len; i++) {
		node_rec *n = &g_array_index(s->nodes, node_rec, i);
		if (o->netns && !netns_up(s, n, err))
			goto fail;
		if (!csim_node_start(s, n->id, err))
			goto fail;
	}
	return s;
fail:
	csim_stop(s);
	return NULL;
}

void csim_stop(csim *s)
{
	if (!s)
		return;
	for (guint i = 0; i < s->nodes->len; i++) {
		node_rec *n = &g_array_index(s->nodes, node_rec, i);
		csim_node_stop(s, n->id);
		netns_down(s, n);
	}
	if (*s->bridge)
		run_cmd(NULL, "ip link del %s", s->bridge);
	if (s->notify_dir)
		rmdir(s->notify_dir);
	g_array_free(s->nodes, TRUE);
	sim_scenario_free(s->sc);
	g_free(s->out_dir);
	g_free(s->run_dir);
	g_free(s->bin_dir);
	g_free(s->notify_dir);
	g_free(s->syncd_conf_path);
	g_free(s->syncd_conf);
	g_free(s->audiod_conf_path);
	g_free(s->alsa_path);
	g_free(s->radio_so);
	g_free(s->nodes_path);
	g_free(s->scenario_abs);
	for (int w = 0; w < s->nprocs; w++) {
		g_free(s->procs[w].name);
		g_strfreev(s->procs[w].args);
	}
	g_free(s);
}

const sim_scenario *csim_scenario(const csim *s)
{
	return s->sc;
}

const char *csim_run_dir(const csim *s)
{
	return s->run_dir;
}

const char *csim_out_dir(const csim *s)
{
	return s->out_dir;
}

double csim_world_s(const csim *s)
{
	return (double)(host_raw() - s->epoch_ns) * 1e-9;
}

int csim_port(const csim *s)
{
	return s->port;
}

char *csim_nodes_text(const sim_scenario *sc)
{
	GString *nf = g_string_new("# generated by chorus-sim: ID X Y Z (m), first microphone of each node, at the position\n"
				   "# the field team was told (true position + survey_error_m, sim_node_told_position);\n"
				   "# mic1=DX,DY,DZ: a node's second microphone (channel 1) from its first, as told\n"
				   "# (survey_heading_deg: its heading's error; mic1_sd_deg= states that accuracy)\n");
	for (size_t i = 0; i < sim_scenario_n_nodes(sc); i++) {
		const sim_node_cfg *c = sim_scenario_node(sc, i);
		double told[3];
		sim_node_told_position(sc, c, told);
		char v[3][G_ASCII_DTOSTR_BUF_SIZE];
		for (int k = 0; k < 3; k++)
			g_ascii_dtostr(v[k], sizeof v[k], told[k] + (c->n_mics ? c->mics_m[0][k] : 0));
		g_string_append_printf(nf, "%d %s %s %s", c->id, v[0], v[1], v[2]);
		/* A second microphone: where it is from the first (a rigid
		 * array's own geometry, as built). */
		if (c->n_mics >= 2) {
			double o[3];
			sim_node_told_mic1(sc, c, o);
			for (int k = 0; k < 3; k++)
				g_ascii_dtostr(v[k], sizeof v[k], o[k]);
			g_string_append_printf(nf, " mic1=%s,%s,%s", v[0], v[1], v[2]);
			/* … its heading surveyed to this s.d. (the surveyor's
			 * stated accuracy) */
			if (c->survey_heading_deg > 0)
				g_string_append_printf(nf, " mic1_sd_deg=%g", c->survey_heading_deg);
		}
		g_string_append_c(nf, '\n');
	}
	return g_string_free(nf, FALSE);
}

const char *csim_nodes_path(const csim *s)
{
	return s->nodes_path;
}

int64_t csim_epoch_ns(const csim *s)
{
	return s->epoch_ns;
}

const char *csim_syncd_conf(const csim *s)
{
	return s->syncd_conf;
}

pid_t csim_pid(csim *s, int node, const char *name)
{
	node_rec *n = find(s, node);
	for (int w = 0; n && w < s->nprocs; w++)
		if (!strcmp(s->procs[w].name, name))
			return n->pid[w];
	return 0;
}

double csim_cpu_seconds(const csim *s, const char *name)
{
	for (int w = 0; w < s->nprocs; w++)
		if (!strcmp(s->procs[w].name, name))
			return s->procs[w].cpu_s;
	return 0;
}

/* The process slot of program `name` on node N, or -1. */
static int slot_of(csim *s, node_rec *n, const char *name)
{
	for (int w = 0; n && w < s->nprocs; w++)
		if (!strcmp(s->procs[w].name, name))
			return w;
	return -1;
}

int csim_proc_signal(csim *s, int node, const char *name, int sig)
{
	node_rec *n = find(s, node);
	int w = slot_of(s, n, name);
	if (w < 0 || n->pid[w] <= 0)
		return -ENOENT;
	if (kill(n->pid[w], sig) < 0)
		return -errno;
	if (sig == SIGKILL) {
		struct rusage ru;
		if (wait4(n->pid[w], NULL, 0, &ru) == n->pid[w])
			s->procs[w].cpu_s += (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
					     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
		n->pid[w] = 0;
	}
	return 0;
}

gboolean csim_proc_restart(csim *s, int node, const char *name, GError **err)
{
	node_rec *n = find(s, node);
	int w = slot_of(s, n, name);
	if (w < 0) {
		g_set_error(err, CSIM_ERROR, ENOENT, "no %s on node%d", name, node);
		return FALSE;
	}
	if (n->pid[w] > 0 && waitpid(n->pid[w], NULL, WNOHANG) == n->pid[w])
		n->pid[w] = 0;
	return n->pid[w] > 0 || spawn(s, n, w, err);
}

int csim_procs(const csim *s, const char **names, int max)
{
	int k = 0;
	for (int w = 0; w < s->nprocs && k < max; w++)
		names[k++] = s->procs[w].name;
	return k;
}

gboolean csim_proc_exited(csim *s, int node, const char *name, int *status)
{
	node_rec *n = find(s, node);
	int w = slot_of(s, n, name);
	if (w < 0 || n->pid[w] <= 0 || waitpid(n->pid[w], status, WNOHANG) != n->pid[w])
		return FALSE;
	n->pid[w] = 0;
	return TRUE;
}
