/* onset.c — matched-filter onset with a Cramer-Rao error (see onset.h). */
#include "apps/dsp/onset.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "apps/dsp/xcorr.h"

struct dsp_onset {
	float *h; /* template */
	size_t m;
	double eh;   /* sum h^2 */
	double *acf; /* the template's autocorrelation at lags 0 .. m-1, over eh */
	int lead;    /* dsp_onset_set_first_arrival (0: off) */
	double *cum; /* cum[k]: sum of h^2 over its first k samples (k <= m) */
	dsp_xcorr *xc;
};

dsp_onset *dsp_onset_new(const float *h, size_t m, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	double eh = 0;
	for (size_t i = 0; i < m; i++)
		eh += (double)h[i] * h[i];
	if (m == 0 || !(eh > 0) || !isfinite(eh)) {
		*why = "onset: the template is empty, silent or not finite";
		return NULL;
	}
	dsp_onset *o = calloc(1, sizeof *o);
	if (o) {
		o->h = malloc(m * sizeof *h);
		o->xc = dsp_xcorr_new();
	}
	if (!o || !o->h || !o->xc) {
		dsp_onset_free(o);
		*why = "onset: out of memory";
		return NULL;
	}
	memcpy(o->h, h, m * sizeof *h);
	o->m = m;
	o->eh = eh;
	/* The autocorrelation: how alike the template is to itself shifted,
	 * which makes the noise at two candidate lags alike too. */
	dsp_peak pk;
	o->acf = malloc(m * sizeof *o->acf);
	if (!o->acf || dsp_xcorr_cross(o->xc, h, m, h, m, 0) != 0 ||
	    dsp_xcorr_peak(o->xc, 0, (int)m - 1, 0, (int)dsp_xcorr_nfft(o->xc) / 2, &pk) != 0) {
		dsp_onset_free(o);
		*why = "onset: out of memory";
		return NULL;
	}
	for (size_t l = 0; l < m; l++)
		o->acf[l] = dsp_xcorr_lag(o->xc, (int)l) / eh;
	return o;
}

void dsp_onset_free(dsp_onset *o)
{
	if (!o)
		return;
	free(o->h);
	free(o->acf);
	free(o->cum);
	dsp_xcorr_free(o->xc);
	free(o);
}

/* |r_a(tau)|^2, the squared envelope of the correlation (r plus i times
 * its Hilbert transform), from the cross spectrum's bins [k_lo, k_hi]. */
static double envelope2(const dsp_xcorr *xc, double tau, int k_lo, int k_hi)
{
	double re, im;
	dsp_spec_analytic(dsp_xcorr_spec((dsp_xcorr *)xc), dsp_xcorr_nfft(xc), tau, k_lo, k_hi, &re, &im);
	return re * re + im * im;
}

/* The envelope's peak within +-w samples of lag l0: the largest at
 * integer lags, refined by a parabola. */
static double envelope_peak(const dsp_xcorr *xc, int l0, int w, int k_lo, int k_hi)
{
	int best = l0;
	double bv = -1, e[3];
	for (int l = l0 - w; l <= l0 + w; l++) {
		double v = envelope2(xc, l, k_lo, k_hi);
		if (v > bv) {
			bv = v;
			best = l;
		}
	}
	for (int i = 0; i < 3; i++)
		e[i] = envelope2(xc, best - 1 + i, k_lo, k_hi);
	double den = e[0] - 2 * e[1] + e[2];
	double off = den < 0 ? 0.5 * (e[0] - e[2]) / den : 0;
	return best + fmax(-0.5, fmin(0.5, off));
}

/* The noise's power spectral density where the template has its energy,
 * per sample (white noise of variance s2 gives s2): the Hann-windowed
 * periodogram of x[0, pre) (zero padded to nf) weighted by |H_k|^2. */
