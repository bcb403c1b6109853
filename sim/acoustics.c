/* acoustics.c — closed forms of outdoor and room acoustics (see acoustics.h). */
#include "sim/acoustics.h"

#include "apps/dsp/air.h"

#include <math.h>
#include <stdlib.h>

double sim_speed_of_sound_m_s(double temp_c)
{
	return dsp_speed_of_sound_m_s(temp_c, NULL);
}

double sim_air_absorption_db_m(double f_hz, double temp_c, double humidity_pct)
{
	const double T0 = 293.15, T01 = 273.16, pa_pr = 1.0;
	double T = temp_c + 273.15, tr = T / T0;
	double C = -6.8346 * pow(T01 / T, 1.261) + 4.6151;
	double h = humidity_pct * pow(10.0, C) / pa_pr; /* molar concentration of water vapour, % */
	double frO = pa_pr * (24.0 + 4.04e4 * h * (0.02 + h) / (0.391 + h));
	double frN = pa_pr * pow(tr, -0.5) * (9.0 + 280.0 * h * exp(-4.170 * (pow(tr, -1.0 / 3.0) - 1.0)));
	double f2 = f_hz * f_hz;
	return 8.686 * f2 *
	       (1.84e-11 / pa_pr * sqrt(tr) +
		pow(tr, -2.5) * (0.01275 * exp(-2239.1 / T) / (frO + f2 / frO) +
				 0.1068 * exp(-3352.0 / T) / (frN + f2 / frN)));
}

double complex sim_ground_impedance(double f_hz, double sigma)
{
	const double rho0 = 1.205;
	double X = rho0 * fmax(f_hz, 1.0) / sigma;
	return 1.0 + 0.0571 * pow(X, -0.754) - I * 0.087 * pow(X, -0.732);
}

double complex sim_reflection(double complex z, double cos_theta)
{
	if (isinf(creal(z)))
		return 1.0;
	return (z * cos_theta - 1.0) / (z * cos_theta + 1.0);
}

double sim_travel_time_s(double r_m, const double u[3], double c_m_s, const double wind_m_s[3])
{
	double along = wind_m_s ? u[0] * wind_m_s[0] + u[1] * wind_m_s[1] + u[2] * wind_m_s[2] : 0.0;
	return r_m / (c_m_s + along);
}

#define GRID 256

double sim_fir_design(sim_response_fn response, const void *data, double fs_hz, int n_taps, double f_check_hz,
		      double *h)
{
	const int c = n_taps / 2;
	double complex D[GRID / 2 + 1];
	double peak = 0;
	for (int m = 0; m <= GRID / 2; m++) {
		D[m] = response(m * fs_hz / GRID, data);
		peak = fmax(peak, cabs(D[m]));
	}
	for (int i = 0; i < n_taps; i++) {
		int n = i - c;
		/* Inverse DFT of the Hermitian spectrum, truncated to the taps
		 * (the least-squares fit on the grid; a tapering window
		 * blurred the slow low-frequency part of air absorption). */
		double d = creal(D[0]) + creal(D[GRID / 2]) * (n % 2 ? -1.0 : 1.0);
		for (int m = 1; m < GRID / 2; m++)
			d += 2.0 * creal(D[m] * cexp(I * 2.0 * M_PI * m * n / GRID));
		h[i] = d / GRID;
	}
	double worst = 0;
	for (int m = 0; m <= GRID / 2; m++)
		if (m * fs_hz / GRID >= f_check_hz)
			worst = fmax(worst, cabs(sim_fir_response(h, n_taps, fs_hz, m * fs_hz / GRID) - D[m]));
	return peak > 0 ? worst / peak : worst;
}

double complex sim_fir_response(const double *h, int n_taps, double fs_hz, double f_hz)
{
	const int c = n_taps / 2;
	double complex H = 0;
	for (int i = 0; i < n_taps; i++)
		H += h[i] * cexp(-I * 2.0 * M_PI * f_hz * (i - c) / fs_hz);
	return H;
}

void sim_image_position(const sim_image *im, const double L[3], const double src[3], double out[3])
{
	for (int a = 0; a < 3; a++)
		out[a] = (1 - 2 * im->p[a]) * src[a] + 2.0 * im->n[a] * L[a];
}

static int by_order(const void *a, const void *b)
{
	const sim_image *x = a, *y = b;
	return x->order - y->order;
}

size_t sim_room_images(int max_order, const double absorption[6], sim_image *out, size_t cap)
{
	size_t count = 0;
	sim_image *all = malloc(sizeof *all * (size_t)(2 * max_order + 1) * (2 * max_order + 1) * (2 * max_order + 1) * 8);
	if (!all)
		return 0;
	for (int nx = -max_order; nx <= max_order; nx++)
		for (int ny = -max_order; ny <= max_order; ny++)
			for (int nz = -max_order; nz <= max_order; nz++)
				for (int par = 0; par < 8; par++) {
					sim_image im = {.n = {nx, ny, nz}, .p = {par & 1, (par >> 1) & 1, (par >> 2) & 1}};
					im.beta = 1.0;
					for (int a = 0; a < 3; a++) {
						im.hits[2 * a] = abs(im.n[a] - im.p[a]);
						im.hits[2 * a + 1] = abs(im.n[a]);
						im.order += im.hits[2 * a] + im.hits[2 * a + 1];
					}
					if (im.order > max_order)
						continue;
					for (int wl = 0; wl < 6; wl++)
						im.beta *= pow(sqrt(1.0 - absorption[wl]), im.hits[wl]);
					all[count++] = im;
				}
	qsort(all, count, sizeof *all, by_order);
	for (size_t i = 0; i < count && i < cap; i++)
		out[i] = all[i];
	free(all);
	return count;
}
