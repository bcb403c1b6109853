/* capture.c — ALSA capture stream (see capture.h). */
#include "audiod/capture.h"

#include <errno.h>
#include <poll.h>

#include "audiod/error.h"

struct capture {
	snd_pcm_t *pcm;
	capture_cfg actual;
	char *name;
	size_t frame_bytes;
	snd_pcm_uframes_t boundary;
	struct pollfd pfd[8];
	int npfd;
	int audio_type;            /* the driver's audio timestamp type at the last status, -1: none */
	int64_t audio_accuracy_ns; /* its reported accuracy, -1: not reported */
};

#define CHECK(call, what) \
	do { \
		int rc_ = (call); \
		if (rc_ < 0) { \
			g_set_error(err, AUDIOD_ERROR, -rc_, "%s: %s: %s", cfg->pcm, what, \
				    snd_strerror(rc_)); \
			capture_close(c); \
			return rc_; \
		} \
	} while (0)

int capture_open(const capture_cfg *cfg, capture **out, GError **err)
{
	capture *c = g_new0(capture, 1);
	snd_pcm_hw_params_t *hw;
	snd_pcm_sw_params_t *sw;
	int dir = 0;
	c->name = g_strdup(cfg->pcm);
	c->audio_type = -1;
	c->audio_accuracy_ns = -1;
	c->actual = *cfg;
	c->actual.pcm = c->name;
	CHECK(snd_pcm_open(&c->pcm, cfg->pcm, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK), "cannot open PCM");
	snd_pcm_hw_params_alloca(&hw);
	snd_pcm_sw_params_alloca(&sw);
	CHECK(snd_pcm_hw_params_any(c->pcm, hw), "no hardware configuration");
	CHECK(snd_pcm_hw_params_set_access(c->pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access refused");
	CHECK(snd_pcm_hw_params_set_format(c->pcm, hw, cfg->format), "sample format refused");
	CHECK(snd_pcm_hw_params_set_channels(c->pcm, hw, cfg->channels), "channel count refused");
	/* No resampling by alsa-lib: a resampled stream would not have the
	 * card's sample clock, which is the clock chorus timestamps. */
	snd_pcm_hw_params_set_rate_resample(c->pcm, hw, 0);
	CHECK(snd_pcm_hw_params_set_rate(c->pcm, hw, cfg->rate_hz, 0), "sample rate refused");
	snd_pcm_uframes_t period = cfg->period, buffer = cfg->buffer;
	CHECK(snd_pcm_hw_params_set_period_size_near(c->pcm, hw, &period, &dir), "period size refused");
	CHECK(snd_pcm_hw_params_set_buffer_size_near(c->pcm, hw, &buffer), "buffer size refused");
	CHECK(snd_pcm_hw_params(c->pcm, hw), "hardware parameters refused");
	c->actual.period = period;
	c->actual.buffer = buffer;
	CHECK(snd_pcm_sw_params_current(c->pcm, sw), "no software parameters");
	CHECK(snd_pcm_sw_params_set_avail_min(c->pcm, sw, period), "avail_min refused");
	CHECK(snd_pcm_sw_params_set_tstamp_mode(c->pcm, sw, SND_PCM_TSTAMP_ENABLE), "timestamps refused");
	/* MONOTONIC_RAW is the node's cpu clock; older kernels may refuse it,
	 * and then capture goes on with another timestamp source. */
	if (snd_pcm_sw_params_set_tstamp_type(c->pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC_RAW) < 0)
		g_warning("%s: CLOCK_MONOTONIC_RAW timestamps refused; ALSA timestamps unusable", cfg->pcm);
	CHECK(snd_pcm_sw_params_get_boundary(sw, &c->boundary), "no boundary");
	CHECK(snd_pcm_sw_params(c->pcm, sw), "software parameters refused");
	c->frame_bytes = (size_t)snd_pcm_format_physical_width(cfg->format) / 8 * cfg->channels;
	c->npfd = snd_pcm_poll_descriptors(c->pcm, c->pfd, G_N_ELEMENTS(c->pfd));
	if (c->npfd <= 0) {
		g_set_error(err, AUDIOD_ERROR, EIO, "%s: no poll descriptors", cfg->pcm);
		capture_close(c);
		return -EIO;
	}
	*out = c;
	return 0;
}

void capture_close(capture *c)
{
	if (!c)
		return;
	if (c->pcm)
		snd_pcm_close(c->pcm);
	g_free(c->name);
	g_free(c);
}

const capture_cfg *capture_actual(const capture *c)
{
	return &c->actual;
}

size_t capture_frame_bytes(const capture *c)
{
	return c->frame_bytes;
}

void capture_hw_ids(const capture *c, int *card, int *device, int *subdevice)
{
	snd_pcm_info_t *info;
	snd_pcm_info_alloca(&info);
	*card = *device = *subdevice = -1;
	if (snd_pcm_type(c->pcm) != SND_PCM_TYPE_HW || snd_pcm_info(c->pcm, info) < 0)
		return;
	*card = snd_pcm_info_get_card(info);
	*device = (int)snd_pcm_info_get_device(info);
	*subdevice = (int)snd_pcm_info_get_subdevice(info);
}

int capture_start(capture *c)
{
	return snd_pcm_start(c->pcm);
}

int capture_poll(capture *c, int timeout_ms)
{
	int n = poll(c->pfd, (nfds_t)c->npfd, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n > 0;
}

int capture_revents(capture *c)
{
	unsigned short revents = 0;
	int rc = snd_pcm_poll_descriptors_revents(c->pcm, c->pfd, (unsigned)c->npfd, &revents);
	if (rc < 0)
		return rc;
	if (revents & POLLERR)
		return snd_pcm_state(c->pcm) == SND_PCM_STATE_XRUN ? -EPIPE : -EIO;
	return (revents & POLLIN) ? 1 : 0;
}

long capture_read(capture *c, void *buf, snd_pcm_uframes_t max)
{
	snd_pcm_sframes_t n = snd_pcm_readi(c->pcm, buf, max);
	if (n == -EAGAIN)
		return 0;
	return (long)n;
}

int capture_htimestamp(capture *c, int64_t *tstamp_ns, snd_pcm_uframes_t *avail)
{
	snd_pcm_status_t *st;
	snd_pcm_status_alloca(&st);
	/* Ask for the link (sample counter or wallclock) time the driver can
	 * take together with the system time, A/D delay included. */
	snd_pcm_audio_tstamp_config_t cfg = {.type_requested = SND_PCM_AUDIO_TSTAMP_TYPE_LINK, .report_delay = 1};
	snd_pcm_status_set_audio_htstamp_config(st, &cfg);
	int rc = snd_pcm_status(c->pcm, st);
	if (rc < 0)
		return rc;
	if (snd_pcm_status_get_state(st) == SND_PCM_STATE_XRUN)
		return -EPIPE;
	snd_htimestamp_t ts;
	snd_pcm_status_get_htstamp(st, &ts);
	if (ts.tv_sec == 0 && ts.tv_nsec == 0)
		return -ENODATA;
	*tstamp_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	*avail = snd_pcm_status_get_avail(st);
	snd_pcm_audio_tstamp_report_t rep;
	snd_pcm_status_get_audio_htstamp_report(st, &rep);
	snd_htimestamp_t ats;
	snd_pcm_status_get_audio_htstamp(st, &ats);
	c->audio_type = rep.valid && (ats.tv_sec || ats.tv_nsec) ? (int)rep.actual_type : -1;
	c->audio_accuracy_ns = rep.valid && rep.accuracy_report ? (int64_t)rep.accuracy : -1;
	return 0;
}

void capture_audio_tstamp(const capture *c, int *type, int64_t *accuracy_ns)
{
	*type = c->audio_type;
	*accuracy_ns = c->audio_accuracy_ns;
}

int capture_recover(capture *c, int err)
{
	(void)err;
	return snd_pcm_prepare(c->pcm);
}

snd_pcm_uframes_t capture_boundary(const capture *c)
{
	return c->boundary;
}