static double template_band_noise(const float *x, int pre, const fftwf_complex *H, int nf)
{
	/* The periodogram on a transform no longer than the stretch needs
	 * (a Hann window of `pre` samples resolves no finer), each of its
	 * bins weighted by the template's energy in the bins of nf that fall
	 * on it. */
	int L = 64;
	while (L < pre && L < nf)
		L *= 2;
	float *t = fftwf_alloc_real((size_t)L);
	fftwf_complex *X = fftwf_alloc_complex((size_t)L / 2 + 1);
	double *W = calloc((size_t)L / 2 + 1, sizeof *W);
	fftwf_plan pl = t && X && W ? fftwf_plan_dft_r2c_1d(L, t, X, FFTW_ESTIMATE) : NULL;
	double v = -1;
	if (pl) {
		int n = pre < L ? pre : L;
		double mu = 0, w2 = 0;
		for (int i = 0; i < n; i++)
			mu += x[i];
		mu /= n;
		for (int i = 0; i < L; i++) {
			double w = i < n ? 0.5 - 0.5 * cos(2 * M_PI * (i + 0.5) / n) : 0;
			t[i] = (float)(i < n ? w * (x[i] - mu) : 0);
			w2 += w * w;
		}
		fftwf_execute(pl);
		for (int k = 1; k < nf / 2; k++) {
			int kk = (int)lround((double)k * L / nf);
			if (kk >= 1 && kk < L / 2)
				W[kk] += (double)H[k][0] * H[k][0] + (double)H[k][1] * H[k][1];
		}
		double num = 0, den = 0;
		for (int k = 1; k < L / 2; k++) {
			num += W[k] * ((double)X[k][0] * X[k][0] + (double)X[k][1] * X[k][1]);
			den += W[k];
		}
		v = den > 0 && w2 > 0 ? num / den / w2 : -1;
		fftwf_destroy_plan(pl);
	}
	fftwf_free(t);
	fftwf_free(X);
	free(W);
	return v;
}

/* List alternative lag l of likelihood w in out, heaviest first (the
 * lightest goes when the list is full). */
static void keep_alt(dsp_onset_result *out, int l, double w)
{
	int k;
	if (out->n_alt < DSP_ONSET_ALT)
		k = out->n_alt++;
	else if (out->alt_w[DSP_ONSET_ALT - 1] >= w)
		return;
	else
		k = DSP_ONSET_ALT - 1;
	for (; k > 0 && out->alt_w[k - 1] < w; k--) {
		out->alt_tau[k] = out->alt_tau[k - 1];
		out->alt_w[k] = out->alt_w[k - 1];
	}
	out->alt_tau[k] = l;
	out->alt_w[k] = w;
}

void dsp_onset_set_first_arrival(dsp_onset *o, int lead)
{
	o->lead = lead > 0 ? lead : 0;
	if (o->lead && !o->cum && (o->cum = malloc((o->m + 1) * sizeof *o->cum))) {
		o->cum[0] = 0;
		for (size_t k = 0; k < o->m; k++)
			o->cum[k + 1] = o->cum[k] + (double)o->h[k] * o->h[k];
	}
	if (!o->cum)
		o->lead = 0; /* out of memory: the largest peak, as without */
}

/* The largest |acf| within w lags of d (the autocorrelation's envelope
 * there, near enough: the carrier's cycles fill it). */
static double acf_env(const dsp_onset *o, int d, int w)
{
	double m = 0;
	for (int e = d - w < 0 ? 0 : d - w; e <= d + w && e < (int)o->m; e++)
		m = fmax(m, fabs(o->acf[e]));
	return m;
}

/* The template's first d samples against x at lag l. */
static double head_corr(const dsp_onset *o, const float *x, size_t n, int l, int d)
{
	double s = 0;
	for (size_t k = 0; k < (size_t)d && k < o->m && (size_t)l + k < n; k++)
		s += (double)o->h[k] * x[(size_t)l + k];
	return s;
}

/* How far the correlation's main lobe about lag l (value top) departs
 * from the template's own (its autocorrelation times top) over +-L lags:
 * the RMS difference over top, 0..1.  An echo merged into the lobe shows
 * here; a lone path leaves only the noise's. */
static double lobe_misfit(const dsp_onset *o, int l, double top, int L)
{
	double s = 0;
	int k_n = 0;
	for (int k = -L; k <= L; k++) {
		int d = abs(k);
		if ((size_t)d >= o->m)
			continue;
		double e = dsp_xcorr_lag(o->xc, l + k) / top - o->acf[d];
		s += e * e;
		k_n++;
	}
	return k_n ? fmin(1.0, sqrt(s / k_n)) : 1.0;
}

