/* stream.c — the capture thread (see stream.h). */
#include "audiod/stream.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <glib-unix.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audiod/error.h"
#include "audiod/latency.h"
#include "kpatch/reader.h"
#include "kpatch/sidechan_path.h"
#include "libsync/fit.h"
#include "libsync/now.h"

/* At most this many interrupt records after an overrun estimate the
 * restarted run's first frame.  The frames captured meanwhile are held in
 * the stream's read buffer (one ALSA buffer), so at most that many periods. */
#define RESTART_RECORDS 8

struct stream {
	stream_cfg cfg;
	char *pcm_name, *side_path;
	capture *cap;
	audio_ring *ring;
	struct kpatch_reader *kp;  /* kpatch or sim FIFO; NULL for alsa */
	tsrc_kind source;
	GMainContext *main_ctx;
	stream_event_fn fn;
	void *user;
	GThread *thread;
	GAsyncQueue *events;       /* stream_event* from the thread to the main context */
	int efd;                   /* eventfd: wakes the main context */
	GSource *efd_src;          /* its source on main_ctx */
	gint stop;                 /* atomic */
	uint8_t *buf;              /* one read's worth of frames */
	snd_pcm_uframes_t buf_frames;

	/* capture-thread state */
	sync_fit *fit;             /* recent (frame, cpu) lower envelope, for overrun accounting */
	int64_t abs_next;          /* absolute index of the next frame read */
	int have_hw_base;          /* hw_base valid for the current run */
	int64_t hw_base;           /* unwrapped hw_ptr of the run's first frame */
	int64_t abs_base;          /* absolute index of the run's first frame */
	uint64_t last_hw;          /* last raw hw_ptr */
	int64_t hw_unwrapped;      /* last hw_ptr, unwrapped */
	int restarting;            /* overrun: waiting for the first timestamp of the new run */
	int continuing;            /* the first run continues an earlier run's numbering */
	int64_t restart_cpu;       /* node cpu time when the run restarted */
	int restart_wakeups;       /* wakeups since the restart */
	/* Interrupt records of the restarted run held back until its start is
	 * known: each one's latency makes the pre-overrun fit predict a start
	 * late by latency * rate, so the start is the least of their
	 * predictions (a single record was often 2-5 frames late).  The frames
	 * of the new run read meanwhile wait in buf[0, hold). */
	struct {
		int64_t rel;       /* frames since the run's first frame at the interrupt */
		int64_t cpu;       /* node cpu time of the interrupt, ns */
	} pend[RESTART_RECORDS];
	int npend;
	int restart_need;          /* records to hold before settling, <= RESTART_RECORDS */
	snd_pcm_uframes_t hold;    /* frames of the new run held in buf */
	stream_event ev;           /* being filled */
	GMutex lock;               /* guards st, lat */
	stream_stats st;
	latency_hist lat;
};

const char *tsrc_name(tsrc_kind k)
{
	static const char *names[] = {"auto", "kpatch", "alsa", "sim", "none"};
	return k <= TSRC_NONE ? names[k] : "?";
}

int tsrc_parse(const char *s, tsrc_kind *out)
{
	for (int k = TSRC_AUTO; k <= TSRC_SIM; k++)
		if (!strcmp(s, tsrc_name((tsrc_kind)k))) {
			*out = (tsrc_kind)k;
			return 0;
		}
	return -EINVAL;
}

