/* acoustics.h — outdoor and room acoustics of the simulated world: the
 * closed forms sim/world.c builds its propagation paths from.
 *
 * Everything here is pure maths (no I/O, no state, thread-safe); formulas and
 * their sources are in docs/scenario.md ("Propagation").  Units: m, s, Hz,
 * °C, % relative humidity, dB.  Time dependence is e^{+j2πft}: a path of
 * delay τ multiplies a spectrum by e^{-j2πfτ}.
 */
#ifndef CHORUS_SIM_ACOUSTICS_H
#define CHORUS_SIM_ACOUSTICS_H

#include <complex.h>
#include <stddef.h>

/* Speed of sound in dry air at temperature temp_c: 331.3 sqrt(1 + T/273.15)
 * m/s (the first-order ideal-gas law used in field acoustics; the same
 * formula collab uses, apps/dsp/air.h). */
double sim_speed_of_sound_m_s(double temp_c);

/* Atmospheric absorption coefficient of pure tone f_hz, dB per metre, by
 * ISO 9613-1:1993 eq. (3)-(5) at temperature temp_c, relative humidity
 * humidity_pct and the standard atmosphere (101.325 kPa). */
double sim_air_absorption_db_m(double f_hz, double temp_c, double humidity_pct);

/* Flow resistivities (Pa s m^-2) of the ground kinds: grass (a lawn or
 * pasture, Embleton's 150–300 kPa s m^-2) and fresh snow (10–30). */
#define SIM_SIGMA_GRASS 200e3
#define SIM_SIGMA_SNOW 20e3

/* Normalised specific impedance Z/(rho c) of a locally reacting porous ground
 * of flow resistivity sigma (Pa s m^-2) at f_hz by Delany and Bazley (1970):
 *   Z = 1 + 0.0571 X^-0.754 - j 0.087 X^-0.732,  X = rho0 f / sigma,
 * rho0 = 1.205 kg m^-3.  (Valid for 0.01 < X < 1; used outside with the same
 * formula, which stays passive.) */
double complex sim_ground_impedance(double f_hz, double sigma);

/* Plane-wave reflection coefficient of a locally reacting surface of
 * normalised impedance z for a wave arriving at cos_theta = cosine of the
 * angle from the surface normal: R = (z cos_theta - 1) / (z cos_theta + 1).
 * z = INFINITY gives the hard ground (R = 1). */
double complex sim_reflection(double complex z, double cos_theta);

/* Travel time along a straight path of length r_m (m) with unit direction u
 * (source to receiver) in still-air speed c_m_s with a wind of vector
 * wind_m_s (m/s, horizontal): r / (c + wind . u) — the moving medium to first
 * order in the wind's Mach number. */
double sim_travel_time_s(double r_m, const double u[3], double c_m_s, const double wind_m_s[3]);

/* Frequency response wanted from a path filter: gain(f, data) returns the
 * complex transfer function at f Hz (0 <= f <= fs/2). */
typedef double complex (*sim_response_fn)(double f_hz, const void *data);

/* Most taps of a path filter: an odd count, centred (tap n/2 of n is the
 * path's own delay). */
#define SIM_FIR_TAPS 127

/* Design the n_taps (odd, <= SIM_FIR_TAPS) FIR taps h at sample rate fs_hz
 * whose response
 *   H(f) = sum_i h[i] e^{-j 2 pi f (i - c) / fs},  c = n_taps / 2,
 * approximates response(f) by frequency sampling on a 256-point grid,
 * truncated to the taps (the least-squares fit on that grid: features
 * narrower than about 2 fs / n_taps are blurred).  Returns the largest
 * |H(f) - response(f)| over the grid points from f_check_hz up relative to
 * the largest |response| (the design's own error there). */
double sim_fir_design(sim_response_fn response, const void *data, double fs_hz, int n_taps, double f_check_hz,
		      double *h);

/* The response of the n_taps taps h at f_hz (the formula above). */
double complex sim_fir_response(const double *h, int n_taps, double fs_hz, double f_hz);

/* One image source of a shoebox room [0,Lx]x[0,Ly]x[0,Lz] (Allen and Berkley
 * 1979): along axis a the image coordinate is (1 - 2 p_a) x_a + 2 n_a L_a;
 * it took |n_a - p_a| reflections on the wall at 0 and |n_a| on the wall at
 * L_a. */
typedef struct {
	int n[3], p[3]; /* lattice index and parity per axis */
	int order;      /* total number of reflections */
	double beta;    /* product of the walls' pressure reflection factors */
	int hits[6];    /* reflections on walls x0, xL, y0, yL, z0, zL */
} sim_image;

/* Mirror source position src (m) by image im in a room of size L (m). */
void sim_image_position(const sim_image *im, const double L[3], const double src[3], double out[3]);

/* Every image of order <= max_order (the direct path first, order 0), with
 * beta = prod over walls of sqrt(1 - absorption[w])^hits[w] (absorption per
 * wall x0, xL, y0, yL, z0, zL, energy fractions 0..1).  Writes at most cap
 * images into out and returns how many there are in all. */
size_t sim_room_images(int max_order, const double absorption[6], sim_image *out, size_t cap);

#endif
