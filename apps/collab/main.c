/* main.c — collab: runs on every node; shares detections over UDP, groups
 * the detections of one call across nodes, and — on the one node the rule
 * picks (group.h) — fetches clips around the call from every node that
 * heard it (clip.h), measures the time differences by GCC-PHAT and locates
 * the source (tdoa.h).  Results: packet device collab/events (JSON), a
 * JSON-lines file and a PNG map.  docs/architecture.md §6.4, docs/protocol.md "collab".
 *
 *   collab [-c /etc/chorus/collab.conf] [--nodes FILE] [--jsonl FILE] [--map FILE.png]
 *
 * Node positions: [collab] nodes (a nodes file, nodes.h; chorus-sim writes
 * one for its nodes).  Fetching and solving run in one worker
 * thread so the main loop (clip service, sharing) never waits on the network.
 */
#include <errno.h>
#include <glib-unix.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "apps/collab/clip.h"
#include "libdev/heap.h"
#include "apps/collab/config.h"
#include "apps/collab/group.h"
#include "apps/collab/held.h"
#include "apps/collab/nodes.h"
#include "apps/collab/result.h"
#include "apps/collab/resume.h"
#include "apps/collab/retime.h"
#include "apps/collab/split.h"
#include "apps/collab/share.h"
#include "apps/collab/solve.h"
#include "apps/collab/sharemsg.h"
#include "apps/collab/tdoa.h"
#include "apps/collab/warmup.h"
#include "apps/dsp/air.h"
#include "apps/dsp/xcorr.h"
#include "libcfg/cfg.h"
#include "libdev/appendlog.h"
#include "libdev/bootid.h"
#include "libdev/dev.h"
#include "libdev/netkey.h"
#include "libsync/client.h"
#include "libsync/now.h"
#include "libsync/ticker_wire.h"
#include "syncd/rxfilter_load.h"


typedef struct {
	collab_cfg cfg;
	syncd_rxf *filter; /* the receive filter of the environment (chorus-sim's radio), or NULL */
	collab_nodes *nodes;
	double c_m_s, c_sd_m_s; /* speed of sound and its uncertainty, m/s */
	sync_client *clocks;
	collab_retimer rt; /* clocks, this node and queue_s, for timing detections again (retime.h) */
	dev_packet_sub *local;
	dev_packet *events;
	dev_status *status;
	collab_share *share;
	collab_outbox *outbox; /* or NULL (queue = false) */
	collab_held *held;     /* own detections waiting for a global time */
	guint polls;
	clip_server *clips;
	collab_grouper *grouper;
	GThreadPool *pool;
	GMainContext *ctx;
	int jsonl; /* the JSON-lines file (libdev/appendlog.h), or -1 */
	char *jsonl_path;
	guint64 jsonl_failed;  /* results the JSON-lines file could not take */
	guint64 share_failed;  /* detections whose send failed */
	guint64 unknown_nodes; /* shared detections from nodes not in the nodes file */
	guint64 local_dets, groups, small_groups, not_mine, located, failed, seq;
	guint64 late_dets, late_reopened, late_kept, late_located, late_elsewhere;
	guint64 clip_retries; /* groups solved again because a node could not serve its clip yet */
	uint32_t root;        /* global's root as libsync last reported it (SYNC_TICKER_NO_ROOT: none yet) */
	int64_t regroup_from; /* cpu ns of the last root change */
	guint regroup_passes; /* passes of timing the grouped detections again since then (check_timescale) */
	guint64 retimed;      /* detections moved to the timescale this node joined */
	GList *retrying;      /* jobs waiting to be solved again (job *) */
	double last_latency_s;
	collab_result recent[16]; /* the last ok results, for duplicates */
	guint n_recent;
	guint64 duplicates;
	struct {
		guint64 group, seq;
	} answers[256]; /* the last results' groups (collab_group.id) and seqs, for one answered again */
	guint n_answers;
	guint64 superseding;      /* results that replace an untested answer of this node's (group.h: again) */
	collab_splitter splitter; /* regrouping two callers' detections (split.h) */
	char last_error[256];
	char why[160]; /* the last malformed event's reason */
	uint8_t *key;  /* the field's key, or NULL */
	size_t klen;
	collab_resume *resume;       /* where collab is in detect/events */
	guint64 dumped, dump_failed; /* solves' inputs kept in dump_dir, and not */
} collabd;

/* Seconds a closed group is remembered without a queue (group.h). */
#define COLLAB_REGROUP_S 30

typedef struct {
	collabd *d;
	collab_group *gr;
	collab_result res;
	collab_result init;     /* res as the job started, for a solve again */
	guint tries;            /* solves again so far */
	guint retry_src;        /* the timeout of the next, while waiting */
	collab_solve_note note; /* the last solve's: clips refused for now, its inputs kept */
} job;

static void share_in(collabd *d, const det_event *e, guint late)
{
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	if (!late) {
		collab_grouper_add(d->grouper, e, now_ns);
		return;
	}
	d->late_dets++;
	int rc = collab_grouper_add_late(d->grouper, e, now_ns, late);
	d->late_reopened += rc == COLLAB_LATE_REOPENED;
	d->late_kept += rc == COLLAB_LATE_KEPT;
}