static int is_fifo(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* Pick and open the timestamp source (see stream.h for the order). */
static int open_source(stream *s, GError **err)
{
	int card, dev, sub;
	char path[256];
	tsrc_kind want = s->cfg.tstamp;
	capture_hw_ids(s->cap, &card, &dev, &sub);
	if ((want == TSRC_AUTO || want == TSRC_KPATCH) && card >= 0) {
		int rc = kpatch_reader_open_for_pcm(card, dev, sub, CHORUS_KPATCH_STREAM_CAPTURE, &s->kp);
		if (rc == 0) {
			s->source = TSRC_KPATCH;
			return 0;
		}
		if (want == TSRC_KPATCH) {
			g_set_error(err, AUDIOD_ERROR, -rc, "%s: kpatch timestamps wanted but unavailable: %s",
				    s->pcm_name, g_strerror(-rc));
			return rc;
		}
	}
	if (want == TSRC_AUTO || want == TSRC_SIM) {
		const char *p = s->cfg.sidechannel;
		if (!p && kpatch_sidechan_path(s->pcm_name, path, sizeof path) > 0)
			p = path;
		if (p && is_fifo(p) && kpatch_reader_open_path(p, &s->kp) == 0) {
			s->side_path = g_strdup(p);
			s->source = TSRC_SIM;
			return 0;
		}
		if (want == TSRC_SIM) {
			g_set_error(err, AUDIOD_ERROR, ENOENT, "%s: simulator side channel %s not found", s->pcm_name,
				    p ? p : "(no path)");
			return -ENOENT;
		}
	}
	s->source = TSRC_ALSA;
	return 0;
}

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
	uint64_t cap_frames = (uint64_t)ceil(cfg->ring_seconds * a->rate);
	rc = audio_ring_create((uint32_t)capture_frame_bytes(s->cap), cap_frames, a->rate, a->channels,
			       (uint32_t)a->format, 0, &s->ring);
	if (rc < 0) {
		g_set_error(err, AUDIOD_ERROR, -rc, "%s: cannot create a ring of %.1f s: %s", s->pcm_name,
			    cfg->ring_seconds, g_strerror(-rc));
		goto fail;
	}
	if ((rc = open_source(s, err)) < 0)
		goto fail;
	s->buf_frames = a->buffer;
	s->buf = g_malloc(s->buf_frames * capture_frame_bytes(s->cap));
	sync_fit_params fp;
	sync_fit_params_default(&fp);
	fp.mode = SYNC_FIT_UPPER; /* x = cpu (late by latency), y = frame: frames look early */
	fp.window = 256;
	fp.nominal_slope = a->rate * 1e-9;
	if (!(s->fit = sync_fit_new(&fp, &why))) {
		g_set_error(err, AUDIOD_ERROR, EINVAL, "fit: %s", why);
		rc = -EINVAL;
		goto fail;
	}
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
		s->fn(s->user, ev);
		g_free(ev);
	}
	return G_SOURCE_CONTINUE;
}

/* Capture thread: queue the event being filled and wake the main context. */
static void post(stream *s)
{
	uint64_t one = 1;
	s->ev.next = s->abs_next;
	g_async_queue_push(s->events, g_memdup2(&s->ev, sizeof s->ev));
	if (write(s->efd, &one, sizeof one) < 0 && errno != EAGAIN)
		g_warning("audiod: eventfd write: %s", g_strerror(errno));
	memset(&s->ev, 0, sizeof s->ev);
}

static void add_obs(stream *s, int64_t frame, int64_t cpu)
{
	const char *why;
	if (s->ev.nobs == STREAM_EVENT_OBS)
		post(s);
	s->ev.obs[s->ev.nobs].frame = frame;
	s->ev.obs[s->ev.nobs].cpu = cpu;
	s->ev.nobs++;
	if (sync_fit_add(s->fit, cpu, frame, &why) < 0) {
		/* cpu time went backwards: only after a source restart. */
		sync_fit_reset(s->fit);
		sync_fit_add(s->fit, cpu, frame, &why);
	}
	g_mutex_lock(&s->lock);
	s->st.records++;
	g_mutex_unlock(&s->lock);
}

/* Frames lost in an overrun: the run that restarted has its first frame at
 * absolute index `start` (predicted from the pre-overrun fit); the ring is
 * at abs_next.  Write the difference as a gap. */
static void settle_restart(stream *s, int64_t start)
{
	if (s->continuing) {
		/* The first run of this audiod, numbered on from the last one:
		 * nothing was lost here, the ring simply starts at `start`. */
		s->continuing = 0;
		if (audio_ring_set_origin(s->ring, start) == 0)
			s->abs_next = start;
		g_message("%s: frame numbering continues from the previous run at %" G_GINT64_FORMAT,
			  s->pcm_name, s->abs_next);
	} else if (start > s->abs_next) {
		uint64_t lost = (uint64_t)(start - s->abs_next);
		s->ev.gap_from = s->abs_next;
		s->ev.gap_to = start;
		audio_ring_skip(s->ring, lost);
		s->abs_next = start;
		g_mutex_lock(&s->lock);
		s->st.frames_lost += lost;
		g_mutex_unlock(&s->lock);
	}
	s->abs_base = s->abs_next;
	s->restarting = 0;
	s->ev.brk = 1;
	if (s->hold) {
		audio_ring_write(s->ring, s->buf, s->hold);
		s->abs_next += (int64_t)s->hold;
		s->hold = 0;
	}
}

