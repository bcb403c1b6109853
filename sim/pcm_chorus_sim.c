/* pcm_chorus_sim.c — the virtual microphone: an ALSA ioplug capture PCM that
 * plays the simulated world (sim/world.h) in real time.
 *
 * Model (docs/scenario.md): the node's sound card crystal ticks since the
 * world's epoch; a stream started at true time t_s begins at the first whole
 * frame F0 at or after t_s.  Period k (k = 1, 2, ...) ends at frame
 * F0 + k*P; its "DMA interrupt" happens at the true time of that frame plus a
 * latency drawn from the node's distribution (capped at half a period so
 * interrupts stay in order), and only then does hw_ptr advance by P frames and
 * a record go to the side channel.  True time is the host's
 * CLOCK_MONOTONIC_RAW, read through libsync (sync_now + sync_node_to_host_cpu,
 * so the plugin is right inside a process with CHORUS_SIM_CLOCK set).
 *
 * The stream state has no thread: it advances whenever ALSA asks for the
 * pointer or poll events; records carry the modelled interrupt time, not the
 * time the plugin noticed.  The samples are rendered ahead by a SCHED_IDLE
 * thread (sim/render_ahead.h, the card's "DMA"), so a transfer is a copy as
 * on a real card, not a synthesis inside the reader's wakeup.  Wakeups come from a timerfd (CLOCK_MONOTONIC — timerfd
 * cannot use CLOCK_MONOTONIC_RAW) armed relative to the next interrupt; an
 * early wakeup (the two clocks differ by NTP slew) just re-arms.
 *
 * ALSA configuration fields (all optional, see sim/alsa/chorus_sim.conf):
 *   scenario PATH   (else $CHORUS_SCENARIO)     node N (else $CHORUS_NODE)
 *   sidechannel PATH|none (else kpatch_sidechan_path of the PCM name)
 *   epoch_ns NS     host CLOCK_MONOTONIC_RAW of world time 0
 *                   (else $CHORUS_SIM_EPOCH_NS, else the first start)
 *   xrun_every S    inject an xrun every S s of running (else [world] xrun_every)
 *   rate HZ         accept only this rate (else 8000..192000)
 *   render ahead|inline (else $CHORUS_SIM_RENDER, else ahead): inline
 *                   renders each transfer's samples inside the transfer (the
 *                   behaviour before issue 17, kept for measuring its cost)
 *   tstamp pessimistic|driver (else $CHORUS_SIM_TSTAMP, else pessimistic):
 *                   what ALSA's own timestamps (snd_pcm_status,
 *                   snd_pcm_htimestamp) pair with.  An ioplug's timestamp
 *                   is always the time of the call, so the mode decides the
 *                   position reported then:
 *       pessimistic hw_ptr moves only at the modelled interrupts, in whole
 *                   periods: the timestamp is the reader's wakeup, late by
 *                   the interrupt latency plus the scheduling delay (a
 *                   period-granular driver read late; USB audio's URB
 *                   completions are like it, 1 ms coarse);
 *       driver      hw_ptr is the DMA position at the call: the frames whose
 *                   end lies at least irq_latency_floor_us before it, whole
 *                   frames (HDA's position buffer read at the status call;
 *                   the floor plays its FIFO and link delay).  Wakeups still
 *                   come at the interrupts.
 */
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "kpatch/sidechan_path.h"
#include "libdev/le.h"
#include "libsync/now.h"
#include "sim/render_ahead.h"
#include "sim/samplefmt.h"
#include "sim/scenario.h"
#include "sim/sidechan.h"
#include "sim/world.h"

typedef struct {
	snd_pcm_ioplug_t io;
	pthread_mutex_t lock;
	sim_scenario *sc;
	sim_world *world;
	int node;
	int n_mics;
	sim_sidechan *side; /* NULL: side channel disabled */
	char side_path[PATH_MAX];
	int timer_fd;
	int epoch_set;
	int64_t epoch_ns;    /* host raw ns of world time 0 */
	double xrun_every_s; /* s, 0 = never */
	int driver_tstamp;   /* tstamp driver: hw_ptr is the DMA position at the call */
	int64_t dma_lag_ns;  /* tstamp driver: the position lags the frames by the latency floor */
	int render_inline;   /* render inline: no render-ahead thread */
	render_ahead *ra;    /* the rendering thread, from hw_params; NULL renders inline */
	unsigned ra_rate;    /* the rate ra renders at */
	double *scratch;     /* one transfer's samples, frames x channels */
	size_t scratch_frames;
	snd_pcm_uframes_t stop_threshold, avail_min, boundary;
	/* stream state */
	int running;
	int xrun;            /* stream is in XRUN until prepare */
	int flag_next;       /* CHORUS_KPATCH_F_XRUN on the next record */
	int64_t f0;          /* absolute frame of stream frame 0 */
	uint64_t periods;    /* periods whose interrupt has happened since start */
	uint64_t seq;        /* records (interrupts) since open */
	int64_t next_int_ns; /* host raw ns of the next interrupt */
	int64_t xrun_at_ns;  /* host raw ns of the next injected xrun, or INT64_MAX */
} chorus_sim;

