/* air.c — the speed of sound from the temperature (see air.h). */
#include "apps/dsp/air.h"

#include <math.h>

double dsp_speed_of_sound_m_s(double temp_c, double *dc_dt)
{
	double root = sqrt(1.0 + temp_c / 273.15);
	if (dc_dt)
		*dc_dt = 331.3 / (2 * 273.15 * root);
	return 331.3 * root;
}
