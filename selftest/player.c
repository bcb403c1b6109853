/* player.c — the selftest's player thread (see player.h). */
#include "selftest/player.h"

#include <errno.h>
#include <gio/gio.h>
#include <pthread.h>
#include <sched.h>
#include <math.h>
#include <string.h>

#include "kpatch/reader.h"
#include "timehist/timehist.h"

struct player {
	player_cfg cfg;
	snd_pcm_t *pcm;
	snd_pcm_uframes_t buffer, period;
	struct kpatch_reader *kp; /* playback records, NULL: ALSA timestamps */
	timehist *th;
	GThread *thread;
	int joined;
	player_stats st;
};

/* Feed the waiting kpatch records to the fit (player thread). */
static void take_records(player *p)
{
	struct chorus_kpatch_record rec[32];
	char why[256];
	int n;
	while ((n = kpatch_reader_read(p->kp, rec, 32)) > 0)
		for (int i = 0; i < n; i++) {
			if (rec[i].flags & CHORUS_KPATCH_F_XRUN)
				timehist_break(p->th);
			if (timehist_add(p->th, (int64_t)rec[i].hw_ptr, kpatch_record_update_time(&rec[i]), why, sizeof why) >= 0)
				p->st.records++;
		}
	struct kpatch_reader_stats ks;
	kpatch_reader_get_stats(p->kp, &ks);
	p->st.records_lost = ks.seq.seq_lost + ks.seq.overflows;
}

/* ALSA's timestamp of the last playback hw_ptr update, fed to the fit: the
 * hardware pointer then is the frames written less those still queued
 * (player thread). */
static void take_alsa_stamp(player *p, int64_t written)
{
	snd_pcm_status_t *s;
	snd_htimestamp_t ts;
	char why[256];
	snd_pcm_status_alloca(&s);
	if (snd_pcm_status(p->pcm, s) < 0 || snd_pcm_status_get_state(s) != SND_PCM_STATE_RUNNING)
		return;
	snd_pcm_status_get_htstamp(s, &ts);
	if (!ts.tv_sec && !ts.tv_nsec)
		return;
	int64_t hw = written - (int64_t)p->buffer + (int64_t)snd_pcm_status_get_avail(s);
	if (timehist_add(p->th, hw, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, why, sizeof why) >= 0)
		p->st.records++;
}

/* The thread: write the signal period by period (blocking), time it. */
static gpointer play_thread(gpointer data)
{
	player *p = data;
	const player_cfg *c = &p->cfg;
	size_t fb = sig_sample_bytes(&c->sig) * c->sig.channels;
	void *buf = g_malloc(p->period * fb);
	if (c->rt_priority > 0) {
		struct sched_param sp = {.sched_priority = c->rt_priority};
		p->st.rt = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0;
	}
	/* After the signal, a fifth of a second of silence: a loopback moves
	 * data in its own steps (snd-aloop: jiffies), and the last frames
	 * played before a drain may never reach the capture side. */
	int64_t n = 0, total = c->frames + c->rate_hz / 5;
	while (n < total) {
		snd_pcm_uframes_t want = (snd_pcm_uframes_t)MIN((int64_t)p->period, total - n);
		if (n >= c->frames)
			memset(buf, 0, want * fb);
		else
			want = (snd_pcm_uframes_t)MIN((int64_t)want, c->frames - n);
		if (n < c->frames)
			sig_fill(&c->sig, n, want, buf);
		snd_pcm_sframes_t w = snd_pcm_writei(p->pcm, buf, want);
		if (w == -EPIPE) {
			p->st.underruns++;
			timehist_break(p->th);
			if (snd_pcm_prepare(p->pcm) < 0)
				break;
			continue;
		}
		if (w < 0) {
			g_snprintf(p->st.error, sizeof p->st.error, "%s: write: %s", c->pcm, snd_strerror((int)w));
			break;
		}
		n += w;
		if (p->kp)
			take_records(p);
		else
			take_alsa_stamp(p, n);
	}
	int rc = snd_pcm_drain(p->pcm);
	if (rc < 0 && !*p->st.error)
		g_snprintf(p->st.error, sizeof p->st.error, "%s: drain: %s", c->pcm, snd_strerror(rc));
	if (p->kp)
		take_records(p);
	p->st.played = MIN(n, c->frames);
	g_free(buf);
	return NULL;
}