static int64_t true_now(void)
{
	return sync_node_to_host_cpu(sync_now(SYNC_KIND_CPU));
}

/* Host raw ns of the interrupt ending period k (k >= 1) of the stream. */
static int64_t interrupt_ns(const chorus_sim *s, uint64_t k)
{
	int64_t fe = s->f0 + (int64_t)(k * s->io.period_size);
	int64_t period_ns = (int64_t)(s->io.period_size * 1e9 / s->io.rate);
	return s->epoch_ns + sim_world_frame_time_ns(s->world, s->node, s->io.rate, fe) +
	       sim_world_irq_latency_ns(s->world, s->node, fe, period_ns / 2);
}

static void emit(chorus_sim *s, uint64_t k, int64_t t_int)
{
	if (!s->side)
		return;
	struct chorus_kpatch_record r;
	memset(&r, 0, sizeof r);
	r.magic = CHORUS_KPATCH_MAGIC;
	r.version = CHORUS_KPATCH_VERSION;
	r.size = sizeof r;
	r.seq = s->seq;
	r.time_ns = sim_world_node_cpu_at(s->world, s->node, t_int);
	r.hw_ptr = (k * s->io.period_size) % s->boundary;
	r.card = (uint16_t)s->node;
	r.flags = CHORUS_KPATCH_F_SIM | (s->flag_next ? CHORUS_KPATCH_F_XRUN : 0);
#ifdef CHORUS_KPATCH_F_CAPTURE
	r.flags |= CHORUS_KPATCH_F_CAPTURE; /* the plugin is capture only */
#endif
	r.period_frames = s->io.period_size <= 65535 ? (uint16_t)s->io.period_size : 0;
	sim_sidechan_write(s->side, &r); /* a full FIFO is counted in `dropped` */
	s->flag_next = 0;
}

static void arm(chorus_sim *s, int64_t now_ns)
{
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	if (s->running && !s->xrun) {
		int64_t wait = s->next_int_ns - now_ns;
		if (s->xrun_at_ns - now_ns < wait)
			wait = s->xrun_at_ns - now_ns;
		if (wait < 1)
			wait = 1; /* 0 would disarm */
		its.it_value.tv_sec = wait / 1000000000;
		its.it_value.tv_nsec = wait % 1000000000;
	}
	timerfd_settime(s->timer_fd, 0, &its, NULL);
}

/* Advance to `now_ns`: run every interrupt that has happened, detect overrun
 * and injected xruns.  Called with s->lock held. */
static void advance(chorus_sim *s, int64_t now_ns)
{
	if (!s->running || s->xrun)
		return;
	while (s->next_int_ns <= now_ns && s->next_int_ns < s->xrun_at_ns) {
		s->periods++;
		emit(s, s->periods, s->next_int_ns);
		s->seq++;
		s->next_int_ns = interrupt_ns(s, s->periods + 1);
		/* Overrun, as the kernel sees it at an interrupt: the buffer is
		 * full (avail >= stop_threshold); capture stops right there. */
		snd_pcm_uframes_t avail = s->periods * s->io.period_size - s->io.appl_ptr % s->boundary;
		if (avail >= s->stop_threshold) {
			s->xrun = 1;
			s->flag_next = 1;
			return;
		}
	}
	if (now_ns >= s->xrun_at_ns) { /* injected: the stream stalls here */
		s->xrun = 1;
		s->flag_next = 1;
	}
}

/* tstamp driver: stream frames whose end lies at or before host raw ns
 * `now_ns` minus the node's latency floor (the DMA position register), at
 * least the periods interrupted so far (an interrupt reports its period
 * done) and never past the next period's end. */