/* The absolute frame index the pre-overrun fit predicts at cpu time t. */
static int predict_frame(stream *s, int64_t cpu, int64_t *frame)
{
	sync_conv c;
	const char *why;
	if (sync_fit_solve(s->fit, &c, &why) < 0)
		return -EAGAIN;
	sync_tval f = sync_conv_apply(&c, sync_tval_of(cpu));
	*frame = f.i + (int64_t)llround(f.f);
	return 0;
}

/* Settle a restart from the held records of the new run: its first frame is
 * the least start they predict (the record with the least latency), then
 * their observations are taken. */
static void settle_from_records(stream *s)
{
	sync_conv c;
	const char *why;
	int64_t start = s->abs_next;
	if (sync_fit_solve(s->fit, &c, &why) == 0) {
		double best = INFINITY;
		int64_t base = INT64_MIN;
		for (int i = 0; i < s->npend; i++) {
			sync_tval f = sync_conv_apply(&c, sync_tval_of(s->pend[i].cpu));
			if (base == INT64_MIN)
				base = f.i - s->pend[i].rel;
			double x = (double)(f.i - s->pend[i].rel - base) + f.f;
			best = x < best ? x : best;
		}
		/* The run starts on a whole frame, and the least prediction is
		 * late by the least latency (>= 0): floor, with 0.1 frame of slack
		 * for the envelope's own error. */
		if (base != INT64_MIN)
			start = base + (int64_t)floor(best + 0.1);
	}
	settle_restart(s, start);
	for (int i = 0; i < s->npend; i++)
		add_obs(s, s->abs_base + s->pend[i].rel, s->pend[i].cpu);
	s->npend = 0;
}