/* Share this node's detection and group it. */
static void take_local(collabd *d, const det_event *e, guint late)
{
	int src = collab_share_send(d->share, e, late);
	if (src < 0) {
		/* The other nodes lose this node's arrival of the call. */
		d->share_failed++;
		g_snprintf(d->last_error, sizeof d->last_error, "sharing a detection to %s:%" G_GINT64_FORMAT ": %s (%" G_GUINT64_FORMAT " so far)",
			   d->cfg.share_address, d->cfg.share_port, g_strerror(-src), d->share_failed);
		g_warning("collab: %s", d->last_error);
	}
	share_in(d, e, late);
	dev_status_notify(d->status);
}

/* After detect/events message (boot, seq) is handled: the cursor on disk
 * moves past it. */
static void save_cursor(collabd *d, uint64_t boot, uint64_t seq)
{
	GError *err = NULL;
	if (!collab_resume_save(d->resume, boot, seq, &err)) {
		g_snprintf(d->last_error, sizeof d->last_error,
			   "detect/events: cursor not saved (a restart repeats what came since): %s", err->message);
		g_warning("collab: %s", d->last_error);
		g_error_free(err);
	}
}

static void on_local(void *user, const char *msg, size_t len, uint32_t dropped, uint64_t boot, uint64_t seq)
{
	collabd *d = user;
	det_event e;
	if (det_event_parse(msg, len, &e, d->why, sizeof d->why) < 0) {
		g_snprintf(d->last_error, sizeof d->last_error, "detect/events: %s", d->why);
		save_cursor(d, boot, seq);
		return;
	}
	if (e.node == (uint32_t)d->cfg.node) {
		gboolean expired;
		guint late = collab_resume_classify(d->resume, &e, &expired);
		d->local_dets++;
		if (expired) {
			/* older than anything the field still groups */
		} else if (!e.has_global) {
			/* Timed on the cpu clock only: held until it converts
			 * (then late as held, whether replayed or not). */
			if (d->held && isfinite(e.cpu_se_ns))
				collab_held_add(d->held, &e);
		} else {
			/* detect timed it with the fits of its moment: one made
			 * just before this node joined another root's timescale
			 * carries the old one. */
			d->retimed += collab_retime_local(&d->rt, &e);
			take_local(d, &e, late);
		}
	}
	save_cursor(d, boot, seq);
}

/* Held detections whose onset converts now: shared and grouped, late. */
static void retry_held(collabd *d)
{
	GArray *ready = g_array_new(FALSE, FALSE, sizeof(det_event));
	collab_held_retry(d->held, d->clocks, sync_now(SYNC_KIND_CPU), ready);
	for (guint i = 0; i < ready->len; i++)
		take_local(d, &g_array_index(ready, det_event, i), COLLAB_LATE_HELD);
	g_array_free(ready, TRUE);
}

static void on_remote(void *user, const det_event *e, guint late)
{
	collabd *d = user;
	if (!collab_nodes_find(d->nodes, e->node)) {
		/* Only the field's nodes are believed: a made-up id would open
		 * groups no call can fill. */
		d->unknown_nodes++;
		g_snprintf(d->last_error, sizeof d->last_error, "a shared detection from node%u, not in the nodes file (%" G_GUINT64_FORMAT " so far)",
			   e->node, d->unknown_nodes);
		return;
	}
	share_in(d, e, late);
}

/* Worker thread: fetch the clips and solve (solve.h).  Only the job's own
 * data. */
static void work(gpointer data, gpointer user)
{
	job *j = data;
	collabd *d = j->d;
	collab_solve_ctx c = {&d->cfg, d->nodes, d->c_m_s, d->c_sd_m_s, d->key, d->klen};
	collab_solve_group(&c, j->gr->dets, &j->res, &j->note);
}

static gboolean publish_idle(gpointer data);

/* A job the pool never started (collab stopping): its group and itself. */
static void job_drop(gpointer data)
{
	job *j = data;
	collab_group_free(j->gr);
	g_free(j);
}

static void work_and_return(gpointer data, gpointer user)
{
	work(data, user);
	job *j = data;
	/* FFTW remembers every transform size planned (apps/dsp/xcorr.h),
	 * and a solve's sizes follow its clips: forgotten here, where all of
	 * collab's planning happens.  A solve's clips, spectra and search
	 * cells were this thread's arena's largest blocks: given back when no
	 * job waits. */
	dsp_fft_forget();
	if (g_thread_pool_unprocessed(j->d->pool) == 0)
		dev_heap_trim();
	g_main_context_invoke(j->d->ctx, publish_idle, j);
}

/* The wait of a job to be solved again is over: back to the worker. */
static gboolean on_retry(gpointer data)
{
	job *j = data;
	j->retry_src = 0;
	j->d->retrying = g_list_remove(j->d->retrying, j);
	g_thread_pool_push(j->d->pool, j, NULL);
	return G_SOURCE_REMOVE;
}