static uint64_t dma_position(const chorus_sim *s, int64_t now_ns)
{
	int64_t t = now_ns - s->epoch_ns - s->dma_lag_ns;
	int64_t f = sim_world_first_frame_at(s->world, s->node, s->io.rate, t + 1) - 1 - s->f0;
	uint64_t lo = s->periods * s->io.period_size, hi = lo + s->io.period_size;
	if (f < (int64_t)lo)
		return lo;
	return (uint64_t)f < hi ? (uint64_t)f : hi;
}

static snd_pcm_sframes_t cb_pointer(snd_pcm_ioplug_t *io)
{
	chorus_sim *s = io->private_data;
	pthread_mutex_lock(&s->lock);
	int64_t now_ns = true_now();
	advance(s, now_ns);
	uint64_t pos = s->driver_tstamp && s->running ? dma_position(s, now_ns) : s->periods * io->period_size;
	snd_pcm_sframes_t r = s->xrun ? -EPIPE : (snd_pcm_sframes_t)(pos % s->boundary);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int cb_start(snd_pcm_ioplug_t *io)
{
	chorus_sim *s = io->private_data;
	pthread_mutex_lock(&s->lock);
	int64_t now_ns = true_now();
	if (!s->epoch_set) {
		s->epoch_ns = now_ns;
		s->epoch_set = 1;
		sim_world_set_epoch(s->world, s->epoch_ns);
	}
	s->f0 = sim_world_first_frame_at(s->world, s->node, io->rate, now_ns - s->epoch_ns);
	s->periods = 0;
	s->xrun = 0;
	s->running = 1;
	s->next_int_ns = interrupt_ns(s, 1);
	s->xrun_at_ns = s->xrun_every_s > 0 ? now_ns + (int64_t)llround(s->xrun_every_s * 1e9) : INT64_MAX;
	arm(s, now_ns);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int cb_stop(snd_pcm_ioplug_t *io)
{
	chorus_sim *s = io->private_data;
	pthread_mutex_lock(&s->lock);
	s->running = 0;
	arm(s, 0);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int cb_prepare(snd_pcm_ioplug_t *io)
{
	chorus_sim *s = io->private_data;
	pthread_mutex_lock(&s->lock);
	s->running = 0;
	s->xrun = 0;
	s->periods = 0;
	arm(s, 0);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static sim_format fmt_of(snd_pcm_format_t f)
{
	return f == SND_PCM_FORMAT_S16_LE   ? SIM_FMT_S16_LE
	       : f == SND_PCM_FORMAT_S32_LE ? SIM_FMT_S32_LE
					    : SIM_FMT_FLOAT_LE;
}

static snd_pcm_sframes_t cb_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
				     snd_pcm_uframes_t offset, snd_pcm_uframes_t size)
{
	chorus_sim *s = io->private_data;
	/* The frames handed over start at the application pointer. */
	int64_t f = s->f0 + (int64_t)io->appl_ptr;
	sim_format fmt = fmt_of(io->format);
	unsigned nch = io->channels;
	if (size > s->scratch_frames) {
		double *p = realloc(s->scratch, sizeof(double) * size * nch);
		if (!p)
			return -ENOMEM;
		s->scratch = p;
		s->scratch_frames = size;
	}
	if (s->ra && s->ra_rate == io->rate && nch == (unsigned)s->n_mics)
		render_ahead_get(s->ra, f, size, s->scratch, 3 * (uint64_t)io->period_size);
	else
		for (snd_pcm_uframes_t i = 0; i < size; i++)
			for (unsigned c = 0; c < nch; c++)
				s->scratch[i * nch + c] = sim_world_sample(s->world, s->node, (int)c, io->rate, f + (int64_t)i);
	for (unsigned c = 0; c < nch; c++) {
		const snd_pcm_channel_area_t *a = &areas[c];
		char *base = (char *)a->addr + a->first / 8;
		unsigned step = a->step / 8;
		for (snd_pcm_uframes_t i = 0; i < size; i++) {
			double v = s->scratch[i * nch + c];
			char *p = base + (offset + i) * step;
			/* The formats are little-endian whatever the host. */
			if (fmt == SIM_FMT_S16_LE) {
				le_put16((uint8_t *)p, (uint16_t)sim_to_s16(v));
			} else if (fmt == SIM_FMT_S32_LE) {
				le_put32((uint8_t *)p, (uint32_t)sim_to_s32(v));
			} else {
				float x = sim_to_float(v);
				uint32_t u;
				memcpy(&u, &x, 4);
				le_put32((uint8_t *)p, u);
			}
		}
	}
	return (snd_pcm_sframes_t)size;
}

static int cb_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params)
{
	chorus_sim *s = io->private_data;
	snd_pcm_uframes_t v;
	pthread_mutex_lock(&s->lock);
	if (snd_pcm_sw_params_get_stop_threshold(params, &v) == 0)
		s->stop_threshold = v;
	if (snd_pcm_sw_params_get_avail_min(params, &v) == 0)
		s->avail_min = v ? v : 1;
	if (snd_pcm_sw_params_get_boundary(params, &v) == 0 && v)
		s->boundary = v;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* The render thread's sample: the world is pure (sim/world.h). */
static double render_sample(void *user, unsigned ch, int64_t frame)
{
	const chorus_sim *s = user;
	return sim_world_sample(s->world, s->node, (int)ch, s->ra_rate, frame);
}

static int cb_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params)
{
	chorus_sim *s = io->private_data;
	/* Until sw_params says otherwise: ALSA's defaults. */
	s->stop_threshold = io->buffer_size;
	s->avail_min = io->period_size;
	/* Room for the period being read and three ahead.  The thread looks
	 * once a period (twice cost a wakeup per half period in every
	 * simulated node: 100 nodes at 16 kHz are 10,000 a second) and keeps
	 * three periods rendered, so a look late by up to two periods still
	 * finds the reader served. */
	render_ahead_free(s->ra);
	s->ra = NULL;
	if (!s->render_inline) {
		uint64_t cap = 4 * (uint64_t)io->period_size;
		s->ra_rate = io->rate;
		int64_t period_ns = (int64_t)(io->period_size * 1e9 / io->rate);
		s->ra = render_ahead_new((unsigned)s->n_mics, cap < 1024 ? 1024 : cap, period_ns, render_sample, s,
					 "sim-dma");
	}
	return 0;
}

static int cb_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds,
			   unsigned short *revents)
{
	chorus_sim *s = io->private_data;
	uint64_t expirations;
	if (read(s->timer_fd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&s->lock);
	int64_t now_ns = true_now();
	advance(s, now_ns);
	snd_pcm_uframes_t avail = s->periods * io->period_size - io->appl_ptr % s->boundary;
	if (s->xrun) {
		/* ALSA maps POLLERR to an error through the PCM state, which it
		 * only learns from the pointer callback: tell it now, or the
		 * waiting reader gets -EIO instead of -EPIPE. */
		snd_pcm_ioplug_set_state(io, SND_PCM_STATE_XRUN);
		*revents = POLLERR;
	} else if (s->running && avail >= s->avail_min)
		*revents = POLLIN;
	else
		*revents = 0;
	arm(s, now_ns);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static void plugin_free(chorus_sim *s)
{
	render_ahead_free(s->ra);
	free(s->scratch);
	if (s->timer_fd >= 0)
		close(s->timer_fd);
	sim_sidechan_close(s->side);
	sim_world_free(s->world);
	sim_scenario_free(s->sc);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int cb_close(snd_pcm_ioplug_t *io)
{
	plugin_free(io->private_data);
	return 0;
}

static const snd_pcm_ioplug_callback_t callbacks = {
	.start = cb_start,
	.stop = cb_stop,
	.pointer = cb_pointer,
	.transfer = cb_transfer,
	.close = cb_close,
	.hw_params = cb_hw_params,
	.sw_params = cb_sw_params,
	.prepare = cb_prepare,
	.poll_revents = cb_poll_revents,
};

/* Options from the ALSA configuration, strings owned by the caller. */
typedef struct {
	char *scenario, *node, *sidechannel, *epoch_ns, *xrun_every, *rate, *tstamp, *render;
} options;

static void options_free(options *o)
{
	free(o->scenario);
	free(o->node);
	free(o->sidechannel);
	free(o->epoch_ns);
	free(o->xrun_every);
	free(o->rate);
	free(o->tstamp);
	free(o->render);
}

static int parse_options(snd_config_t *conf, options *o)
{
	snd_config_iterator_t i, next;
	snd_config_for_each(i, next, conf)
	{
		snd_config_t *n = snd_config_iterator_entry(i);
		const char *id;
		char **slot = NULL;
		if (snd_config_get_id(n, &id) < 0)
			continue;
		if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint"))
			continue;
		if (!strcmp(id, "scenario"))
			slot = &o->scenario;
		else if (!strcmp(id, "node"))
			slot = &o->node;
		else if (!strcmp(id, "sidechannel"))
			slot = &o->sidechannel;
		else if (!strcmp(id, "epoch_ns"))
			slot = &o->epoch_ns;
		else if (!strcmp(id, "xrun_every"))
			slot = &o->xrun_every;
		else if (!strcmp(id, "rate"))
			slot = &o->rate;
		else if (!strcmp(id, "tstamp"))
			slot = &o->tstamp;
		else if (!strcmp(id, "render"))
			slot = &o->render;
		if (!slot) {
			SNDERR("chorus_sim: unknown field '%s' (known: scenario node sidechannel epoch_ns xrun_every rate tstamp render)",
			       id);
			return -EINVAL;
		}
		free(*slot);
		*slot = NULL;
		if (snd_config_get_ascii(n, slot) < 0) {
			SNDERR("chorus_sim: field '%s' must be a string or a number", id);
			return -EINVAL;
		}
		if (!**slot) { /* an empty value (e.g. an unset getenv) means "not given" */
			free(*slot);
			*slot = NULL;
		}
	}
	return 0;
}

/* A config value, else the environment variable, else NULL. */
static const char *pick(const char *conf, const char *env)
{
	const char *e = env ? getenv(env) : NULL;
	return conf ? conf : (e && *e ? e : NULL);
}

static int parse_number(const char *field, const char *text, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (end == text || *end || errno || !(v >= lo && v <= hi)) {
		SNDERR("chorus_sim: %s '%s' is not a number in [%g, %g]", field, text, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int setup(chorus_sim *s, const char *name, const options *o, unsigned *rate_pin)
{
	const char *why = NULL;
	double v;
	if (sync_now_init(&why) < 0) {
		SNDERR("chorus_sim: %s", why);
		return -EINVAL;
	}
	const char *path = pick(o->scenario, "CHORUS_SCENARIO");
	if (!path) {
		SNDERR("chorus_sim: no scenario: set 'scenario' in the PCM's ALSA configuration or CHORUS_SCENARIO");
		return -EINVAL;
	}
	GError *err = NULL;
	s->sc = sim_scenario_load(path, &err);
	if (s->sc)
		s->world = sim_world_new(s->sc, &err);
	if (!s->world) {
		SNDERR("chorus_sim: scenario errors:\n%s", err->message);
		g_error_free(err);
		return -EINVAL;
	}
	const char *node = pick(o->node, "CHORUS_NODE");
	if (!node) {
		SNDERR("chorus_sim: no node: set 'node' in the PCM's ALSA configuration or CHORUS_NODE");
		return -EINVAL;
	}
	if (parse_number("node", node, 0, SIM_MAX_NODE, &v) < 0)
		return -EINVAL;
	s->node = (int)v;
	s->n_mics = sim_world_n_mics(s->world, s->node);
	if (s->n_mics <= 0 || v != floor(v)) {
		SNDERR("chorus_sim: node %s is not in scenario %s", node, path);
		return -EINVAL;
	}
	const char *epoch = pick(o->epoch_ns, "CHORUS_SIM_EPOCH_NS");
	if (epoch) {
		char *end;
		errno = 0;
		long long e = strtoll(epoch, &end, 10);
		if (end == epoch || *end || errno) {
			SNDERR("chorus_sim: epoch_ns '%s' is not an integer number of ns", epoch);
			return -EINVAL;
		}
		s->epoch_ns = e;
		s->epoch_set = 1;
		sim_world_set_epoch(s->world, s->epoch_ns);
	}
	s->xrun_every_s = sim_scenario_world(s->sc)->xrun_every_s;
	if (o->xrun_every && parse_number("xrun_every", o->xrun_every, 0, 1e7, &s->xrun_every_s) < 0)
		return -EINVAL;
	if (o->rate) {
		if (parse_number("rate", o->rate, 8000, 192000, &v) < 0)
			return -EINVAL;
		*rate_pin = (unsigned)v;
	}
	const char *ts = pick(o->tstamp, "CHORUS_SIM_TSTAMP");
	if (ts && strcmp(ts, "pessimistic") && strcmp(ts, "driver")) {
		SNDERR("chorus_sim: tstamp '%s' is not pessimistic or driver", ts);
		return -EINVAL;
	}
	s->driver_tstamp = ts && !strcmp(ts, "driver");
	const char *rd = pick(o->render, "CHORUS_SIM_RENDER");
	if (rd && strcmp(rd, "ahead") && strcmp(rd, "inline")) {
		SNDERR("chorus_sim: render '%s' is not ahead or inline", rd);
		return -EINVAL;
	}
	s->render_inline = rd && !strcmp(rd, "inline");
	s->dma_lag_ns = (int64_t)llround(sim_scenario_find_node(s->sc, s->node)->latency_floor_ns);
	if (o->sidechannel && !strcmp(o->sidechannel, "none"))
		return 0;
	int rc = o->sidechannel ? (int)g_strlcpy(s->side_path, o->sidechannel, sizeof s->side_path)
				: kpatch_sidechan_path(name, s->side_path, sizeof s->side_path);
	if (rc < 0 || (size_t)rc >= sizeof s->side_path) {
		SNDERR("chorus_sim: no side-channel path (set CHORUS_RUN or 'sidechannel'): %s",
		       rc < 0 ? strerror(-rc) : "too long");
		return -EINVAL;
	}
	rc = sim_sidechan_open(s->side_path, &s->side);
	if (rc < 0) {
		SNDERR("chorus_sim: side channel %s: %s", s->side_path,
		       rc == -EEXIST ? "exists and is not a FIFO" : strerror(-rc));
		return rc;
	}
	return 0;
}

static int set_constraints(chorus_sim *s, unsigned rate_pin)
{
	static const unsigned access[] = {
		SND_PCM_ACCESS_RW_INTERLEAVED,
		SND_PCM_ACCESS_RW_NONINTERLEAVED,
		SND_PCM_ACCESS_MMAP_INTERLEAVED,
		SND_PCM_ACCESS_MMAP_NONINTERLEAVED,
	};
	static const unsigned formats[] = {
		SND_PCM_FORMAT_S16_LE,
		SND_PCM_FORMAT_S32_LE,
		SND_PCM_FORMAT_FLOAT_LE,
	};
	int rc;
	if ((rc = snd_pcm_ioplug_set_param_list(&s->io, SND_PCM_IOPLUG_HW_ACCESS, 4, access)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_list(&s->io, SND_PCM_IOPLUG_HW_FORMAT, 3, formats)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&s->io, SND_PCM_IOPLUG_HW_CHANNELS, (unsigned)s->n_mics,
						  (unsigned)s->n_mics)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&s->io, SND_PCM_IOPLUG_HW_RATE,
						  rate_pin ? rate_pin : 8000, rate_pin ? rate_pin : 192000)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&s->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64, 1u << 22)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&s->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024)) < 0 ||
	    (rc = snd_pcm_ioplug_set_param_minmax(&s->io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 128, 1u << 26)) < 0)
		return rc;
	return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(chorus_sim)
{
	options o;
	unsigned rate_pin = 0;
	int rc;
	(void)root;
	memset(&o, 0, sizeof o);
	if (stream != SND_PCM_STREAM_CAPTURE) {
		SNDERR("chorus_sim: capture only (it is a microphone)");
		return -EINVAL;
	}
	chorus_sim *s = calloc(1, sizeof *s);
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	s->timer_fd = -1;
	s->boundary = (snd_pcm_uframes_t)LONG_MAX; /* until sw_params gives the real one */
	if ((rc = parse_options(conf, &o)) < 0 || (rc = setup(s, name, &o, &rate_pin)) < 0)
		goto fail;
	s->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->timer_fd < 0) {
		rc = -errno;
		SNDERR("chorus_sim: timerfd_create: %s", strerror(errno));
		goto fail;
	}
	s->io.version = SND_PCM_IOPLUG_VERSION;
	s->io.name = "chorus simulated microphone";
	s->io.callback = &callbacks;
	s->io.private_data = s;
	s->io.poll_fd = s->timer_fd;
	s->io.poll_events = POLLIN;
	s->io.mmap_rw = 0;
	s->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA | SND_PCM_IOPLUG_FLAG_MONOTONIC;
	if ((rc = snd_pcm_ioplug_create(&s->io, name, stream, mode)) < 0)
		goto fail;
	if ((rc = set_constraints(s, rate_pin)) < 0) {
		snd_pcm_ioplug_delete(&s->io); /* calls cb_close, which frees s */
		options_free(&o);
		return rc;
	}
	options_free(&o);
	*pcmp = s->io.pcm;
	return 0;
fail:
	options_free(&o);
	plugin_free(s);
	return rc;
}

SND_PCM_PLUGIN_SYMBOL(chorus_sim);
