/* render_ahead.c — rendering the world ahead of the reader (see render_ahead.h). */
#include "sim/render_ahead.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Frames rendered between two looks at the reader: small enough that a
 * restart wastes little, large enough that the lock is cheap. */
#define CHUNK 256

struct render_ahead {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	pthread_t thread;
	unsigned channels;
	uint64_t capacity;
	int64_t look_ns; /* how often the thread looks at the reader */
	render_sample_fn fn;
	void *user;
	double *buf; /* capacity * channels; frame f at slot(f) */
	/* guarded by lock */
	int quit;
	uint64_t gen;  /* bumped at every reset: a chunk rendered for an older one is dropped */
	int64_t first; /* cache holds [first, end) */
	int64_t end;
	int64_t want;   /* the reader's next frame */
	uint64_t ahead; /* frames past want to hold */
	int wanted;     /* the reader has asked at least once */
	render_ahead_stats st;
};

static uint64_t slot(const render_ahead *r, int64_t f)
{
	int64_t c = (int64_t)r->capacity, m = f % c;
	return (uint64_t)(m < 0 ? m + c : m);
}

static void render(const render_ahead *r, int64_t f, uint64_t n, double *out)
{
	for (uint64_t i = 0; i < n; i++)
		for (unsigned c = 0; c < r->channels; c++)
			out[i * r->channels + c] = r->fn(r->user, c, f + (int64_t)i);
}

static void *thread_main(void *data)
{
	render_ahead *r = data;
	double *tmp = malloc(sizeof(double) * CHUNK * r->channels);
	if (!tmp)
		return NULL; /* the reader renders everything itself */
	pthread_mutex_lock(&r->lock);
	for (;;) {
		/* The reader does not wake this thread when it takes frames (a
		 * wakeup costs the reader an IPI, tens of microseconds in a VM,
		 * on the capture path): the thread looks every look_ns.  Only a
		 * reset or the end signals. */
		while (!r->quit && (!r->wanted || r->end >= r->want + (int64_t)r->ahead)) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			int64_t t = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + r->look_ns;
			ts.tv_sec = t / 1000000000;
			ts.tv_nsec = t % 1000000000;
			pthread_cond_timedwait(&r->cv, &r->lock, &ts);
		}
		if (r->quit)
			break;
		int64_t a = r->end, b = r->want + (int64_t)r->ahead;
		uint64_t n = (uint64_t)(b - a) < CHUNK ? (uint64_t)(b - a) : CHUNK;
		uint64_t gen = r->gen;
		pthread_mutex_unlock(&r->lock);
		render(r, a, n, tmp);
		pthread_mutex_lock(&r->lock);
		/* Still the range the reader wants, and room for it. */
		if (r->gen == gen && r->end == a && a + (int64_t)n - r->first <= (int64_t)r->capacity) {
			for (uint64_t i = 0; i < n; i++)
				memcpy(&r->buf[slot(r, a + (int64_t)i) * r->channels], &tmp[i * r->channels],
				       sizeof(double) * r->channels);
			r->end = a + (int64_t)n;
			r->st.rendered += n;
		}
	}
	pthread_mutex_unlock(&r->lock);
	free(tmp);
	return NULL;
}

render_ahead *render_ahead_new(unsigned channels, uint64_t capacity, int64_t look_ns, render_sample_fn fn,
			       void *user, const char *name)
{
	if (!channels || capacity < CHUNK || look_ns <= 0)
		return NULL;
	render_ahead *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->channels = channels;
	r->capacity = capacity;
	r->look_ns = look_ns;
	r->fn = fn;
	r->user = user;
	r->buf = malloc(sizeof(double) * capacity * channels);
	if (!r->buf) {
		free(r);
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&r->thread, NULL, thread_main, r) != 0) {
		pthread_cond_destroy(&r->cv);
		pthread_mutex_destroy(&r->lock);
		free(r->buf);
		free(r);
		return NULL;
	}
	if (name)
		pthread_setname_np(r->thread, name);
	/* Only when nothing else runs; refused nowhere on Linux, but if it is,
	 * normal priority still takes the work off the reader's path. */
	struct sched_param sp = {.sched_priority = 0};
	(void)pthread_setschedparam(r->thread, SCHED_IDLE, &sp);
	return r;
}

void render_ahead_free(render_ahead *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->quit = 1;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->lock);
	free(r->buf);
	free(r);
}

void render_ahead_get(render_ahead *r, int64_t first, uint64_t n, double *out, uint64_t ahead)
{
	uint64_t hit = 0;
	int64_t i = 0, count = (int64_t)n;
	pthread_mutex_lock(&r->lock);
	/* The cached part is one run inside [first, first + n). */
	int64_t lo = first > r->first ? first : r->first;
	int64_t hi = first + count < r->end ? first + count : r->end;
	pthread_mutex_unlock(&r->lock);
	/* Frames before the cache, or all of them when it has none of the range. */
	for (; i < count && (lo >= hi || first + i < lo); i++)
		render(r, first + i, 1, &out[i * r->channels]);
	pthread_mutex_lock(&r->lock);
	/* The thread only appends and this reader is the one who drops, so
	 * [lo, hi) is still there. */
	for (; i < count && first + i < hi; i++, hit++)
		memcpy(&out[i * r->channels], &r->buf[slot(r, first + i) * r->channels], sizeof(double) * r->channels);
	pthread_mutex_unlock(&r->lock);
	uint64_t miss = n - hit;
	if (i < count)
		render(r, first + i, (uint64_t)(count - i), &out[i * r->channels]);
	pthread_mutex_lock(&r->lock);
	int64_t next = first + count;
	int reset = next < r->first || next > r->end || !r->wanted;
	if (reset) {
		r->first = r->end = next;
		r->gen++;
		r->st.resets++;
	} else {
		r->first = next;
	}
	r->want = next;
	r->ahead = ahead < r->capacity ? ahead : r->capacity;
	r->wanted = 1;
	r->st.hits += hit;
	r->st.misses += miss;
	if (reset)
		pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->lock);
}

void render_ahead_get_stats(render_ahead *r, render_ahead_stats *st)
{
	pthread_mutex_lock(&r->lock);
	*st = r->st;
	pthread_mutex_unlock(&r->lock);
}
