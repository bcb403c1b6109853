/* bracketfit — on the host after make vmtest: audiod's lower-envelope fit
 * (timehist, window 256, nominal slope: audiod/device.c) through the raw
 * snd-dummy records vmcheck printed (phase_bracket's "vmdata: bracket
 * HW_PTR TIME_NS UPDATE_NS" lines of the console log, stdin), once with the
 * records' entry times and once with their update times
 * (kpatch_record_update_time), checked against the nominal rate (snd-dummy
 * is clocked by the cpu) every 256 records: how often the fitted rate lies
 * within 3 of its stated s.e., and the RMS of those z-scores.  Prints
 * "vmtest: bracket fit: ..." lines; exits 0 (a measurement, not a check).
 *
 *   bracketfit RATE < console.log
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpatch/record.h"
#include "timehist/timehist.h"

#define CHECK_EVERY 256

typedef struct {
	timehist *th;
	int n, within;
	double ss, worst;
} fitter;

static void fitter_init(fitter *f, double nspf)
{
	timehist_params tp;
	const char *why = NULL;
	timehist_params_default(&tp);
	tp.fit.mode = SYNC_FIT_LOWER;
	tp.fit.window = 256;
	tp.fit.nominal_slope = nspf;
	tp.jump_min = 1e6;
	tp.tolerance = 48000 * 600;
	memset(f, 0, sizeof *f);
	f->th = timehist_new(&tp, &why);
	if (!f->th) {
		fprintf(stderr, "bracketfit: %s\n", why);
		exit(1);
	}
}

static void fitter_check(fitter *f, double nspf)
{
	sync_conv c;
	if (timehist_current(f->th, &c) < 0 || c.var_s <= 0)
		return;
	double z = (c.slope - nspf) / sqrt(c.var_s);
	f->n++;
	f->within += fabs(z) <= 3;
	f->ss += z * z;
	if (fabs(z) > fabs(f->worst))
		f->worst = z;
}

static void fitter_print(const char *what, const fitter *f)
{
	printf("vmtest: bracket fit: %s times: rate within 3 stated s.e. at %d of %d checks, RMS z %.2f, worst %+.2f\n",
	       what, f->within, f->n, f->n ? sqrt(f->ss / f->n) : 0.0, f->worst);
}

int main(int argc, char **argv)
{
	double rate = argc > 1 ? atof(argv[1]) : 48000, nspf = 1e9 / rate;
	char line[512], why[128];
	fitter fe, fu;
	long k = 0;
	fitter_init(&fe, nspf);
	fitter_init(&fu, nspf);
	while (fgets(line, sizeof line, stdin)) {
		unsigned long long hw;
		long long t;
		unsigned long upd;
		const char *p = strstr(line, "vmdata: bracket ");
		if (!p || sscanf(p, "vmdata: bracket %llu %lld %lu", &hw, &t, &upd) != 3)
			continue;
		struct chorus_kpatch_record rec;
		kpatch_record_init(&rec);
		rec.hw_ptr = hw;
		rec.time_ns = t;
		rec.flags = CHORUS_KPATCH_F_UPDATE_TIME;
		rec.update_ns = (uint32_t)upd;
		if (timehist_add(fe.th, (int64_t)hw, rec.time_ns, why, sizeof why) < 0 ||
		    timehist_add(fu.th, (int64_t)hw, kpatch_record_update_time(&rec), why, sizeof why) < 0)
			continue;
		if (++k % CHECK_EVERY == 0) {
			fitter_check(&fe, nspf);
			fitter_check(&fu, nspf);
		}
	}
	printf("vmtest: bracket fit: %ld snd-dummy records, audiod's fit checked every %d\n", k, CHECK_EVERY);
	fitter_print("entry", &fe);
	fitter_print("update", &fu);
	timehist_free(fe.th);
	timehist_free(fu.th);
	return 0;
}