static gboolean publish_idle(gpointer data)
{
	job *j = data;
	collabd *d = j->d;
	collab_result *r = &j->res;
	if (j->note.dump_rc > 0)
		d->dumped++;
	else if (j->note.dump_rc < 0) {
		d->dump_failed++;
		g_warning("call %" G_GUINT64_FORMAT ": its inputs were not kept: %s", r->seq, j->note.dump_err);
		g_snprintf(d->last_error, sizeof d->last_error, "dump_dir: %s", j->note.dump_err);
	}
	j->note.dump_rc = 0;
	if (j->note.again && strcmp(collab_result_status(r), "ok") && j->tries < (guint)d->cfg.clip_retries) {
		/* A node could not serve its clip yet (its clocks converging, a
		 * timescale just joined, its collab restarting or stopped) and
		 * the answer without it is not ok (failed, or untested for the
		 * arrival it lacks): solve the group again shortly rather than
		 * lose the call. */
		j->tries++;
		d->clip_retries++;
		g_message("call %" G_GUINT64_FORMAT ": %s; solving it again in %d s (%u of %" G_GINT64_FORMAT ")", r->seq, r->why,
			  COLLAB_CLIP_RETRY_S, j->tries, d->cfg.clip_retries);
		*r = j->init;
		j->retry_src = g_timeout_add_seconds(COLLAB_CLIP_RETRY_S, on_retry, j);
		d->retrying = g_list_prepend(d->retrying, j);
		return G_SOURCE_REMOVE;
	}
	if (r->rc == 0) {
		/* Emission time: the reference arrival plus the solver's t0. */
		double t = (double)r->tr.ref_t_frac_ns + r->tr.loc.t0_s * 1e9;
		r->t_global_ns = r->tr.ref_t_ns + (int64_t)floor(t + 0.5);
		/* The emission rests on the reference's detected onset: its
		 * error (with the misfit floor) adds to the solve's. */
		r->t_se_ns = hypot(sqrt(r->tr.loc.cov[r->tr.loc.dim][r->tr.loc.dim]) * 1e9, r->tr.ref_t_se_ns);
		r->t_crb_se_ns = hypot(sqrt(r->tr.loc.cov[r->tr.loc.dim][r->tr.loc.dim]) * 1e9, r->tr.ref_t_crb_se_ns);
		sync_graph_result cr;
		char why[256];
		if (sync_client_convert(d->clocks, sync_clock_global(), sync_clock_cpu((uint32_t)d->cfg.node),
					sync_tval_of(r->t_global_ns), &cr, why, sizeof why) == 0)
			r->t_cpu_ns = cr.value.i;
	}
	/* Latency: now (global) minus the end of the call at the last node. */
	int64_t end = INT64_MIN;
	for (guint i = 0; i < j->gr->dets->len; i++) {
		const det_event *e = &g_array_index(j->gr->dets, det_event, i);
		end = MAX(end, e->global_ns + (int64_t)(e->duration_s * 1e9));
	}
	sync_graph_result nr;
	char why[256];
	if (sync_client_convert(d->clocks, sync_clock_cpu((uint32_t)d->cfg.node), sync_clock_global(),
				sync_tval_of(sync_now(SYNC_KIND_CPU)), &nr, why, sizeof why) == 0)
		r->latency_s = (double)(nr.value.i - end) * 1e-9;
	/* One sound, one answer: a result locating what an earlier one of
	 * this node located is a duplicate. */
	if (r->rc == 0 && r->tr.loc.status == DSP_LOC_OK && !r->tr.ambiguous) {
		for (guint i = 0; i < MIN(d->n_recent, G_N_ELEMENTS(d->recent)) && !r->duplicate_of; i++)
			if (collab_result_same_sound(&d->recent[i], r))
				r->duplicate_of = d->recent[i].seq;
		if (!r->duplicate_of)
			d->recent[d->n_recent++ % G_N_ELEMENTS(d->recent)] = *r;
		else
			d->duplicates++;
	}
	/* A call answered untested, completed by late arrivals: this answer
	 * replaces the first (group.h). */
	for (guint i = 0; j->gr->again && i < MIN(d->n_answers, G_N_ELEMENTS(d->answers)); i++)
		if (d->answers[i].group == j->gr->id)
			r->supersedes = d->answers[i].seq;
	if (j->gr->again) {
		d->superseding++;
		if (r->supersedes)
			g_message("call %" G_GUINT64_FORMAT ": answered again with %u arrivals, late ones among them: it supersedes call %" G_GUINT64_FORMAT,
				  r->seq, j->gr->dets->len, r->supersedes);
		else
			g_message("call %" G_GUINT64_FORMAT ": answered again with %u arrivals, late ones among them (the first answer is older than this collab remembers)",
				  r->seq, j->gr->dets->len);
	}
	d->answers[d->n_answers % G_N_ELEMENTS(d->answers)].group = j->gr->id;
	d->answers[d->n_answers++ % G_N_ELEMENTS(d->answers)].seq = r->seq;
	GString *s = g_string_new(NULL);
	collab_result_json(r, s);
	dev_packet_send(d->events, s->str, s->len);
	/* The durable record: each result whole on the disk (appendlog.h). */
	int e = d->jsonl >= 0 ? dev_appendlog_line(d->jsonl, s->str, s->len) : 0;
	if (e < 0) {
		/* A result the file lost: said on collab/status and by the exit status. */
		d->jsonl_failed++;
		g_snprintf(d->last_error, sizeof d->last_error, "%s: %s (%" G_GUINT64_FORMAT " results not written)",
			   d->jsonl_path, g_strerror(-e), d->jsonl_failed);
		g_warning("%s", d->last_error);
	}
	d->late_located += r->rc == 0 && r->late;
	if (r->rc == 0) {
		d->located++;
		d->last_latency_s = r->latency_s;
		g_message("call %" G_GUINT64_FORMAT ": (%.3f, %.3f) m, %s, %d nodes", r->seq, r->tr.loc.pos_m[0], r->tr.loc.pos_m[1],
			  collab_result_status(r), r->n);
	} else {
		d->failed++;
		g_message("call %" G_GUINT64_FORMAT " not located: %s", r->seq, s->str);
	}
	if (*d->cfg.map && (d->located + d->failed) % (guint64)d->cfg.map_every == 0) {
		char w[256];
		if (collab_map(d->jsonl_path, d->nodes, NULL, 0, d->cfg.map, "chorus collab", w, sizeof w) < 0)
			g_snprintf(d->last_error, sizeof d->last_error, "map: %s", w);
	}
	g_string_free(s, TRUE);
	collab_group_free(j->gr);
	g_free(j);
	dev_status_notify(d->status);
	return G_SOURCE_REMOVE;
}

