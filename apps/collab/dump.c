/* dump.c — one solve's inputs on disk (dump.h). */
#include "apps/collab/dump.h"

#include <errno.h>
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "archive/durable.h"

#define DUMP_ERROR (g_quark_from_static_string("tdoa-dump"))

/* The samples of one clip as dir/NAME-K.wav (32-bit float), through a
 * temporary name: every frame written and the file closed, or -1. */
static int write_wav(const char *dir, const char *name, int k, const tdoa_input *c, GError **err)
{
	char *file = g_strdup_printf("%s/%s-%d.wav", dir, name, k);
	char *tmp = g_strdup_printf("%s.tmp", file);
	SF_INFO si = {.samplerate = (int)lround(c->rate_hz), .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT};
	int rc = -1;
	SNDFILE *sf = sf_open(tmp, SFM_WRITE, &si);
	if (!sf) {
		g_set_error(err, DUMP_ERROR, EIO, "%s: %s", tmp, sf_strerror(NULL));
		goto out;
	}
	sf_count_t w = sf_write_float(sf, c->x, (sf_count_t)c->n);
	if (w != (sf_count_t)c->n) {
		g_set_error(err, DUMP_ERROR, EIO, "%s: wrote %lld of %zu samples: %s", tmp, (long long)w, c->n, sf_strerror(sf));
		sf_close(sf);
		unlink(tmp);
		goto out;
	}
	int crc = sf_close(sf);
	if (crc != 0) {
		g_set_error(err, DUMP_ERROR, EIO, "%s: close: %s", tmp, sf_error_number(crc));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, file) < 0) {
		g_set_error(err, DUMP_ERROR, errno, "rename %s to %s: %s", tmp, file, g_strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	g_free(tmp);
	g_free(file);
	return rc;
}

int tdoa_dump_write(const char *dir, const char *name, const tdoa_input *in, int n, const tdoa_params *p,
		    const tdoa_result *res, GError **err)
{
	if (n < 1 || n > TDOA_MAX) {
		g_set_error(err, DUMP_ERROR, EINVAL, "%d clips (1..%d)", n, TDOA_MAX);
		return -1;
	}
	if (g_mkdir_with_parents(dir, 0755) < 0) {
		g_set_error(err, DUMP_ERROR, errno, "cannot create %s: %s", dir, g_strerror(errno));
		return -1;
	}
	for (int k = 0; k < n; k++)
		if (write_wav(dir, name, k, &in[k], err) < 0)
			return -1;
	GKeyFile *kf = g_key_file_new();
	const char *t = "tdoa";
	g_key_file_set_double(kf, t, "f_lo_hz", p->f_lo_hz);
	g_key_file_set_double(kf, t, "f_hi_hz", p->f_hi_hz);
	g_key_file_set_double(kf, t, "beta", p->beta);
	g_key_file_set_string(kf, t, "weighting", dsp_gcc_weighting_name(p->weighting));
	g_key_file_set_double(kf, t, "onset_floor_s", p->onset_floor_s);
	g_key_file_set_double(kf, t, "margin_m", p->margin_m);
	g_key_file_set_double(kf, t, "ambiguity_ratio", p->ambiguity_ratio);
	g_key_file_set_double(kf, t, "ambiguity_radius_m", p->ambiguity_radius_m);
	g_key_file_set_double(kf, t, "dominance_ratio", p->dominance_ratio);
	g_key_file_set_integer(kf, t, "separate", p->separate);
	g_key_file_set_double(kf, t, "depth_m", p->depth_m);
	g_key_file_set_double(kf, t, "c_m_s", p->c_m_s);
	g_key_file_set_double(kf, t, "c_sd_m_s", p->c_sd_m_s);
	g_key_file_set_double(kf, t, "pos_sd_m", p->pos_sd_m);
	g_key_file_set_double_list(kf, t, "wind_m_s", (double *)p->wind_m_s, 3);
	g_key_file_set_double(kf, t, "source_z_m", p->source_z_m);
	g_key_file_set_double(kf, t, "alpha", p->alpha);
	g_key_file_set_double(kf, t, "onset_check_k", p->onset_check_k);
	g_key_file_set_double(kf, t, "onset_check_floor_s", p->onset_check_floor_s);
	g_key_file_set_integer(kf, t, "onset_timing", p->onset_timing);
	g_key_file_set_double(kf, t, "coarse_m", p->coarse_m);
	g_key_file_set_double(kf, t, "source_speed_m_s", p->source_speed_m_s);
	g_key_file_set_integer(kf, t, "clips", n);
	for (int k = 0; k < n; k++) {
		const tdoa_input *c = &in[k];
		char g[32], wav[256];
		g_snprintf(g, sizeof g, "clip.%d", k);
		g_snprintf(wav, sizeof wav, "%s-%d.wav", name, k);
		g_key_file_set_string(kf, g, "samples", wav);
		g_key_file_set_uint64(kf, g, "node", c->node);
		g_key_file_set_double_list(kf, g, "mic_m", (double *)c->mic_m, 3);
		g_key_file_set_double(kf, g, "rate_hz", c->rate_hz);
		g_key_file_set_double(kf, g, "rate_eff_hz", c->rate_eff_hz);
		g_key_file_set_int64(kf, g, "t0_ns", c->t0_ns);
		g_key_file_set_double(kf, g, "t0_frac_ns", c->t0_frac_ns);
		g_key_file_set_double(kf, g, "t0_se_ns", c->t0_se_ns);
		g_key_file_set_int64(kf, g, "onset_ns", c->onset_ns);
		g_key_file_set_double(kf, g, "onset_se_ns", c->onset_se_ns);
		g_key_file_set_double(kf, g, "onset_crb_se_ns", c->onset_crb_se_ns);
		if (c->n_alt > 0)
			g_key_file_set_double_list(kf, g, "onset_alt_ns", (double *)c->onset_alt_ns, (gsize)MIN(c->n_alt, TDOA_ALT));
		g_key_file_set_double(kf, g, "snr_db", c->snr_db);
	}
	if (res) {
		const char *r = "result";
		g_key_file_set_integer(kf, r, "loc_status", (int)res->loc.status); /* dsp_loc_status */
		g_key_file_set_integer(kf, r, "ambiguous", res->ambiguous);
		g_key_file_set_double_list(kf, r, "pos_m", (double *)res->loc.pos_m, 3);
		g_key_file_set_integer(kf, r, "n_used", res->loc.n_used);
		g_key_file_set_integer(kf, r, "rejected_node", res->rejected_node);
		g_key_file_set_string(kf, r, "why", res->why);
	}
	gsize len = 0;
	char *text = g_key_file_to_data(kf, &len, NULL);
	g_key_file_free(kf);
	char *file = g_strdup_printf("%s.ini", name);
	gboolean ok = archive_write_atomic(dir, file, text, len, err);
	g_free(file);
	g_free(text);
	return ok ? 0 : -1;
}

void tdoa_dump_free(tdoa_input *in, int n)
{
	for (int k = 0; k < n; k++) {
		g_free((float *)in[k].x);
		in[k].x = NULL;
	}
}

/* What a g_key_file_get_* said (e, freed), as *err naming path, group
 * and key: -1; 0 when it said nothing. */
static int key_err(GError *e, const char *path, const char *g, const char *k, GError **err)
{
	if (!e)
		return 0;
	g_set_error(err, DUMP_ERROR, EINVAL, "%s: [%s] %s: %s", path, g, k, e->message);
	g_error_free(e);
	return -1;
}

/* One double key: 0, or -1 with *err. */
static int get_d(GKeyFile *kf, const char *path, const char *g, const char *k, double *v, GError **err)
{
	GError *e = NULL;
	*v = g_key_file_get_double(kf, g, k, &e);
	return key_err(e, path, g, k, err);
}

/* A key later versions added: its default stays when a case lacks it. */
static int get_d_opt(GKeyFile *kf, const char *path, const char *g, const char *k, double *v, GError **err)
{
	return g_key_file_has_key(kf, g, k, NULL) ? get_d(kf, path, g, k, v, err) : 0;
}

/* A list of exactly three doubles. */
static int get_d3(GKeyFile *kf, const char *path, const char *g, const char *k, double v[3], GError **err)
{
	GError *e = NULL;
	gsize len = 0;
	double *l = g_key_file_get_double_list(kf, g, k, &len, &e);
	if (e || len != 3) {
		g_set_error(err, DUMP_ERROR, EINVAL, "%s: [%s] %s: %s", path, g, k, e ? e->message : "not three numbers");
		g_clear_error(&e);
		g_free(l);
		return -1;
	}
	memcpy(v, l, 3 * sizeof *v);
	g_free(l);
	return 0;
}

/* One integer key: 0, or -1 with *err. */
static int get_i64(GKeyFile *kf, const char *path, const char *g, const char *k, gint64 *v, GError **err)
{
	GError *e = NULL;
	*v = g_key_file_get_int64(kf, g, k, &e);
	return key_err(e, path, g, k, err);
}

/* The samples of clip c from file (beside path): mono, c->rate_hz. */
static int read_wav(const char *path, const char *g, const char *file, tdoa_input *c, GError **err)
{
	char *dir = g_path_get_dirname(path);
	char *full = g_path_is_absolute(file) ? g_strdup(file) : g_build_filename(dir, file, NULL);
	g_free(dir);
	SF_INFO si = {0};
	int rc = -1;
	SNDFILE *sf = sf_open(full, SFM_READ, &si);
	if (!sf) {
		g_set_error(err, DUMP_ERROR, EIO, "%s: [%s] samples: %s: %s", path, g, full, sf_strerror(NULL));
		goto out;
	}
	if (si.channels != 1 || si.frames <= 0 || si.frames > (sf_count_t)(1 << 26)) {
		g_set_error(err, DUMP_ERROR, EINVAL, "%s: [%s] samples: %s: %d channels, %lld frames (one channel wanted)", path, g, full,
			    si.channels, (long long)si.frames);
		sf_close(sf);
		goto out;
	}
	float *x = g_new(float, si.frames);
	sf_count_t got = sf_read_float(sf, x, si.frames);
	sf_close(sf);
	if (got != si.frames) {
		g_set_error(err, DUMP_ERROR, EIO, "%s: [%s] samples: %s: read %lld of %lld frames", path, g, full, (long long)got,
			    (long long)si.frames);
		g_free(x);
		goto out;
	}
	c->x = x;
	c->n = (size_t)si.frames;
	rc = 0;
out:
	g_free(full);
	return rc;
}

int tdoa_dump_read(const char *path, tdoa_input in[TDOA_MAX], int *n, tdoa_params *p, GError **err)
{
	GKeyFile *kf = g_key_file_new();
	GError *e = NULL;
	int rc = -1, k = 0;
	*n = 0;
	memset(in, 0, TDOA_MAX * sizeof *in);
	tdoa_params_default(p);
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e)) {
		g_set_error(err, DUMP_ERROR, EINVAL, "%s: %s", path, e->message);
		g_error_free(e);
		goto out;
	}
	const char *t = "tdoa";
	gint64 clips = 0, sep = 0;
	char *w = NULL;
	if (get_d(kf, path, t, "f_lo_hz", &p->f_lo_hz, err) || get_d(kf, path, t, "f_hi_hz", &p->f_hi_hz, err) ||
	    get_d(kf, path, t, "beta", &p->beta, err) || get_d(kf, path, t, "onset_floor_s", &p->onset_floor_s, err) ||
	    get_d(kf, path, t, "margin_m", &p->margin_m, err) || get_d(kf, path, t, "ambiguity_ratio", &p->ambiguity_ratio, err) ||
	    get_d(kf, path, t, "ambiguity_radius_m", &p->ambiguity_radius_m, err) ||
	    get_d(kf, path, t, "dominance_ratio", &p->dominance_ratio, err) || get_i64(kf, path, t, "separate", &sep, err) ||
	    get_d(kf, path, t, "depth_m", &p->depth_m, err) || get_d(kf, path, t, "c_m_s", &p->c_m_s, err) ||
	    get_d(kf, path, t, "c_sd_m_s", &p->c_sd_m_s, err) || get_d(kf, path, t, "pos_sd_m", &p->pos_sd_m, err) ||
	    get_d3(kf, path, t, "wind_m_s", p->wind_m_s, err) || get_d(kf, path, t, "source_z_m", &p->source_z_m, err) ||
	    get_d(kf, path, t, "alpha", &p->alpha, err) || get_i64(kf, path, t, "clips", &clips, err))
		goto out;
	double timing = p->onset_timing;
	if (get_d_opt(kf, path, t, "onset_check_k", &p->onset_check_k, err) ||
	    get_d_opt(kf, path, t, "onset_check_floor_s", &p->onset_check_floor_s, err) ||
	    get_d_opt(kf, path, t, "onset_timing", &timing, err) || get_d_opt(kf, path, t, "coarse_m", &p->coarse_m, err) ||
	    get_d_opt(kf, path, t, "source_speed_m_s", &p->source_speed_m_s, err))
		goto out;
	p->onset_timing = timing != 0;
	p->separate = (int)sep;
	w = g_key_file_get_string(kf, t, "weighting", NULL);
	if (!w || dsp_gcc_weighting_parse(w, &p->weighting) < 0) {
		g_set_error(err, DUMP_ERROR, EINVAL, "%s: [tdoa] weighting: \"%s\" is not phat, scot, roth or cc", path, w ? w : "");
		g_free(w);
		goto out;
	}
	g_free(w);
	if (clips < 1 || clips > TDOA_MAX) {
		g_set_error(err, DUMP_ERROR, EINVAL, "%s: [tdoa] clips: %" G_GINT64_FORMAT " (1..%d)", path, clips, TDOA_MAX);
		goto out;
	}
	for (k = 0; k < clips; k++) {
		tdoa_input *c = &in[k];
		char g[32];
		g_snprintf(g, sizeof g, "clip.%d", k);
		gint64 node = 0, t0 = 0, on = 0;
		if (get_i64(kf, path, g, "node", &node, err) || get_d3(kf, path, g, "mic_m", c->mic_m, err) ||
		    get_d(kf, path, g, "rate_hz", &c->rate_hz, err) || get_d(kf, path, g, "rate_eff_hz", &c->rate_eff_hz, err) ||
		    get_i64(kf, path, g, "t0_ns", &t0, err) || get_d(kf, path, g, "t0_frac_ns", &c->t0_frac_ns, err) ||
		    get_d(kf, path, g, "t0_se_ns", &c->t0_se_ns, err) || get_i64(kf, path, g, "onset_ns", &on, err) ||
		    get_d(kf, path, g, "onset_se_ns", &c->onset_se_ns, err) ||
		    get_d(kf, path, g, "onset_crb_se_ns", &c->onset_crb_se_ns, err) || get_d(kf, path, g, "snr_db", &c->snr_db, err))
			goto out;
		if (node < 0 || node > G_MAXUINT32 || !(c->rate_hz > 0)) {
			g_set_error(err, DUMP_ERROR, EINVAL, "%s: [%s]: node %" G_GINT64_FORMAT " or rate_hz %g out of range", path, g,
				    node, c->rate_hz);
			goto out;
		}
		c->node = (uint32_t)node;
		c->t0_ns = t0;
		c->onset_ns = on;
		/* Optional (dumps before onset_alt have none). */
		gsize na = 0;
		double *alt = g_key_file_get_double_list(kf, g, "onset_alt_ns", &na, NULL);
		if (alt && na > TDOA_ALT) {
			g_set_error(err, DUMP_ERROR, EINVAL, "%s: [%s] onset_alt_ns: %zu values (at most %d)", path, g, (size_t)na,
				    TDOA_ALT);
			g_free(alt);
			goto out;
		}
		c->n_alt = alt ? (int)na : 0;
		for (gsize a = 0; alt && a < na; a++)
			c->onset_alt_ns[a] = alt[a];
		g_free(alt);
		char *file = g_key_file_get_string(kf, g, "samples", NULL);
		if (!file) {
			g_set_error(err, DUMP_ERROR, EINVAL, "%s: [%s] samples: missing", path, g);
			goto out;
		}
		int wrc = read_wav(path, g, file, c, err);
		g_free(file);
		if (wrc < 0)
			goto out;
	}
	*n = (int)clips;
	rc = 0;
out:
	if (rc < 0)
		tdoa_dump_free(in, k);
	g_key_file_free(kf);
	return rc;
}
