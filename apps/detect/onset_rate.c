/* onset_rate.c — a matched onset moved for the card's rate (see onset_rate.h). */
#include "apps/detect/onset_rate.h"

#include <math.h>

void det_onset_rate_correct(det_event *e, double stretch, double shift, double rate_sd)
{
	e->onset_frame -= (stretch - 1.0) * shift;
	e->onset_se = hypot(e->onset_se, rate_sd * shift);
}
