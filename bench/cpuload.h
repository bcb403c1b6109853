/* bench/cpuload — how busy the machine is, and how much of it is this
 * program's own work (its children and their descendants, alive or reaped).
 *
 * A benchmark that runs programs in real time beside its own parallel jobs
 * needs "cores kept busy by processes not of the benchmark" over a job's
 * interval: the machine's busy time (/proc/stat) less this program's and
 * every descendant's cpu time over the same interval.  Descendants still
 * running are read from /proc/PID/stat (utime + stime, and cutime + cstime:
 * their own reaped children); reaped ones from getrusage(RUSAGE_CHILDREN).
 */
#ifndef CHORUS_BENCH_CPULOAD_H
#define CHORUS_BENCH_CPULOAD_H

#include <stdbool.h>

typedef struct {
	double busy_s; /* machine busy cpu seconds since boot (all cores) */
	double own_s;  /* this process's and its descendants' cpu seconds */
	double wall_s; /* CLOCK_MONOTONIC seconds */
} cpuload_sample;

/* One process's cpu time, from /proc/PID/stat. */
typedef struct {
	int ppid;
	double self_s;     /* utime + stime */
	double children_s; /* cutime + cstime: its reaped children's */
} cpuload_proc;

/* Read process pid's times into *p.  false when it is gone or its stat
 * line cannot be parsed. */
bool cpuload_proc_read(int pid, cpuload_proc *p);

/* The machine's busy and total cpu seconds since boot (all cores; /proc/
 * stat's first line, busy = all but idle and iowait).  false when it cannot
 * be read. */
bool cpuload_machine(double *busy_s, double *total_s);

/* Read the machine's busy time and this program's own cpu time now into
 * *s.  Returns false when /proc/stat cannot be read. */
bool cpuload_now(cpuload_sample *s);

/* Cores kept busy by processes other than this program and its descendants
 * between a and b (a earlier), at least 0; -1 when the interval is empty. */
double cpuload_other_cores(const cpuload_sample *a, const cpuload_sample *b);

#endif
