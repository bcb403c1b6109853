/* utc.c — bench/utc: does global track UTC for a day? (issue 16 item 5)
 *
 * Runs syncd's steering loop (bench/utcloop.h: syncd's own pair fit,
 * steering step and timescale, modelled clocks, faster than real time) for
 * 24 simulated hours per seed with the root's crystal 50 ppm off, per UTC
 * source (NTP: 1 ms, 1 h correlation; GPS: 1 us, 60 s) and crystal wander
 * (none; a 1 ppb/sqrt(s) random walk with a daily 5 °C cycle at
 * 0.2 ppm/°C), and once free-running (no UTC source: global keeps the
 * crystal's error).  Per row: global - UTC (RMS, max, max over the
 * source's stated s.e., samples beyond 5 of it), the claim the root
 * publishes of it (RMS z against its stated s.e., beyond 5 s.e.), the
 * segments made and the largest rate correction.  A steered row fails when
 * global - UTC ever lies beyond 5 of the source's stated s.e. after the
 * first 10 minutes, when a claim lies beyond 5 s.e., or when the pooled
 * RMS z is outside 0.7-1.5.  The free-running row must show the drift the
 * crystal gives (it is what a field without UTC sees, labelled so).
 * Table on stdout, CSV in $CHORUS_BENCH_OUT/utc.csv.  UTC_BENCH_SEEDS
 * (default 8) and UTC_BENCH_HOURS (default 24) shorten it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/csvout.h"
#include "bench/utcloop.h"

typedef struct {
	const char *name;
	sync_simutc_kind kind;
	int wander;
} row;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
	static const row rows[] = {
		{"ntp", SYNC_SIMUTC_NTP, 0},
		{"ntp", SYNC_SIMUTC_NTP, 1},
		{"gps", SYNC_SIMUTC_GPS, 0},
		{"gps", SYNC_SIMUTC_GPS, 1},
		{"none", SYNC_SIMUTC_NONE, 0},
	};
	int seeds = getenv("UTC_BENCH_SEEDS") ? atoi(getenv("UTC_BENCH_SEEDS")) : 8;
	double hours = getenv("UTC_BENCH_HOURS") ? atof(getenv("UTC_BENCH_HOURS")) : 24;
	if (seeds < 1 || !(hours > 0.2)) {
		fprintf(stderr, "bench/utc: UTC_BENCH_SEEDS must be >= 1 and UTC_BENCH_HOURS > 0.2\n");
		return 2;
	}
	char path[4096];
	FILE *csv = bench_csv_open("utc.csv", path, sizeof path);
	if (!csv)
		return 1;
	fprintf(csv, "source,wander,seeds,hours,sigma_us,samples,rms_diff_us,max_diff_us,max_diff_sd,diff_beyond5,rms_z,"
		     "beyond5,segments_per_day,max_corr_ppm,cpu_s,verdict\n");
	printf("global - UTC over %.0f h x %d seeds, root crystal +50 ppm (syncd's loop, modelled clocks)\n", hours, seeds);
	printf("%-5s %-9s %9s %11s %11s %8s %6s %6s %5s %8s %9s %6s  %s\n", "src", "wander", "sigma_us", "rms_us",
	       "max_us", "max/sd", ">5sd", "rms_z", ">5se", "seg/day", "corr_ppm", "cpu_s", "verdict");
	int failed = 0;
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const row *rw = &rows[i];
		double sigma = 0, tau = 0;
		if (rw->kind != SYNC_SIMUTC_NONE)
			sync_simutc_defaults(rw->kind, &sigma, &tau);
		utcloop_result tot = {0};
		double s_d2 = 0, sz2 = 0, t0 = now_s();
		unsigned nz = 0;
		for (int s = 0; s < seeds; s++) {
			utcloop_cfg c = {
				.cpu = {.skew_ppm = 50.0, .offset_ns = 1000000000000LL},
				.utc = {.kind = rw->kind, .sigma_ns = sigma, .tau_s = tau, .seed = 1000 + (uint64_t)s},
				.steer = {.interval_s = 16, .tau_s = 64, .max_slew_ppm = 100},
				.steering = rw->kind != SYNC_SIMUTC_NONE,
				.duration_s = hours * 3600,
				.warmup_s = 600,
				.sample_s = 10,
				.sandwich_ns = 200,
				.seed = 77 + (uint64_t)s,
			};
			if (rw->wander)
				c.cpu.wander = (sync_wander){.rw_ppb = 1.0, .temp_amp_c = 5.0, .temp_period_s = 86400, .tempco_ppm_per_c = 0.2, .seed = 500 + (uint64_t)s};
			utcloop_result r;
			if (utcloop_run(&c, &r) < 0) {
				fprintf(stderr, "bench/utc: row %zu seed %d refused\n", i, s);
				return 1;
			}
			tot.n += r.n;
			s_d2 += r.rms_diff_ns * r.rms_diff_ns * r.n;
			tot.max_diff_ns = fmax(tot.max_diff_ns, r.max_diff_ns);
			tot.max_diff_sd = fmax(tot.max_diff_sd, r.max_diff_sd);
			tot.diff_beyond5 += r.diff_beyond5;
			tot.beyond5 += r.beyond5;
			tot.segments += r.segments;
			tot.max_corr_ppm = fmax(tot.max_corr_ppm, r.max_corr_ppm);
			if (!isnan(r.rms_z)) {
				sz2 += r.sum_z2;
				nz += r.n;
			}
		}
		double cpu = now_s() - t0, rms = sqrt(s_d2 / tot.n), rz = nz ? sqrt(sz2 / nz) : NAN;
		double segday = tot.segments / (seeds * hours / 24);
		const char *verdict;
		if (rw->kind == SYNC_SIMUTC_NONE) {
			/* Free-running: global keeps the crystal's 50 ppm. */
			double want = 50e-6 * hours * 3600 * 1e9;
			verdict = fabs(tot.max_diff_ns - want) < 0.05 * want ? "free-running" : "FAIL";
		} else {
			verdict = tot.diff_beyond5 || tot.beyond5 || !(rz >= 0.7 && rz <= 1.5) ? "FAIL" : "ok";
		}
		failed += strcmp(verdict, "FAIL") == 0;
		printf("%-5s %-9s %9.3f %11.3f %11.3f %8.2f %6u %6.2f %5u %8.0f %9.3f %6.1f  %s\n", rw->name,
		       rw->wander ? "walk+temp" : "none", sigma * 1e-3, rms * 1e-3, tot.max_diff_ns * 1e-3,
		       tot.max_diff_sd, tot.diff_beyond5, rz, tot.beyond5, segday, tot.max_corr_ppm, cpu, verdict);
		fprintf(csv, "%s,%s,%d,%.2f,%.3f,%u,%.6f,%.6f,%.4f,%u,%.4f,%u,%.1f,%.4f,%.2f,%s\n", rw->name,
			rw->wander ? "walk+temp" : "none", seeds, hours, sigma * 1e-3, tot.n, rms * 1e-3,
			tot.max_diff_ns * 1e-3, tot.max_diff_sd, tot.diff_beyond5, rz, tot.beyond5, segday,
			tot.max_corr_ppm, cpu, verdict);
	}
	if (bench_csv_close(csv, path) != 0)
		return 1;
	printf("  (csv: %s)\n", path);
	printf("bench/utc: %d row%s failed\n", failed, failed == 1 ? "" : "s");
	return failed ? 1 : 0;
}
