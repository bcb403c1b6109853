/* bench/cpuload — the machine's load besides this program's (cpuload.h). */
#include "bench/cpuload.h"

#include <dirent.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* /proc/stat's first line: user nice system idle iowait irq softirq steal. */
bool cpuload_machine(double *busy_s, double *total_s)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = {0};
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7])
		  : 0;
	if (f)
		fclose(f);
	if (n < 4)
		return false;
	double all = 0, hz = (double)sysconf(_SC_CLK_TCK);
	for (int i = 0; i < 8; i++)
		all += (double)v[i];
	*busy_s = (all - (double)v[3] - (double)v[4]) / hz;
	*total_s = all / hz;
	return true;
}

bool cpuload_proc_read(int pid, cpuload_proc *p)
{
	char path[64], buf[1024];
	g_snprintf(path, sizeof path, "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* the command (which may hold spaces and parentheses) ends at the last
	 * ')'; after ") ": state ppid pgrp session tty tpgid flags minflt
	 * cminflt majflt cmajflt utime stime cutime cstime */
	char *rp = strrchr(buf, ')');
	char state;
	int ppid;
	unsigned long long ut, st;
	long long cut, cst;
	if (!rp || sscanf(rp + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &state, &ppid, &ut,
			  &st, &cut, &cst) != 6)
		return false;
	double hz = (double)sysconf(_SC_CLK_TCK);
	p->ppid = ppid;
	p->self_s = (double)(ut + st) / hz;
	p->children_s = (double)(cut + cst) / hz;
	return true;
}

typedef struct {
	int pid, ppid;
	double cpu_s; /* its own and its reaped children's */
} proc_row;

/* cpu seconds of every live descendant of `root` (their reaped children
 * included through cutime/cstime). */
static double descendants_cpu(int root)
{
	GArray *rows = g_array_new(FALSE, FALSE, sizeof(proc_row));
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		cpuload_proc t;
		if (*end == 0 && pid > 0 && cpuload_proc_read((int)pid, &t)) {
			proc_row p = {(int)pid, t.ppid, t.self_s + t.children_s};
			g_array_append_val(rows, p);
		}
	}
	if (d)
		closedir(d);
	GHashTable *parent = g_hash_table_new(g_direct_hash, g_direct_equal);
	for (guint i = 0; i < rows->len; i++) {
		const proc_row *p = &g_array_index(rows, proc_row, i);
		g_hash_table_insert(parent, GINT_TO_POINTER(p->pid), GINT_TO_POINTER(p->ppid));
	}
	double sum = 0;
	for (guint i = 0; i < rows->len; i++) {
		const proc_row *p = &g_array_index(rows, proc_row, i);
		int a = p->ppid;
		for (int depth = 0; depth < 64 && a > 1; depth++) {
			if (a == root) {
				sum += p->cpu_s;
				break;
			}
			a = GPOINTER_TO_INT(g_hash_table_lookup(parent, GINT_TO_POINTER(a)));
		}
	}
	g_hash_table_destroy(parent);
	g_array_free(rows, TRUE);
	return sum;
}

bool cpuload_now(cpuload_sample *s)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->wall_s = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	struct rusage self, kids;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	s->own_s = (double)self.ru_utime.tv_sec + self.ru_utime.tv_usec * 1e-6 + (double)self.ru_stime.tv_sec +
		   self.ru_stime.tv_usec * 1e-6 + (double)kids.ru_utime.tv_sec + kids.ru_utime.tv_usec * 1e-6 +
		   (double)kids.ru_stime.tv_sec + kids.ru_stime.tv_usec * 1e-6 + descendants_cpu((int)getpid());
	double total_s;
	return cpuload_machine(&s->busy_s, &total_s);
}

double cpuload_other_cores(const cpuload_sample *a, const cpuload_sample *b)
{
	double wall = b->wall_s - a->wall_s;
	if (!(wall > 0))
		return -1;
	double other = ((b->busy_s - a->busy_s) - (b->own_s - a->own_s)) / wall;
	return other > 0 ? other : 0;
}
