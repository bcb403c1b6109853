/* stream.c — the capture thread (see stream.h). */
#include "audiod/stream.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <glib-unix.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "audiod/error.h"
#include "audiod/follow.h"
#include "audiod/latency.h"
#include "audiod/numbering.h"
#include "libdev/ratelog.h"
#include "kpatch/reader.h"
#include "libsync/now.h"

struct stream {
	stream_cfg cfg;
	char *pcm_name;
	capture *cap;
	audio_ring *ring;
	struct kpatch_reader *kp; /* kpatch or sim FIFO; NULL for alsa */
	tsrc_kind source;
	GMainContext *main_ctx;
	stream_event_fn fn;
	void *user;
	GThread *thread;
	GAsyncQueue *events;   /* stream_event* from the thread to the main context */
	int efd;               /* eventfd: wakes the main context */
	GSource *efd_src;      /* its source on main_ctx */
	gint stop;             /* atomic */
	follow_set *followers; /* woken by the capture thread after each commit */
	uint8_t *buf;          /* one read's worth of frames; the hold while restarting */
	snd_pcm_uframes_t buf_frames;

	/* capture-thread state */
	numbering *num;   /* frame indices, gaps, the restart after an overrun */
	int64_t notified; /* the ring's next frame when followers were last woken */
	stream_event ev;  /* being filled */
	GMutex lock;      /* guards st, lat, the path histograms */
	stream_stats st;
	latency_hist lat;
	/* wakeup -> queued -> handled -> sent (stream_stats), over windows of
	 * PATH_WINDOW_NS: [0] the one filling, [1] the last complete one */
	latency_hist commit[2], dispatch[2], send[2];
	latency_hist notify[2]; /* wakeup -> every follower's eventfd written, when there are followers */
	int64_t path_since;     /* cpu time window [0] began */
	latency_hist bracket;   /* records' update_ns: entry to after the hw_ptr update */
};

#define PATH_WINDOW_NS 2000000000LL

int stream_open(const stream_cfg *cfg, GMainContext *main_ctx, stream_event_fn fn, void *user,
		stream **out, GError **err)
{
	stream *s = g_new0(stream, 1);
	const char *why;
	s->efd = -1;
	int rc;
	s->cfg = *cfg;
	s->pcm_name = g_strdup(cfg->cap.pcm);
	s->cfg.cap.pcm = s->pcm_name;
	s->main_ctx = main_ctx;
	s->fn = fn;
	s->user = user;
	g_mutex_init(&s->lock);
	if ((rc = capture_open(&s->cfg.cap, &s->cap, err)) < 0)
		goto fail;
	const capture_cfg *a = capture_actual(s->cap);
	uint64_t cap_frames = (uint64_t)ceil(cfg->ring_s * a->rate_hz);
	rc = audio_ring_create((uint32_t)capture_frame_bytes(s->cap), cap_frames, a->rate_hz, a->channels,
			       (uint32_t)a->format, 0, &s->ring);
	if (rc < 0) {
		g_set_error(err, AUDIOD_ERROR, -rc, "%s: cannot create a ring of %.1f s: %s", s->pcm_name,
			    cfg->ring_s, g_strerror(-rc));
		goto fail;
	}
	if ((rc = tsrc_open(cfg->tstamp, s->cap, s->pcm_name, cfg->sidechannel, &s->source, &s->kp, err)) < 0)
		goto fail;
	s->buf_frames = a->buffer;
	s->buf = g_malloc(s->buf_frames * capture_frame_bytes(s->cap));
	numbering_params np = {.rate_hz = a->rate_hz, .period = a->period, .buffer = a->buffer, .boundary = capture_boundary(s->cap)};
	if (!(s->num = numbering_new(&np, &why))) {
		g_set_error(err, AUDIOD_ERROR, EINVAL, "%s: %s", s->pcm_name, why);
		rc = -EINVAL;
		goto fail;
	}
	/* snd_pcm_prepare (at open and after every overrun) resets hw_ptr to
	 * 0, and the kpatch and simulator records count from there. */
	numbering_set_hw_start(s->num, 0);
	s->followers = follow_set_new(STREAM_MAX_FOLLOWERS);
	s->events = g_async_queue_new_full(g_free);
	s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->efd < 0) {
		rc = -errno;
		g_set_error(err, AUDIOD_ERROR, errno, "eventfd: %s", g_strerror(errno));
		goto fail;
	}
	s->st.source = s->source;
	g_strlcpy(s->st.source_path, s->kp ? kpatch_reader_path(s->kp) : "", sizeof s->st.source_path);
	*out = s;
	return 0;