/* When the root libsync reports changes from one node to another, the
 * grouped detections are timed again (collab_retime_grouped): at once, and
 * 2 s and 10 s after (another node's detection timed on the old timescale
 * just before its own switch may arrive after ours; this node's own are
 * checked as they come, collab_retime_local).  Each pass converts every
 * detection the grouper holds — with an hour of small groups remembered,
 * thousands — so there are three, not one a second.  A root that
 * continued the old one's timescale (it died) moves nothing. */
static const int64_t regroup_after_ns[] = {0, 2000000000LL, 10000000000LL};
#define REGROUP_PASSES (sizeof regroup_after_ns / sizeof *regroup_after_ns)
static void check_timescale(collabd *d)
{
	uint32_t node, root;
	sync_client_info(d->clocks, &node, &root);
	int64_t now = sync_now(SYNC_KIND_CPU);
	gboolean changed = FALSE;
	if (root != SYNC_TICKER_NO_ROOT && root != d->root) {
		changed = d->root != SYNC_TICKER_NO_ROOT; /* the first root known changes nothing */
		if (changed) {
			g_message("collab: global's root is node%u (was node%u): timing the grouped detections again",
				  root, d->root);
			d->regroup_from = now;
			d->regroup_passes = 0;
		}
		d->root = root;
	}
	if (d->regroup_passes >= REGROUP_PASSES || now - d->regroup_from < regroup_after_ns[d->regroup_passes])
		return;
	d->regroup_passes++;
	GArray *lost = g_array_new(FALSE, FALSE, sizeof(det_event));
	d->retimed += collab_grouper_retime(d->grouper, collab_retime_grouped, &d->rt, now, COLLAB_LATE_RETIMED, lost);
	for (guint i = 0; i < lost->len; i++) {
		det_event *e = &g_array_index(lost, det_event, i);
		e->has_global = FALSE;
		if (d->held && isfinite(e->cpu_se_ns))
			collab_held_add(d->held, e);
	}
	g_array_free(lost, TRUE);
}

static gboolean on_poll(gpointer data)
{
	collabd *d = data;
	GPtrArray *closed = g_ptr_array_new();
	d->polls++;
	if (d->held && d->polls % 10 == 0)
		retry_held(d); /* every second */
	check_timescale(d);
	collab_grouper_poll(d->grouper, sync_now(SYNC_KIND_CPU), closed);
	for (guint i = 0; i < closed->len; i++) {
		collab_group *gr = g_ptr_array_index(closed, i);
		d->groups++;
		if (collab_group_reporter(gr) != (uint32_t)d->cfg.node) {
			d->not_mine++;
			collab_group_free(gr);
		} else if (gr->dets->len < (guint)d->cfg.min_nodes) {
			d->small_groups++;
			collab_group_free(gr);
		} else if (collab_group_answered_elsewhere(gr, (guint)d->cfg.min_nodes)) {
			/* The others located it without this node (group.h). */
			d->late_elsewhere++;
			g_message("call at global %" G_GINT64_FORMAT " ns: not solved here, %u of its detections came as resends "
				  "(answered by their nodes while this one was cut off)",
				  gr->first_ns, gr->resent->len);
			collab_group_free(gr);
		} else {
			job *j = g_new0(job, 1);
			j->d = d;
			j->gr = gr;
			j->res.reporter = (uint32_t)d->cfg.node;
			j->res.seq = ++d->seq;
			j->res.latency_s = NAN;
			j->res.t_cpu_ns = INT64_MIN;
			j->res.onset_cpu_ns = INT64_MIN;
			j->res.late = gr->late;
			for (guint k = 0; k < gr->dets->len; k++) {
				const det_event *e = &g_array_index(gr->dets, det_event, k);
				if (e->node == (uint32_t)d->cfg.node && isfinite(e->cpu_se_ns))
					j->res.onset_cpu_ns = e->cpu_ns;
			}
			j->init = j->res;
			g_thread_pool_push(d->pool, j, NULL);
		}
	}
	g_ptr_array_free(closed, TRUE);
	return G_SOURCE_CONTINUE;
}

/* collab_share_cfg.now_cpu: this node's cpu clock (chorus-sim's virtual
 * one in simulation), the clock of det_event.cpu_ns. */
static int64_t now_cpu(void *ctx)
{
	return sync_now(SYNC_KIND_CPU);
}