/* The share of x's energy under the template at tau that a h explains. */
static double explained_at(const dsp_onset *o, const float *x, size_t n, double tau, double a)
{
	double xx = 0;
	int64_t k0 = (int64_t)floor(tau);
	for (int64_t k = k0 < 0 ? 0 : k0; k < k0 + (int64_t)o->m && k < (int64_t)n; k++)
		xx += (double)x[k] * x[k];
	return xx > 0 ? fmin(1.0, fmax(0.0, a * a * o->eh / xx)) : 0;
}

/* The earliest path of the call before the largest peak (best, value
 * top): its lag, or -1 (see dsp_onset_set_first_arrival). */
static int first_path(const dsp_onset *o, const float *x, size_t n, int lag_lo, int best, double top, double sd_r,
		      int w, double sd)
{
	int from = best - o->lead;
	if (from < lag_lo + 1)
		from = lag_lo + 1;
	for (int l = from; l < best - w; l++) {
		double v = dsp_xcorr_lag(o->xc, l);
		if (!(v > 0) || v < dsp_xcorr_lag(o->xc, l - 1) || v < dsp_xcorr_lag(o->xc, l + 1))
			continue;
		double side = acf_env(o, best - l, w);
		/* where the template resembles itself (a pulse train a pulse
		 * early) a peak is another alignment, not another path */
		if (side < DSP_ONSET_FIRST_MIN && v >= DSP_ONSET_FIRST_MIN * top && v > side * top + DSP_ONSET_FIRST_K * sd_r) {
			/* that path's own main lobe: its largest within two
			 * carrier cycles (l may be its leading side lobe) */
			int pl = l;
			for (int k = l + 1; k <= l + 2 * w && k < best - w; k++)
				if (dsp_xcorr_lag(o->xc, k) > dsp_xcorr_lag(o->xc, pl))
					pl = k;
			/* and the call begins there: the template's part before
			 * the largest peak's start (its first best - pl samples)
			 * alone matches at pl, at least half as strongly as a path
			 * of that amplitude would and DSP_ONSET_FIRST_K noise s.d.
			 * clear of nothing (a narrow-band template shifted early
			 * matches the reverberation between a pulse train's later
			 * pulses with its later part, its first part over the
			 * silence before the call) */
			int d = best - pl;
			double e = o->cum[(size_t)d < o->m ? (size_t)d : o->m], hp = head_corr(o, x, n, pl, d);
			double a = dsp_xcorr_lag(o->xc, pl) / o->eh;
			if (e > 0 && hp >= 0.5 * a * e && hp > DSP_ONSET_FIRST_K * sd * sqrt(e))
				return pl;
		}
	}
	return -1;
}