/* Drain the kpatch/sim FIFO into observations. */
static void read_records(stream *s, int64_t wake)
{
	struct chorus_kpatch_record rec[32];
	int n;
	const capture_cfg *a = capture_actual(s->cap);
	snd_pcm_uframes_t boundary = capture_boundary(s->cap);
	while ((n = kpatch_reader_read(s->kp, rec, 32)) > 0) {
		for (int i = 0; i < n; i++) {
			/* The module stamps host CLOCK_MONOTONIC_RAW; the simulator
			 * already stamps the virtual node's cpu clock. */
			int64_t cpu = (rec[i].flags & CHORUS_KPATCH_F_SIM) ? rec[i].time_ns
									    : sync_host_to_node(SYNC_KIND_CPU, rec[i].time_ns);
			if (!s->have_hw_base) {
				/* First interrupt of a run: one period after its start. */
				s->last_hw = rec[i].hw_ptr;
				s->hw_unwrapped = (int64_t)rec[i].hw_ptr;
				s->hw_base = s->hw_unwrapped - (int64_t)a->period;
				s->have_hw_base = 1;
			} else {
				s->hw_unwrapped += (int64_t)((rec[i].hw_ptr + boundary - s->last_hw) % boundary);
				s->last_hw = rec[i].hw_ptr;
			}
			if (s->restarting) {
				s->pend[s->npend].rel = s->hw_unwrapped - s->hw_base;
				s->pend[s->npend].cpu = cpu;
				if (++s->npend >= s->restart_need)
					settle_from_records(s);
			} else {
				add_obs(s, s->abs_base + (s->hw_unwrapped - s->hw_base), cpu);
			}
			if (i == n - 1) {
				g_mutex_lock(&s->lock);
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
	long n = 0;
	while (s->hold < s->buf_frames &&
	       (n = capture_read(s->cap, s->buf + s->hold * fb, s->buf_frames - s->hold)) > 0)
		s->hold += (snd_pcm_uframes_t)n;
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
	if (s->npend < s->restart_need && capture_htimestamp(s->cap, &ts, &avail) == 0) {
		s->pend[s->npend].rel = (int64_t)(s->hold + avail);
		s->pend[s->npend].cpu = sync_host_to_node(SYNC_KIND_CPU, ts);
		s->npend++;
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
			at = s->abs_next + (int64_t)avail;
		}
	}
	while ((n = capture_read(s->cap, s->buf, s->buf_frames)) > 0) {
		audio_ring_write(s->ring, s->buf, (uint64_t)n);
		s->abs_next += n;
		got = 1;
	}
	if (n < 0)
		return (int)n;
	if (got && have_ts) {
		int64_t cpu = sync_host_to_node(SYNC_KIND_CPU, ts);
		add_obs(s, at, cpu);
		g_mutex_lock(&s->lock);
		latency_add(&s->lat, wake - cpu);
		g_mutex_unlock(&s->lock);
	}
	return 0;
}

static void overrun(stream *s)
{
	/* Records of the run that just ended belong to its numbering: take
	 * them before the new run's first record resets the base. */
	if (s->kp && !s->restarting)
		read_records(s, sync_now(SYNC_KIND_CPU));
	int rc = capture_recover(s->cap, -EPIPE);
	g_mutex_lock(&s->lock);
	s->st.xruns++;
	g_mutex_unlock(&s->lock);
	if (rc == 0)
		rc = capture_start(s->cap);
	if (rc < 0)
		g_warning("%s: cannot restart after overrun: %s", s->pcm_name, snd_strerror(rc));
	s->restart_cpu = sync_now(SYNC_KIND_CPU);
	s->restarting = 1;
	s->restart_wakeups = 0;
	s->npend = 0;
	const capture_cfg *a = capture_actual(s->cap);
	s->hold = 0;
	s->restart_need = (int)(a->buffer / a->period);
	s->restart_need = s->restart_need < 1 ? 1 : s->restart_need > RESTART_RECORDS ? RESTART_RECORDS : s->restart_need;
	s->have_hw_base = 0;
}

int stream_continue_numbering(stream *s, const int64_t *cpu, const int64_t *frame, int n)
{
	const char *why;
	if (n < 2)
		return -EINVAL;
	sync_fit_reset(s->fit);
	for (int i = 0; i < n; i++)
		if (sync_fit_add(s->fit, cpu[i], frame[i], &why) < 0) {
			sync_fit_reset(s->fit);
			return -EINVAL;
		}
	s->continuing = 1;
	return 0;
}

/* The thread's first start: like a restart after an overrun when the
 * numbering continues (the seeded fit predicts the first frame), else the
 * run begins at frame 0. */
static void begin(stream *s)
{
	if (!s->continuing)
		return;
	const capture_cfg *a = capture_actual(s->cap);
	s->restart_cpu = sync_now(SYNC_KIND_CPU);
	s->restarting = 1;
	s->restart_wakeups = 0;
	s->npend = 0;
	s->hold = 0;
	s->restart_need = (int)(a->buffer / a->period);
	s->restart_need = s->restart_need < 1 ? 1 : s->restart_need > RESTART_RECORDS ? RESTART_RECORDS : s->restart_need;
	s->have_hw_base = 0;
}

static gpointer capture_thread(gpointer data)
{
	stream *s = data;
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
	begin(s);
	while (!g_atomic_int_get(&s->stop)) {
		rc = capture_wait(s->cap, 100);
		int64_t wake = sync_now(SYNC_KIND_CPU);
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
		if (s->restarting) {
			s->restart_wakeups++;
			if (!s->kp)
				alsa_restart_obs(s);
			if (hold_frames(s) == -EPIPE) {
				overrun(s);
				continue;
			}
			int full = s->hold == s->buf_frames;
			if (s->npend >= s->restart_need ||
			    (s->npend && (full || s->restart_wakeups > 2 * s->restart_need))) {
				/* Enough observations of the new run (or as many as
				 * there will be: some lost, or the hold is full). */
				settle_from_records(s);
			} else if (full || s->restart_wakeups > 2 * s->restart_need + 2) {
				/* No observation at all: the run began when it
				 * was started. */
				int64_t f;
				settle_restart(s, predict_frame(s, s->restart_cpu, &f) == 0 ? f : s->abs_next);
			}
		}
		if (!s->restarting && read_frames(s, wake) == -EPIPE) {
			overrun(s);
		}
		g_mutex_lock(&s->lock);
		s->st.frames = (uint64_t)s->abs_next;
		s->st.wakeups++;
		g_mutex_unlock(&s->lock);
		if (s->ev.nobs || s->ev.brk || s->ev.gap_to > s->ev.gap_from || s->ev.next != s->abs_next)
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
	sync_fit_free(s->fit);
	kpatch_reader_free(s->kp);
	capture_close(s->cap);
	audio_ring_free(s->ring);
	g_mutex_clear(&s->lock);
	g_free(s->buf);
	g_free(s->side_path);
	g_free(s->pcm_name);
	g_free(s);
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
	g_mutex_unlock(&s->lock);
}