/* collab_share_cfg.reachable through the receive filter. */
static gboolean peer_reachable(void *ctx, uint32_t peer)
{
	return syncd_rxf_reachable(ctx, peer, sync_now(SYNC_KIND_CPU));
}

static int status_text(void *user, GString *out)
{
	collabd *d = user;
	collab_share_stats ss;
	collab_share_counts(d->share, &ss);
	g_string_append_printf(out, "node %" G_GINT64_FORMAT " nodes=%u aperture_m=%.1f c=%.1f\n", d->cfg.node,
			       d->nodes->nodes->len, collab_nodes_aperture(d->nodes), d->c_m_s);
	g_string_append_printf(out, "detections local=%" G_GUINT64_FORMAT " shared=%" G_GUINT64_FORMAT " share_failed=%" G_GUINT64_FORMAT " received=%" G_GUINT64_FORMAT " rejected=%" G_GUINT64_FORMAT " bad_auth=%" G_GUINT64_FORMAT " replays=%" G_GUINT64_FORMAT " unknown_node=%" G_GUINT64_FORMAT " cut_off=%" G_GUINT64_FORMAT "\n",
			       d->local_dets, ss.sent, d->share_failed, ss.accepted, ss.rejected, ss.bad_auth, ss.replays,
			       d->unknown_nodes, ss.cut_off);
	g_string_append_printf(out, "security %s\n", d->klen ? "authenticated (HMAC-SHA256)" : "UNAUTHENTICATED");
	if (*collab_share_last_refusal(d->share))
		g_string_append_printf(out, "last refused datagram: %s\n", collab_share_last_refusal(d->share));
	g_string_append_printf(out, "groups closed=%" G_GUINT64_FORMAT " open=%u reported_elsewhere=%" G_GUINT64_FORMAT " too_small=%" G_GUINT64_FORMAT " located=%" G_GUINT64_FORMAT " failed=%" G_GUINT64_FORMAT " clip_retries=%" G_GUINT64_FORMAT " retrying=%u\n",
			       d->groups, collab_grouper_open(d->grouper), d->not_mine, d->small_groups, d->located, d->failed,
			       d->clip_retries, g_list_length(d->retrying));
	g_string_append_printf(out, "duplicates=%" G_GUINT64_FORMAT " regrouped=%" G_GUINT64_FORMAT " moved=%" G_GUINT64_FORMAT " retimed=%" G_GUINT64_FORMAT " split=%" G_GUINT64_FORMAT "\n",
			       d->duplicates, collab_grouper_merged(d->grouper), collab_grouper_moved(d->grouper), d->retimed,
			       collab_grouper_splits(d->grouper));
	uint64_t cb = 0, cn = 0;
	if (d->local)
		dev_packet_sub_cursor(d->local, &cb, &cn);
	collab_resume_describe(d->resume, cb, cn, out);
	if (d->outbox) {
		collab_outbox_stats os;
		collab_outbox_counts(d->outbox, &os);
		g_string_append_printf(out, "queue %s queued=%u max=%" G_GINT64_FORMAT " added=%" G_GUINT64_FORMAT " dropped=%" G_GUINT64_FORMAT " write_errors=%" G_GUINT64_FORMAT " torn=%" G_GUINT64_FORMAT "\n",
				       collab_outbox_path(d->outbox), os.queued, d->cfg.queue_max, os.added, os.dropped,
				       os.write_errors, os.torn);
		g_string_append_printf(out, "catchup late=%" G_GUINT64_FORMAT " duplicates=%" G_GUINT64_FORMAT " missing=%" G_GUINT64_FORMAT " lost=%" G_GUINT64_FORMAT " have_sent=%" G_GUINT64_FORMAT " want_sent=%" G_GUINT64_FORMAT " wanted=%" G_GUINT64_FORMAT " resent=%" G_GUINT64_FORMAT " pending=%u gone=%" G_GUINT64_FORMAT " retimed=%" G_GUINT64_FORMAT " since_sent=%" G_GUINT64_FORMAT " since_answered=%" G_GUINT64_FORMAT " pulled=%" G_GUINT64_FORMAT "\n",
				       ss.late, ss.duplicates, ss.missing, ss.lost, ss.have_sent, ss.want_sent, ss.wanted,
				       ss.resent, ss.pending, ss.gone, ss.retimed, ss.since_sent, ss.since_answered, ss.pulled);
		g_string_append_printf(out, "late groups_reopened=%" G_GUINT64_FORMAT " kept=%" G_GUINT64_FORMAT " located=%" G_GUINT64_FORMAT " answered_elsewhere=%" G_GUINT64_FORMAT " answered_again=%" G_GUINT64_FORMAT " remembered=%u\n",
				       d->late_reopened, d->late_kept, d->late_located, d->late_elsewhere, d->superseding, collab_grouper_kept(d->grouper));
		collab_held_stats hs;
		collab_held_counts(d->held, &hs);
		g_string_append_printf(out, "held without global time=%u added=%" G_GUINT64_FORMAT " converted=%" G_GUINT64_FORMAT " dropped=%" G_GUINT64_FORMAT "\n",
				       hs.held, hs.added, hs.converted, hs.dropped);
		if (os.write_errors)
			g_string_append_printf(out, "error the queue %s failed %" G_GUINT64_FORMAT " writes: those detections would not survive a restart\n",
					       collab_outbox_path(d->outbox), os.write_errors);
	} else {
		g_string_append(out, "queue off (detections missed during an outage are not caught up)\n");
	}
	clip_server_describe(d->clips, out);
	g_string_append_printf(out, "latency_s last=%.3f\nresults %s\n", d->last_latency_s, d->jsonl_path);
	if (*d->cfg.dump_dir)
		g_string_append_printf(out, "dump %s written=%" G_GUINT64_FORMAT " failed=%" G_GUINT64_FORMAT "\n", d->cfg.dump_dir,
				       d->dumped, d->dump_failed);
	if (*d->last_error)
		g_string_append_printf(out, "error %s\n", d->last_error);
	dev_heap_usage_append(out);
	return 0;
}

