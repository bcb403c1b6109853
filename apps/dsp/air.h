/* air.h — the speed of sound from the air's temperature, shared by the
 * simulated world (sim/acoustics.h) and collab (the temperature a field team
 * states).  Pure; no dependencies. */
#ifndef CHORUS_DSP_AIR_H
#define CHORUS_DSP_AIR_H

/* Speed of sound in dry air at temp_c (°C): 331.3 sqrt(1 + T/273.15) m/s
 * (first-order ideal gas), and when dc_dt is not NULL its derivative, m/s
 * per °C (0.6 near 20 °C). */
double dsp_speed_of_sound_m_s(double temp_c, double *dc_dt);

#endif