fail:
	stream_free(s);
	return rc;
}

/* Main context: hand every queued event to the service. */
static gboolean on_events(gint fd, GIOCondition cond, gpointer data)
{
	stream *s = data;
	uint64_t n;
	stream_event *ev;
	if (read(fd, &n, sizeof n) < 0 && errno != EAGAIN)
		g_warning("audiod: eventfd read: %s", g_strerror(errno));
	while ((ev = g_async_queue_try_pop(s->events))) {
		int64_t t_main = sync_now(SYNC_KIND_CPU);
		s->fn(s->user, ev);
		int64_t t_sent = sync_now(SYNC_KIND_CPU);
		g_mutex_lock(&s->lock);
		if (t_main - s->path_since >= PATH_WINDOW_NS) {
			s->commit[1] = s->commit[0];
			s->dispatch[1] = s->dispatch[0];
			s->send[1] = s->send[0];
			s->notify[1] = s->notify[0];
			memset(&s->notify[0], 0, sizeof s->notify[0]);
			memset(&s->commit[0], 0, sizeof s->commit[0]);
			memset(&s->dispatch[0], 0, sizeof s->dispatch[0]);
			memset(&s->send[0], 0, sizeof s->send[0]);
			s->path_since = t_main;
		}
		latency_add(&s->commit[0], ev->post_ns - ev->wake_ns);
		latency_add(&s->dispatch[0], t_main - ev->post_ns);
		latency_add(&s->send[0], t_sent - t_main);
		g_mutex_unlock(&s->lock);
		g_free(ev);
	}
	return G_SOURCE_CONTINUE;
}

/* Capture thread: queue the event being filled and wake the main context. */
static void post(stream *s)
{
	uint64_t one = 1;
	s->ev.next = numbering_next(s->num);
	s->ev.post_ns = sync_now(SYNC_KIND_CPU);
	if (!s->ev.wake_ns)
		s->ev.wake_ns = s->ev.post_ns;
	g_async_queue_push(s->events, g_memdup2(&s->ev, sizeof s->ev));
	if (write(s->efd, &one, sizeof one) < 0 && errno != EAGAIN)
		g_warning("audiod: eventfd write: %s", g_strerror(errno));
	memset(&s->ev, 0, sizeof s->ev);
}

/* Capture thread: take what the numbering produced into the ring, the event
 * being filled and the counters, in the order numbering.h gives. */
static void apply(stream *s, const numbering_out *out)
{
	if (out->settled) {
		if (out->continued) {
			/* Nothing is written to the ring before the first run
			 * settles, so its origin can still move. */
			if (audio_ring_set_origin(s->ring, out->start) < 0)
				g_warning("%s: the ring cannot start at frame %" G_GINT64_FORMAT, s->pcm_name,
					  out->start);
			g_message("%s: frame numbering continues from the previous run at %" G_GINT64_FORMAT,
				  s->pcm_name, out->start);
		} else if (out->npred) {
			/* How far the other records' predictions lie above the
			 * least: the spread of the restart's own estimate. */
			g_message("%s: restart at frame %" G_GINT64_FORMAT " (s.e. %.2f) from %u records: median +%.1f, max +%.1f frames%s",
				  s->pcm_name, out->start, out->start_se, out->npred, out->pred_med, out->pred_max,
				  out->rejected ? " (early records left out)" : "");
		}
		if (out->implausible)
			g_warning("%s: the restart's predicted first frame was %.0f frames from what the nominal rate gives "
				  "since the last interrupt (a broken fit): numbered from the nominal rate, s.e. %.1f frames",
				  s->pcm_name, out->implausible_frames, out->start_se);
		if (!out->continued) {
			g_mutex_lock(&s->lock);
			s->st.restart_se_frames = out->start_se;
			s->st.restart_var_frames2 += out->start_se * out->start_se;
			g_mutex_unlock(&s->lock);
		}
		if (!out->continued && out->gap_to > out->gap_from) {
			uint64_t lost = (uint64_t)(out->gap_to - out->gap_from);
			s->ev.gap_from = out->gap_from;
			s->ev.gap_to = out->gap_to;
			audio_ring_skip(s->ring, lost);
			g_mutex_lock(&s->lock);
			s->st.frames_lost += lost;
			s->st.gaps++;
			g_mutex_unlock(&s->lock);
		}
		s->ev.brk = 1;
		s->ev.brk_from = out->start;
		if (out->flush)
			audio_ring_write(s->ring, s->buf, out->flush);
	}
	for (uint32_t i = 0; i < out->nobs; i++) {
		if (s->ev.nobs == STREAM_EVENT_OBS)
			post(s);
		s->ev.obs[s->ev.nobs].frame = out->obs[i].frame;
		s->ev.obs[s->ev.nobs].cpu_ns = out->obs[i].cpu_ns;
		s->ev.nobs++;
	}
	if (out->nobs) {
		g_mutex_lock(&s->lock);
		s->st.records += out->nobs;
		g_mutex_unlock(&s->lock);
	}
}

