/* launch.h — chorus-sim's process side: one virtual node per [node.N] of a
 * scenario, each a set of real chorus processes (syncd, optionally audiod)
 * with CHORUS_NODE, CHORUS_RUN, CHORUS_SIM_CLOCK, CHORUS_SCENARIO and
 * CHORUS_SIM_EPOCH_NS set (docs/architecture.md §5.4).
 *
 * Readiness without sleeps: every child gets its own NOTIFY_SOCKET (an
 * abstract AF_UNIX datagram socket we listen on) and is ready when it sends
 * READY=1 through sd_notify(), as under systemd.  Each process's stdout and
 * stderr go to DIR/node<N>-<prog>.log.  Stopping sends SIGTERM and reaps.
 *
 * The field team's knowledge of the nodes goes to OUT/nodes.txt, a nodes
 * file for collab (apps/collab/nodes.h: "ID X Y Z" per node, the position
 * of its first microphone, m); the simulated radio is installed in every
 * syncd as its receive filter (sim/radio/radio.c, syncd/rxfilter.h).
 *
 * --netns: each node runs in its own network namespace (chorus-n<N>-<pid>)
 * with a veth on a bridge; syncd then broadcasts on the bridge subnet and the
 * simulated radio applies only range and loss (CHORUS_SIM_NETNS=1).
 * Errors are GError at this edge (the launcher is a tool, not a library
 * for services).
 */
#ifndef CHORUS_SIM_LAUNCH_H
#define CHORUS_SIM_LAUNCH_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include "sim/scenario.h"

typedef struct {
	const char *scenario;     /* scenario file */
	const char *out_dir;      /* logs and generated configs (created) */
	const char *run_dir;      /* CHORUS_RUN for every node (NULL: OUT/run) */
	const char *bin_dir;      /* where syncd and audiod are (NULL: build/bin) */
	const char *syncd_extra;  /* INI text appended to every node's syncd.conf (NULL: none) */
	int port;                 /* UDP port (0: derived from our pid) */
	gboolean audio;           /* start audiod on the simulated PCM */
	const char *const *apps;  /* more programs per node, each a command line
				   * ("detect -p frog.ini --jsonl out/n%n.jsonl":
				   * %n = node number, %c = its microphones, %N = the
				   * nodes file csim writes for collab), started
				   * after syncd and audiod, NULL-terminated; NULL: none */
	unsigned audio_rate_hz;   /* Hz (0: the scenario's) */
	double audio_ring_s;      /* audiod's ring_s (0: 20) */
	unsigned audio_periods;   /* audiod's periods in the ALSA buffer (0: audiod's default, 8) */
	const char *audio_tstamp; /* audiod's tstamp source: "sim" (NULL) or "alsa" (the plugin's mode
				   * then comes from $CHORUS_SIM_TSTAMP, inherited) */
	gboolean netns;           /* one network namespace per node */
	int ready_timeout_ms;     /* per process (0: 20000) */
} csim_opts;

/* Most processes per node (syncd, audiod and apps). */
#define CSIM_MAX_PROCS 12

typedef struct csim csim;

/* Start every node and wait until each process is ready.  Returns the
 * simulation, or NULL with *err (nothing left running). */
csim *csim_start(const csim_opts *o, GError **err);

/* Stop every process (SIGTERM, then reap; SIGKILL after 5 s) and free. */
void csim_stop(csim *s);

/* Stop node N's processes (a crash or a power-off).  Returns 0 or -ENOENT. */
int csim_node_stop(csim *s, int node);

/* Start node N's processes again and wait for them.  FALSE + *err. */
gboolean csim_node_start(csim *s, int node, GError **err);

/* TRUE when every process of node N is still running (reaps the dead). */
gboolean csim_node_running(csim *s, int node);

/* The scenario (owned by s). */
const sim_scenario *csim_scenario(const csim *s);

/* The run directory, the UDP port and the world epoch (host raw ns). */
const char *csim_run_dir(const csim *s);
/* The directory of the logs (DIR/node<N>-<prog>.log) and generated configs. */
const char *csim_out_dir(const csim *s);
int csim_port(const csim *s);
int64_t csim_epoch_ns(const csim *s);
/* Now on the world's clock: seconds since the epoch (host MONOTONIC_RAW). */
double csim_world_s(const csim *s);

/* The text of the nodes file for the scenario's nodes: "ID X Y Z" (m) of
 * each node's first microphone at the node's told position
 * (sim_node_told_position: the true one plus survey_error_m), never the
 * true one when a survey error is set.  Pure; g_free it. */
char *csim_nodes_text(const sim_scenario *sc);

/* The nodes file written for collab (OUT/nodes.txt). */
const char *csim_nodes_path(const csim *s);

/* The syncd configuration text every node gets (for an extra process that
 * wants to speak the protocol). */
const char *csim_syncd_conf(const csim *s);

/* The pid of program `name` on node N (0 when not running or unknown). */
pid_t csim_pid(csim *s, int node, const char *name);

/* CPU seconds (user + system) used by every stopped instance of program
 * `name` on all nodes (counted when csim_node_stop/csim_stop reap them). */
double csim_cpu_seconds(const csim *s, const char *name);

/* Send sig to program `name` on node N (SIGKILL: and reap it, as a crash
 * the caller restarts).  Returns 0, -ENOENT (not running) or -errno. */
int csim_proc_signal(csim *s, int node, const char *name, int sig);

/* Start program `name` on node N again when it is not running (as
 * systemd's Restart=on-failure would), and wait for it.  FALSE + *err. */
gboolean csim_proc_restart(csim *s, int node, const char *name, GError **err);

/* TRUE when program `name` on node N has exited since it was started (it
 * is reaped, *status its wait status); FALSE while it runs or when it is
 * not started. */
gboolean csim_proc_exited(csim *s, int node, const char *name, int *status);

/* The programs every node runs, in start order: up to max names into
 * names (owned by s).  Returns how many. */
int csim_procs(const csim *s, const char **names, int max);

#endif