/* name in systemd's StateDirectory= (outlives reboots), else in the run
 * directory; NULL + *why. */
static char *state_path(const char *name, const char **why)
{
	if (g_getenv("STATE_DIRECTORY") && *g_getenv("STATE_DIRECTORY")) {
		gchar **dirs = g_strsplit(g_getenv("STATE_DIRECTORY"), ":", 2);
		char *p = g_build_filename(dirs[0], name, NULL);
		g_strfreev(dirs);
		return p;
	}
	char run[DEV_PATH_MAX];
	if (dev_run_dir(run, sizeof run, why) < 0)
		return NULL;
	g_mkdir_with_parents(run, 0755);
	return g_build_filename(run, name, NULL);
}

static gboolean on_signal(gpointer data)
{
	g_main_loop_quit(data);
	return G_SOURCE_REMOVE;
}

int main(int argc, char **argv)
{
	char *conf = NULL, *nodes = NULL, *jsonl = NULL, *map = NULL;
	GOptionEntry entries[] = {
		{"config", 'c', 0, G_OPTION_ARG_FILENAME, &conf, "configuration file (default /etc/chorus/collab.conf)", "FILE"},
		{"nodes", 0, 0, G_OPTION_ARG_FILENAME, &nodes, "nodes file (ID X Y Z [ADDRESS] per line)", "FILE"},
		{"jsonl", 0, 0, G_OPTION_ARG_FILENAME, &jsonl, "JSON-lines file of results", "FILE"},
		{"map", 0, 0, G_OPTION_ARG_FILENAME, &map, "PNG map of results", "FILE"},
		{NULL, 0, 0, 0, NULL, NULL, NULL},
	};
	int orc = cfg_options("collab", "- chorus collaborative localization", entries, collab_cfg_table, NULL, FALSE, &argc, &argv);
	if (orc >= 0)
		return orc;
	GError *err = NULL;
	const char *why;
	if (sync_now_init(&why) < 0) {
		fprintf(stderr, "collab: %s\n", why);
		return 2;
	}
	collabd d = {0};
	d.jsonl = -1;
	d.last_latency_s = NAN;
	d.root = SYNC_TICKER_NO_ROOT;
	d.regroup_passes = G_MAXUINT; /* none due before a root changes */
	const char *env = getenv("CHORUS_NODE");
	if (!cfg_defaults(collab_cfg_table, &d.cfg, &err) ||
	    (env && *env && !cfg_set(collab_cfg_table, &d.cfg, "collab", "node", env, "environment CHORUS_NODE: ", &err)) ||
	    !cfg_load(conf ? conf : "/etc/chorus/collab.conf", conf == NULL, collab_cfg_table, &d.cfg, &err)) {
		fprintf(stderr, "collab: %s\n", err->message);
		return 2;
	}
#define OVERRIDE(opt, field) \
	if (opt) { \
		g_free(d.cfg.field); \
		d.cfg.field = g_strdup(opt); \
	}
	OVERRIDE(nodes, nodes)
	OVERRIDE(jsonl, jsonl)
	OVERRIDE(map, map)
	if (*d.cfg.nodes)
		d.nodes = collab_nodes_load(d.cfg.nodes, &err);
	else
		g_set_error(&err, CFG_ERROR, EINVAL, "no node positions: set [collab] nodes (or --nodes FILE)");
	if (!d.nodes) {
		fprintf(stderr, "collab: %s\n", err->message);
		return 2;
	}
	if (!collab_nodes_find(d.nodes, (uint32_t)d.cfg.node))
		g_warning("node %" G_GINT64_FORMAT " is not in the node table: its own detections cannot be located",
			  d.cfg.node);
	dsp_gcc_weighting wt;
	if (dsp_gcc_weighting_parse(d.cfg.gcc_weighting, &wt) < 0) {
		fprintf(stderr, "collab: [collab] gcc_weighting = %s: not one of phat, scot, roth, cc\n", d.cfg.gcc_weighting);
		return 2;
	}
	/* The speed of sound as the field team knows it: measured, or from
	 * the air temperature they measured; each with its uncertainty. */
	if (d.cfg.speed_of_sound_m_s > 0) {
		d.c_m_s = d.cfg.speed_of_sound_m_s;
		d.c_sd_m_s = d.cfg.speed_of_sound_sd_m_s;
	} else {
		double dc_dt;
		d.c_m_s = dsp_speed_of_sound_m_s(d.cfg.temperature_c, &dc_dt);
		d.c_sd_m_s = d.cfg.temperature_sd_c * dc_dt;
	}
	d.jsonl_path = *d.cfg.jsonl ? g_strdup(d.cfg.jsonl) : state_path("collab.jsonl", &why);
	if (!d.jsonl_path) {
		fprintf(stderr, "collab: %s\n", why);
		return 2;
	}
	if ((d.jsonl = dev_appendlog_open(d.jsonl_path)) < 0) {
		fprintf(stderr, "collab: %s: %s\n", d.jsonl_path, g_strerror(-d.jsonl));
		return 2;
	}
	/* Aperture: the farthest two nodes apart, in sound travel time. */
	int64_t ap = (int64_t)(collab_nodes_aperture(d.nodes) / d.c_m_s * 1e9);
	d.grouper = collab_grouper_new(ap, (int64_t)(d.cfg.margin_ms * 1e6), (int64_t)(d.cfg.hold_s * 1e9));
	/* min_nodes arrivals test a 2-D answer (x, y, time and one to spare)
	 * only when the height is told; marginalised, it takes one more. */
	collab_grouper_hold_more(d.grouper, (guint)d.cfg.min_nodes + (d.cfg.source_plane ? 0 : 1),
				 (int64_t)(d.cfg.hold_untested_s * 1e9));
	collab_splitter_init(&d.splitter, d.nodes, d.c_m_s, d.cfg.onset_floor_ms * 1e-3,
			     d.cfg.source_plane ? d.cfg.source_z_m : NAN);
	collab_grouper_split(d.grouper, collab_splitter_split, &d.splitter);
	if (d.cfg.queue) {
		char *qp = *d.cfg.queue_file ? g_strdup(d.cfg.queue_file) : state_path("collab.outbox", &why);
		if (!qp) {
			fprintf(stderr, "collab: %s\n", why);
			return 2;
		}
		d.outbox = collab_outbox_open(qp, (guint)d.cfg.queue_max, (int64_t)(d.cfg.queue_s * 1e9), &err);
		g_free(qp);
		if (!d.outbox) {
			fprintf(stderr, "collab: [collab] queue_file: %s\n", err->message);
			return 2;
		}
		d.held = collab_held_new((guint)d.cfg.queue_max, (int64_t)(d.cfg.queue_s * 1e9));
		/* Closed groups wait as long for late detections. */
		collab_grouper_keep(d.grouper, (guint)d.cfg.min_nodes, (int64_t)(d.cfg.queue_s * 1e9), (guint)d.cfg.queue_max);
	} else {
		/* Without a queue, closed groups are remembered for the detections
		 * that come after the hold (group.h): a detector publishes a call
		 * overlapped by others when the last of them ends. */
		collab_grouper_keep(d.grouper, (guint)d.cfg.min_nodes, (int64_t)(COLLAB_REGROUP_S * 1e9), 1024);
	}
	d.ctx = g_main_context_default();
	GMainLoop *loop = g_main_loop_new(NULL, FALSE);
	dev_heap_trim_start(DEV_HEAP_TRIM_S); /* resident memory follows what is in use (libdev/heap.h) */
	/* The solver's one-time state made now, not at the first call heard
	 * (warmup.h); before the pool's thread exists, which alone solves. */
	char wwhy[256];
	if (collab_warm_up(wwhy, sizeof wwhy) < 0) {
		g_warning("%s", wwhy);
		g_strlcpy(d.last_error, wwhy, sizeof d.last_error);
	}
	d.pool = g_thread_pool_new_full(work_and_return, NULL, job_drop, 1, FALSE, NULL);
	dev_packet_ops pops = {0};
	int port = (int)(collab_nodes_find(d.nodes, (uint32_t)d.cfg.node) &&
					 collab_nodes_find(d.nodes, (uint32_t)d.cfg.node)->address
				 ? d.cfg.clip_port
				 : d.cfg.clip_port + d.cfg.node);
	/* Secure by default: beyond loopback, only with the field's key or
	 * insecure = true. */
	gboolean networked = !dev_netkey_is_loopback(d.cfg.share_address) || !collab_clip_bind_is_loopback(d.cfg.clip_bind);
	if (*d.cfg.key_file) {
		if (!dev_netkey_load("collab", d.cfg.key_file, &d.key, &d.klen, &err)) {
			fprintf(stderr, "collab: %s\n", err->message);
			return 2;
		}
	} else if (networked && !d.cfg.insecure) {
		fprintf(stderr, "collab: share_address %s / clip_bind %s reach beyond loopback without key_file: anyone on the "
				"network could forge detections or fetch the field's audio.  Set key_file to the field's key "
				"(syncd's [rbs] key_file), or insecure = true to run unauthenticated (docs/deployment.md)\n",
			d.cfg.share_address, d.cfg.clip_bind);
		return 2;
	}
	char boot_note[240];
	char *boot_path = g_getenv("STATE_DIRECTORY") && *g_getenv("STATE_DIRECTORY")
				  ? g_build_filename(g_getenv("STATE_DIRECTORY"), "collab.boot", NULL)
				  : NULL;
	if (boot_path && strchr(boot_path, ':'))
		*strchr(boot_path, ':') = 0; /* the first of several state directories */
	uint64_t boot = dev_bootid_next(boot_path, boot_note, sizeof boot_note);
	if (*boot_note)
		g_warning("collab: %s", boot_note);
	g_free(boot_path);
	/* A receive filter in the environment (chorus-sim's radio) says when
	 * a node is cut off; a field node runs without one. */
	if (!syncd_rxf_load_env((uint32_t)d.cfg.node, &d.filter, &err)) {
		fprintf(stderr, "collab: %s\n", err->message);
		return 1;
	}
	d.rt.node = (uint32_t)d.cfg.node;
	d.rt.reach_ns = (int64_t)(d.cfg.queue_s * 1e9);
	collab_share_cfg scfg = {(uint32_t)d.cfg.node, d.cfg.share_address, (int)d.cfg.share_port, d.key, d.klen, boot,
				 (uint32_t)d.cfg.max_peers, d.filter ? peer_reachable : NULL, d.filter, d.outbox,
				 (uint32_t)d.cfg.queue_max, (guint)d.cfg.catchup_ms, (guint)d.cfg.resend_per_s, collab_retime_resent, &d.rt, now_cpu, NULL};
	clip_server_cfg ccfg = {(uint32_t)d.cfg.node, (int)d.cfg.device, port, d.cfg.clip_bind, d.key, d.klen,
				(unsigned)d.cfg.clip_max_conn, (int64_t)(d.cfg.queue_s * 1e9)};
	/* Resume detect/events after the last detection the previous run
	 * handled (beside the outbox, in the state directory). */
	char *cp = state_path(COLLAB_CURSOR, &why);
	if (!cp) {
		fprintf(stderr, "collab: %s\n", why);
		return 2;
	}
	char *cdir = g_path_get_dirname(cp);
	d.resume = collab_resume_new(cdir, sync_now(SYNC_KIND_CPU), d.cfg.queue_s);
	g_free(cdir);
	g_free(cp);
	uint64_t cboot, cnext;
	collab_resume_from(d.resume, &cboot, &cnext);
	dev_options eopt;
	dev_options_init(&eopt);
	eopt.history = (size_t)d.cfg.history;
	int rc = 0;
	if (!(d.clocks = sync_client_new(NULL, NULL, NULL, NULL, &err)) ||
	    !(d.events = dev_packet_new("collab/events", &eopt, NULL, &pops, &d, &err)) ||
	    !(d.status = dev_status_new("collab/status", NULL, NULL, status_text, NULL, &d, &err)) ||
	    !(d.share = collab_share_new(&scfg, on_remote, &d, &err)) ||
	    !(d.clips = clip_server_new(&ccfg, d.clocks, NULL, &err)) ||
	    !(d.local = dev_packet_sub_new_from("detect/events", NULL, 0, cboot, cnext, NULL, on_local,
						NULL, &d, &err))) {
		fprintf(stderr, "collab: %s\n", err->message);
		rc = 1;
	} else {
		d.rt.clocks = d.clocks;
		g_timeout_add(100, on_poll, &d);
		g_unix_signal_add(SIGINT, on_signal, loop);
		g_unix_signal_add(SIGTERM, on_signal, loop);
		g_message("node%" G_GINT64_FORMAT ": %u nodes, aperture %.1f m (%.1f ms), c %.1f m/s; clips on TCP %d, "
			  "sharing on UDP %s:%" G_GINT64_FORMAT,
			  d.cfg.node, d.nodes->nodes->len,
			  collab_nodes_aperture(d.nodes), ap * 1e-6, d.c_m_s, port, d.cfg.share_address, d.cfg.share_port);
		sd_notify(0, "READY=1\nSTATUS=collaborating");
		g_main_loop_run(loop);
		sd_notify(0, "STOPPING=1");
	}
	g_thread_pool_free(d.pool, TRUE, TRUE); /* finish the job in progress */
	d.pool = NULL;
	while (g_main_context_iteration(NULL, FALSE))
		; /* publish what finished */
	while (d.retrying) {
		/* Groups waiting to be solved again: published as they failed. */
		job *j = d.retrying->data;
		d.retrying = g_list_delete_link(d.retrying, d.retrying);
		g_source_remove(j->retry_src);
		j->tries = G_MAXUINT;
		publish_idle(j);
	}
	if (!rc && *d.cfg.map) {
		char w[256];
		if (collab_map(d.jsonl_path, d.nodes, NULL, 0, d.cfg.map, "chorus collab", w, sizeof w) < 0)
			g_warning("map: %s", w);
	}
	dev_packet_sub_free(d.local);
	collab_resume_free(d.resume);
	clip_server_free(d.clips);
	collab_share_free(d.share);
	collab_outbox_free(d.outbox);
	collab_held_free(d.held);
	syncd_rxf_free(d.filter);
	g_free(d.key);
	dev_status_free(d.status);
	dev_packet_free(d.events);
	sync_client_free(d.clocks);
	collab_grouper_free(d.grouper);
	collab_nodes_free(d.nodes);
	cfg_clear(collab_cfg_table, &d.cfg);
	int ce = d.jsonl >= 0 ? dev_appendlog_close(d.jsonl) : 0;
	if (ce < 0) {
		fprintf(stderr, "collab: %s: %s\n", d.jsonl_path, g_strerror(-ce));
		rc = 1;
	}
	if (d.jsonl_failed) {
		fprintf(stderr, "collab: %" G_GUINT64_FORMAT " results were not written to %s\n", d.jsonl_failed, d.jsonl_path);
		rc = 1;
	}
	g_free(d.jsonl_path);
	g_free(conf);
	g_free(nodes);
	g_free(jsonl);
	g_free(map);
	g_main_loop_unref(loop);
	return rc;
}