#define FAIL(call, what) \
	do { \
		int rc_ = (call); \
		if (rc_ < 0) { \
			g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "%s: %s: %s", cfg->pcm, what, snd_strerror(rc_)); \
			player_free(p); \
			return NULL; \
		} \
	} while (0)

player *player_start(const player_cfg *cfg, GError **err)
{
	player *p = g_new0(player, 1);
	snd_pcm_hw_params_t *hw;
	snd_pcm_sw_params_t *sw;
	snd_pcm_info_t *info;
	const char *why;
	p->cfg = *cfg;
	p->st.source = "alsa";
	FAIL(snd_pcm_open(&p->pcm, cfg->pcm, SND_PCM_STREAM_PLAYBACK, 0), "cannot open for playback");
	snd_pcm_hw_params_alloca(&hw);
	snd_pcm_sw_params_alloca(&sw);
	snd_pcm_info_alloca(&info);
	p->period = cfg->period;
	p->buffer = (snd_pcm_uframes_t)cfg->period * cfg->periods;
	FAIL(snd_pcm_hw_params_any(p->pcm, hw), "no configuration");
	FAIL(snd_pcm_hw_params_set_access(p->pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access refused");
	FAIL(snd_pcm_hw_params_set_format(p->pcm, hw, cfg->sig.fmt), "format refused");
	FAIL(snd_pcm_hw_params_set_channels(p->pcm, hw, cfg->sig.channels), "channels refused");
	FAIL(snd_pcm_hw_params_set_rate(p->pcm, hw, cfg->rate_hz, 0), "rate refused");
	FAIL(snd_pcm_hw_params_set_period_size_near(p->pcm, hw, &p->period, NULL), "period refused");
	FAIL(snd_pcm_hw_params_set_buffer_size_near(p->pcm, hw, &p->buffer), "buffer refused");
	FAIL(snd_pcm_hw_params(p->pcm, hw), "hardware parameters refused");
	FAIL(snd_pcm_sw_params_current(p->pcm, sw), "no software parameters");
	FAIL(snd_pcm_sw_params_set_tstamp_mode(p->pcm, sw, SND_PCM_TSTAMP_ENABLE), "timestamps refused");
	FAIL(snd_pcm_sw_params_set_tstamp_type(p->pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC_RAW), "MONOTONIC_RAW timestamps refused");
	FAIL(snd_pcm_sw_params(p->pcm, sw), "software parameters refused");
	if (snd_pcm_type(p->pcm) == SND_PCM_TYPE_HW && snd_pcm_info(p->pcm, info) == 0 &&
	    kpatch_reader_open_for_pcm(snd_pcm_info_get_card(info), (int)snd_pcm_info_get_device(info),
				       (int)snd_pcm_info_get_subdevice(info), CHORUS_KPATCH_STREAM_PLAYBACK, &p->kp) == 0)
		p->st.source = "kpatch";
	timehist_params tp;
	timehist_params_default(&tp);
	tp.fit.mode = SYNC_FIT_LOWER;
	tp.fit.window = 256;
	tp.fit.nominal_slope = 1e9 / cfg->rate_hz;
	tp.jump_min = 1e6;
	tp.tolerance = (int64_t)cfg->rate_hz;
	if (!(p->th = timehist_new(&tp, &why))) {
		g_set_error(err, G_IO_ERROR, G_IO_ERROR_FAILED, "timehist: %s", why);
		player_free(p);
		return NULL;
	}
	p->thread = g_thread_new("player", play_thread, p);
	return p;
}

void player_join(player *p, player_stats *st)
{
	if (!p->joined && p->thread) {
		g_thread_join(p->thread);
		p->thread = NULL;
	}
	p->joined = 1;
	*st = p->st;
}

int player_time(const player *p, int64_t frame, double *t_ns, double *se_ns, char *why, size_t len)
{
	sync_tval y;
	double var;
	int rc = timehist_convert(p->th, sync_tval_of(frame), &y, &var, why, len);
	if (rc < 0)
		return rc;
	*t_ns = (double)y.i + y.f;
	*se_ns = sqrt(var);
	return 0;
}

void player_free(player *p)
{
	if (!p)
		return;
	if (p->thread)
		g_thread_join(p->thread);
	kpatch_reader_free(p->kp);
	if (p->pcm)
		snd_pcm_close(p->pcm);
	timehist_free(p->th);
	g_free(p);
}