/* Drain the kpatch/sim FIFO into observations. */
static void read_records(stream *s, int64_t wake)
{
	struct chorus_kpatch_record rec[32];
	numbering_out out;
	int n;
	while ((n = kpatch_reader_read(s->kp, rec, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			/* The instant the frame hw_ptr was reached: before the
			 * time taken after ALSA's update (record version 2) on
			 * every driver, a one-sided delay as the lower envelope
			 * expects.  The entry time of snd_pcm_period_elapsed()
			 * precedes it on a driver that reads its position when
			 * ALSA asks (snd-dummy, snd-aloop, HDA's position
			 * register): the delay to that read would make it early,
			 * which no lower envelope can see (kpatch/README.md "What
			 * the time means").  The module stamps host
			 * CLOCK_MONOTONIC_RAW; the simulator already stamps the
			 * virtual node's cpu clock, at the interrupt, its hw_ptr
			 * on the period boundary (no update time). */
			int64_t t = kpatch_record_update_time(&rec[i]);
			int64_t cpu = (rec[i].flags & CHORUS_KPATCH_F_SIM) ? t : sync_host_to_node(SYNC_KIND_CPU, t);
			if (kpatch_record_has_update(&rec[i])) {
				g_mutex_lock(&s->lock);
				s->st.updated++;
				latency_add(&s->bracket, rec[i].update_ns);
				g_mutex_unlock(&s->lock);
			}
			numbering_record(s->num, rec[i].hw_ptr, cpu, &out);
			if (out.behind) {
				g_mutex_lock(&s->lock);
				guint64 k = ++s->st.behind;
				g_mutex_unlock(&s->lock);
				ratelog(G_LOG_LEVEL_WARNING, k, "%s: a timestamp record's hw_ptr %" G_GUINT64_FORMAT " is behind the last one's: left out",
					s->pcm_name, (guint64)rec[i].hw_ptr);
			}
			apply(s, &out);
			if (i == n - 1) {
				g_mutex_lock(&s->lock);
				if (wake - cpu > s->lat.max_ns) {
					/* When the worst came, and whether the
					 * thread had slept through a period. */
					s->st.lat_max_at_ns = wake;
					s->st.lat_max_records = (uint32_t)n;
				}
				latency_add(&s->lat, wake - cpu);
				g_mutex_unlock(&s->lock);
			}
		}
	}
	struct kpatch_reader_stats ks;
	kpatch_reader_get_stats(s->kp, &ks);
	g_mutex_lock(&s->lock);
	s->st.records_lost = ks.seq.seq_lost + ks.seq.overflows;
	s->st.malformed = ks.malformed;
	g_mutex_unlock(&s->lock);
}

/* While a restart is unsettled: read the new run's frames into buf after
 * those held (the ALSA buffer must not overrun meanwhile).  Returns 0 or
 * -EPIPE. */
static int hold_frames(stream *s)
{
	size_t fb = capture_frame_bytes(s->cap);
	uint64_t hold = numbering_held(s->num);
	long n = 0;
	while (hold < s->buf_frames && (n = capture_read(s->cap, s->buf + hold * fb, s->buf_frames - hold)) > 0) {
		numbering_hold(s->num, (uint64_t)n);
		hold += (uint64_t)n;
	}
	return n < 0 ? (int)n : 0;
}

/* While a restart is unsettled with ALSA timestamps: the new run's
 * observation of this wakeup (frames since the run began at the last
 * hw_ptr update, its time), taken before the hold reads as in read_frames.
 * They carry the same wakeup latency as the fit they are predicted from, so
 * the least prediction cancels it (the restart time alone left the index
 * 2-3 frames behind per overrun in the simulator). */
static void alsa_restart_obs(stream *s)
{
	int64_t ts;
	snd_pcm_uframes_t avail;
	if (numbering_wants_stamp(s->num) && capture_htimestamp(s->cap, &ts, &avail) == 0)
		numbering_stamp(s->num, avail, sync_host_to_node(SYNC_KIND_CPU, ts));
}

/* Capture thread: wake the followers if the ring moved since they were
 * last woken.  They read the ring themselves, with no hop through the main
 * loop (follow.h), so this comes right after each commit, before anything
 * else the wakeup does. */
static void notify_followers(stream *s, int64_t wake)
{
	int64_t next = numbering_next(s->num);
	if (next == s->notified)
		return;
	unsigned members = 0;
	follow_set_notify(s->followers, &members);
	s->notified = next;
	if (members) {
		int64_t done = sync_now(SYNC_KIND_CPU);
		g_mutex_lock(&s->lock);
		latency_add(&s->notify[0], done - wake);
		g_mutex_unlock(&s->lock);
	}
}

/* Read every frame ALSA holds into the ring.  Returns 0 or -EPIPE.
 * With ALSA timestamps, the timestamp is taken before the reads: a hw PCM
 * then reports the last hw_ptr update before our read (the interrupt's,
 * unless something else synced it), not the update snd_pcm_readi itself
 * makes; a plugin PCM (ioplug "real" timestamps: the time of the call)
 * reports the wakeup instead of the end of the transfer, which in the
 * simulator includes synthesising the period (~200 us measured). */
static int read_frames(stream *s, int64_t wake)
{
	long n;
	int got = 0, have_ts = 0;
	int64_t ts = 0, at = 0;
	if (s->source == TSRC_ALSA) {
		snd_pcm_uframes_t avail;
		if (capture_htimestamp(s->cap, &ts, &avail) == 0) {
			have_ts = 1;
			at = numbering_next(s->num) + (int64_t)avail;
		}
	}
	while ((n = capture_read(s->cap, s->buf, s->buf_frames)) > 0) {
		audio_ring_write(s->ring, s->buf, (uint64_t)n);
		numbering_wrote(s->num, (uint64_t)n);
		notify_followers(s, wake);
		got = 1;
	}
	if (n < 0)
		return (int)n;
	if (got && have_ts) {
		numbering_out out;
		int64_t cpu = sync_host_to_node(SYNC_KIND_CPU, ts);
		numbering_observe(s->num, at, cpu, &out);
		apply(s, &out);
		/* No interrupt time to measure the wakeup against: ALSA's stamp
		 * is the hw_ptr update (for a plugin, the call itself, after the
		 * wakeup).  The histogram stays empty (status: latency_us n=0). */
	}
	return 0;
}

static void overrun(stream *s)
{
	/* Records of the run that just ended belong to its numbering: take
	 * them before the new run's first record resets the base. */
	if (s->kp && !numbering_restarting(s->num))
		read_records(s, sync_now(SYNC_KIND_CPU));
	int rc = capture_recover(s->cap, -EPIPE);
	g_mutex_lock(&s->lock);
	s->st.xruns++;
	g_mutex_unlock(&s->lock);
	if (rc == 0)
		rc = capture_start(s->cap);
	if (rc < 0)
		g_warning("%s: cannot restart after overrun: %s", s->pcm_name, snd_strerror(rc));
	numbering_overrun(s->num, sync_now(SYNC_KIND_CPU));
}

int stream_continue_numbering(stream *s, const int64_t *cpu, const int64_t *frame, int n)
{
	return numbering_continue(s->num, cpu, frame, n);
}

static gpointer capture_thread(gpointer data)
{
	stream *s = data;
	numbering_out out;
	if (s->cfg.rt_priority > 0) {
		struct sched_param sp = {.sched_priority = s->cfg.rt_priority};
		int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (rc)
			g_warning("%s: SCHED_FIFO priority %d not permitted (%s); capturing at normal priority",
				  s->pcm_name, s->cfg.rt_priority, g_strerror(rc));
		g_mutex_lock(&s->lock);
		s->st.rt = rc == 0;
		g_mutex_unlock(&s->lock);
	}
	int rc = capture_start(s->cap);
	if (rc < 0)
		g_warning("%s: cannot start capture: %s", s->pcm_name, snd_strerror(rc));
	/* A continued numbering settles the first run like a restart. */
	numbering_start(s->num, sync_now(SYNC_KIND_CPU));
	while (!g_atomic_int_get(&s->stop)) {
		rc = capture_poll(s->cap, 100);
		/* The wakeup itself: stamped before ALSA's processing of the
		 * descriptors, which is part of the capture thread's work. */
		int64_t wake = sync_now(SYNC_KIND_CPU);
		if (rc > 0)
			rc = capture_revents(s->cap);
		if (!s->ev.wake_ns)
			s->ev.wake_ns = wake; /* the first wakeup of the event being filled */
		if (rc == -EPIPE) {
			overrun(s);
			continue;
		}
		if (rc < 0) {
			g_warning("%s: poll: %s", s->pcm_name, g_strerror(-rc));
			g_usleep(10000);
			continue;
		}
		if (s->kp)
			read_records(s, wake);
		if (numbering_restarting(s->num)) {
			if (!s->kp)
				alsa_restart_obs(s);
			if (hold_frames(s) == -EPIPE) {
				overrun(s);
				continue;
			}
			numbering_wakeup_end(s->num, &out);
			apply(s, &out);
		}
		if (!numbering_restarting(s->num) && read_frames(s, wake) == -EPIPE) {
			overrun(s);
		}
		int64_t next = numbering_next(s->num);
		notify_followers(s, wake); /* after a flush or a skip */
		g_mutex_lock(&s->lock);
		s->st.frames = (uint64_t)next;
		s->st.wakeups++;
		g_mutex_unlock(&s->lock);
		if (s->ev.nobs || s->ev.brk || s->ev.gap_to > s->ev.gap_from || s->ev.next != next)
			post(s);
	}
	return NULL;
}

int stream_start(stream *s, GError **err)
{
	GSource *src = g_unix_fd_source_new(s->efd, G_IO_IN);
	g_source_set_priority(src, G_PRIORITY_HIGH);
	g_source_set_callback(src, (GSourceFunc)(void (*)(void))on_events, s, NULL);
	s->efd_src = src;
	g_source_attach(src, s->main_ctx);
	s->thread = g_thread_try_new("capture", capture_thread, s, NULL);
	if (!s->thread) {
		g_set_error(err, AUDIOD_ERROR, EAGAIN, "%s: cannot start the capture thread", s->pcm_name);
		return -EAGAIN;
	}
	return 0;
}

void stream_free(stream *s)
{
	if (!s)
		return;
	if (s->thread) {
		g_atomic_int_set(&s->stop, 1);
		g_thread_join(s->thread);
	}
	if (s->efd_src) {
		g_source_destroy(s->efd_src);
		g_source_unref(s->efd_src);
	}
	if (s->events)
		g_async_queue_unref(s->events);
	if (s->efd >= 0)
		close(s->efd);
	numbering_free(s->num);
	follow_set_free(s->followers);
	kpatch_reader_free(s->kp);
	capture_close(s->cap);
	audio_ring_free(s->ring);
	g_mutex_clear(&s->lock);
	g_free(s->buf);
	g_free(s->pcm_name);
	g_free(s);
}

follow_set *stream_followers(stream *s)
{
	return s->followers;
}

audio_ring *stream_ring(stream *s)
{
	return s->ring;
}

const capture_cfg *stream_params(stream *s)
{
	return capture_actual(s->cap);
}

void stream_get_stats(stream *s, stream_stats *st)
{
	g_mutex_lock(&s->lock);
	*st = s->st;
	st->lat_p50_ns = latency_quantile(&s->lat, 0.5);
	st->lat_p99_ns = latency_quantile(&s->lat, 0.99);
	st->lat_max_ns = s->lat.max_ns;
	st->lat_n = s->lat.count;
	int w = s->commit[1].count ? 1 : 0; /* the last complete window, else the one filling */
	st->commit_p50_ns = latency_quantile(&s->commit[w], 0.5);
	st->commit_p99_ns = latency_quantile(&s->commit[w], 0.99);
	st->dispatch_p50_ns = latency_quantile(&s->dispatch[w], 0.5);
	st->dispatch_p99_ns = latency_quantile(&s->dispatch[w], 0.99);
	st->send_p50_ns = latency_quantile(&s->send[w], 0.5);
	st->send_p99_ns = latency_quantile(&s->send[w], 0.99);
	int wn = s->notify[1].count ? 1 : 0;
	st->notify_p50_ns = latency_quantile(&s->notify[wn], 0.5);
	st->notify_p99_ns = latency_quantile(&s->notify[wn], 0.99);
	st->bracket_p50_ns = latency_quantile(&s->bracket, 0.5);
	st->bracket_p99_ns = latency_quantile(&s->bracket, 0.99);
	st->bracket_max_ns = s->bracket.max_ns;
	capture_audio_tstamp(s->cap, &st->audio_type, &st->audio_accuracy_ns);
	g_mutex_unlock(&s->lock);
}