int dsp_onset_refine(dsp_onset *o, const float *x, size_t n, int lag_lo, int lag_hi,
		     dsp_onset_result *out, const char **why)
{
	static const char *dummy;
	if (!why)
		why = &dummy;
	if (n < o->m) {
		*why = "onset: clip shorter than the template";
		return -EINVAL;
	}
	int e = dsp_xcorr_cross(o->xc, o->h, o->m, x, n, 0);
	if (e) {
		*why = "onset: out of memory";
		return e;
	}
	out->n_alt = 0;
	out->lead = 0;
	/* the template must lie inside the clip */
	if (lag_lo < 0)
		lag_lo = 0;
	if (lag_hi > (int)(n - o->m))
		lag_hi = (int)(n - o->m);
	int nf = (int)dsp_xcorr_nfft(o->xc);
	dsp_peak pk;
	if (dsp_xcorr_peak(o->xc, lag_lo, lag_hi, 0, nf / 2, &pk) != 0 || !(pk.value > 0)) {
		*why = "onset: no positive match of the template in the search window";
		return -EDOM;
	}
	/* rms frequency of the template, from its spectrum */
	const fftwf_complex *H = dsp_xcorr_spec_a(o->xc);
	double s0 = 0, s2 = 0;
	for (int k = 1; k < nf / 2; k++) {
		double w = 2 * M_PI * k / nf, p = (double)H[k][0] * H[k][0] + (double)H[k][1] * H[k][1];
		s0 += p;
		s2 += w * w * p;
	}
	double w_rms = s0 > 0 ? sqrt(s2 / s0) : 0;
	/* and its centroid and spread about it (the envelope's bandwidth) */
	double s1 = 0;
	for (int k = 1; k < nf / 2; k++) {
		double w = 2 * M_PI * k / nf, p = (double)H[k][0] * H[k][0] + (double)H[k][1] * H[k][1];
		s1 += w * p;
	}
	double w_c = s0 > 0 ? s1 / s0 : 0, b_env = s0 > 0 ? sqrt(fmax(s2 / s0 - w_c * w_c, 0)) : 0;
	/* the bins holding all but 1e-6 of the template's energy (the
	 * envelope's sums need no others) */
	int k_lo = 1, k_hi = nf / 2 - 1;
	for (double c = 0; k_lo < k_hi; k_lo++) {
		c += (double)H[k_lo][0] * H[k_lo][0] + (double)H[k_lo][1] * H[k_lo][1];
		if (c > 5e-7 * s0)
			break;
	}
	for (double c = 0; k_hi > k_lo; k_hi--) {
		c += (double)H[k_hi][0] * H[k_hi][0] + (double)H[k_hi][1] * H[k_hi][1];
		if (c > 5e-7 * s0)
			break;
	}
	int moved = 0;
	double lead = 0, enr_top = 0, explained_top = 0;
again:;
	double a = pk.value / o->eh;
	/* noise: the clip before the onset (minus its mean), else the residual */
	int pre = (int)floor(pk.tau) - 1;
	double var;
	if (pre >= 32) {
		double mu = 0, ss = 0;
		for (int i = 0; i < pre; i++)
			mu += x[i];
		mu /= pre;
		for (int i = 0; i < pre; i++)
			ss += (x[i] - mu) * (x[i] - mu);
		var = ss / (pre - 1);
	} else {
		double ex = 0;
		for (size_t i = 0; i < n; i++)
			ex += (double)x[i] * x[i];
		var = (ex - pk.value * pk.value / o->eh) / (double)(n > 1 ? n - 1 : 1);
	}
	if (!(var > 0))
		var = 1e-30;
	/* What the correlation's noise is: the noise's power where the
	 * template has its energy (its spectrum-weighted PSD), which for white
	 * noise is var; a background loud outside the call's band (wind below
	 * it) inflates var but not this. */
	double var_eq = pre >= 32 ? template_band_noise(x, pre, H, nf) : var;
	if (!(var_eq > 0))
		var_eq = var;
	/* An earlier path than the largest peak (dsp_onset_set_first_arrival):
	 * its peak is the start, and everything is measured again from it
	 * (the noise before it, its amplitude; the later paths are misfit). */
	if (o->lead > 0 && !moved) {
		int w = w_c > 0 ? (int)ceil(2 * 2 * M_PI / w_c) : 2;
		int l = first_path(o, x, n, lag_lo, pk.lag0, pk.value, sqrt(var_eq * o->eh), w, sqrt(var_eq));
		dsp_peak p1;
		if (l >= 0 && dsp_xcorr_peak(o->xc, l - 1, l + 1, 0, nf / 2, &p1) == 0 && p1.value > 0) {
			lead = pk.tau - p1.tau;
			enr_top = a * a * o->eh / var_eq;
			explained_top = explained_at(o, x, n, pk.tau, a);
			pk = p1;
			moved = 1;
			goto again;
		}
	}
	double enr = a * a * o->eh / var_eq;
	out->lead = lead;
	out->tau = pk.tau;
	out->amp = a;
	out->noise_sd = sqrt(var);
	/* how well the template fits the call: the largest peak's (which
	 * template a call is does not depend on which path times it) */
	out->enr_db = 10 * log10(moved ? enr_top : enr);
	out->se_crb = w_rms > 0 ? 1.0 / (w_rms * sqrt(enr)) : INFINITY;
	out->second = pk.second;
	/* The misfit: what the fitted template leaves of the clip under it,
	 * beyond the noise, per sample (sum (x - a h)^2 = sum x^2 - a^2 sum h^2
	 * at the peak). */
	double xx = 0;
	int64_t k0 = (int64_t)floor(pk.tau);
	for (int64_t k = k0 < 0 ? 0 : k0; k < k0 + (int64_t)o->m && k < (int64_t)n; k++)
		xx += (double)x[k] * x[k];
	double left = xx - a * a * o->eh;
	out->explained = moved ? explained_top : xx > 0 ? fmin(1.0, fmax(0.0, a * a * o->eh / xx))
							: 0;
	out->misfit_sd = sqrt(fmax(0.0, left / (double)o->m - var));
	double var_eff = var_eq + out->misfit_sd * out->misfit_sd;
	double enr_eff = a * a * o->eh / var_eff;
	double se_local = w_rms > 0 ? 1.0 / (w_rms * sqrt(enr_eff)) : INFINITY;
	/* The other alignments the data leave open: a local maximum r(l) of
	 * the correlation is the true start with likelihood exp(-z^2 / 2),
	 * z = (r(best) - r(l)) / sd of that difference; the noise and misfit
	 * (as white, var_eff per sample) make the difference's variance
	 * 2 var_eff sum h^2 (1 - acf(l - best)): lags a carrier cycle apart
	 * share most of their noise. */
	double wsum = 1, w2 = 0;
	int lo = lag_lo, hi = lag_hi, best = pk.lag0;
	/* Taken before the largest (an earlier path): the later peaks are the
	 * call's echoes, not where it may start. */
	if (moved && hi > best)
		hi = best;
	for (int l = lo + 1; l < hi; l++) {
		int d = abs(l - best);
		if (d <= 2 || (size_t)d >= o->m)
			continue;
		double v = dsp_xcorr_lag(o->xc, l);
		if (!(v > 0) || v < dsp_xcorr_lag(o->xc, l - 1) || v < dsp_xcorr_lag(o->xc, l + 1))
			continue;
		double diff = pk.value - v, dvar = 2 * var_eff * o->eh * fmax(1 - o->acf[d], 1e-9);
		double z2 = diff * diff / dvar;
		if (z2 > 50)
			continue;
		double w = exp(-0.5 * z2);
		wsum += w;
		w2 += w * ((double)l - pk.tau) * ((double)l - pk.tau);
		if (w >= DSP_ONSET_ALT_MIN_W)
			keep_alt(out, l, w);
	}
	out->alternatives = w2 / wsum;
	/* The template's shape against the call's: the correlation's fine
	 * structure (the carrier's phase) and its envelope peak at one lag for
	 * a call that is the template (its autocorrelation is symmetric); a
	 * call whose carrier or shape differs moves the phase peak within the
	 * envelope, a bias the bound cannot see.  A gap beyond 3 s.e. of the
	 * envelope's own peak is that bias, and its square joins the
	 * variance. */
	out->model_sd = 0;
	if (w_c > 0 && b_env > 0) {
		int w = (int)ceil(2 * 2 * M_PI / w_c); /* two carrier cycles */
		double env_tau = envelope_peak(o->xc, pk.lag0, w, k_lo, k_hi), se_env = 1.0 / (b_env * sqrt(enr_eff));
		double d = pk.tau - env_tau;
		if (fabs(d) > 3 * se_env)
			out->model_sd = fabs(d);
	}
	/* Taken before the largest (an earlier path): an echo that trails it
	 * by less than the correlation's main lobe (about 1 / B_env) merges
	 * with it and pulls its peak by about the echo's share of the lobe
	 * times its delay — coherent, so the misfit as white noise above does
	 * not show it; the lobe's shape does.  With m the lobe's RMS departure
	 * from the template's own (over its peak), an echo of relative
	 * amplitude rho at delay delta gives m ~ rho delta B_env / 2 and a pull
	 * ~ rho delta: 2 m / B_env joins the error (bench/field's room: a
	 * chirp's direct path 2 samples off where the bound said 0.05; z
	 * within +-1.3 at the six nodes with this term). */
	double echo = 0;
	if (moved && b_env > 0)
		echo = 2 * lobe_misfit(o, pk.lag0, pk.value, (int)ceil(2 / b_env)) / b_env;
	out->se = sqrt(se_local * se_local + out->model_sd * out->model_sd + out->alternatives + echo * echo);
	return 0;
}
