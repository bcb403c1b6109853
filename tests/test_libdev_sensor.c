/* test_libdev_sensor.c — Sensor devices: past, future and open-ended
 * ranges, declared gaps, readers that fell behind, per-client item size
 * and rejection by the service, and a stalled reader beside a fast one. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "tests/libdev_testutil.h"

/* A fake ring: holds the last `cap` indices below `next`; item i is the
 * int64 value i (so every byte the reader gets can be checked). */
typedef struct {
	int64_t next, cap;
	int opens, closes;
} ring;

static void r_range(void *user, int64_t *oldest, int64_t *next)
{
	ring *r = user;
	*next = r->next;
	*oldest = MAX(0, r->next - r->cap);
}

static int r_read(void *user, void *client, int64_t first, size_t n, void *buf)
{
	ring *r = user;
	int64_t oldest = MAX(0, r->next - r->cap);
	ck_assert_msg(first >= oldest && first + (int64_t)n <= r->next, "read outside what is held");
	if (client == (void *)1) { /* narrow client: 4-byte items */
		for (size_t i = 0; i < n; i++)
			((int32_t *)buf)[i] = (int32_t)(first + (int64_t)i);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		((int64_t *)buf)[i] = first + (int64_t)i;
	return 0;
}

static int r_open(void *user, const dev_creds *who, dev_sensor_request *req, void **client, GByteArray *reply,
		  char *why, size_t wlen)
{
	ring *r = user;
	r->opens++;
	if (req->params_len == 6 && memcmp(req->params, "reject", 6) == 0) {
		g_snprintf(why, wlen, "index %" G_GINT64_FORMAT " is older than the oldest held, %" G_GINT64_FORMAT,
			   req->first, MAX(0, r->next - r->cap));
		return -ERANGE;
	}
	if (req->params_len == 6 && memcmp(req->params, "narrow", 6) == 0) {
		req->item_size = 4;
		*client = (void *)1;
	}
	if (req->params_len == 4 && memcmp(req->params, "last", 4) == 0)
		req->last = req->first + 10; /* the service rewrites the range */
	g_byte_array_append(reply, (const guint8 *)"ok", 2);
	return 0;
}

static void r_close(void *user, void *client) { ((ring *)user)->closes++; }

static const dev_sensor_ops ring_ops = {r_range, r_read, r_open, r_close, NULL};

/* What a reader saw, checked as it arrives. */
typedef struct {
	int64_t first, last, next;
	uint32_t item_size;
	gboolean opened, ended, up;
	int err;
	char errmsg[160];
	char reply[16];
	int64_t items, gaps, gap_items;
	int64_t gap_from[8], gap_to[8];
	int chunks;
} seen;

static void s_opened(void *u, int64_t first, int64_t last, uint32_t isz, const void *reply, size_t len)
{
	seen *s = u;
	s->opened = TRUE;
	s->first = first;
	s->last = last;
	s->next = first;
	s->item_size = isz;
	memcpy(s->reply, reply, MIN(len, sizeof s->reply - 1));
}

static void s_data(void *u, int64_t first, const void *items, size_t n)
{
	seen *s = u;
	ck_assert_int_eq(first, s->next);
	for (size_t i = 0; i < n; i++) {
		int64_t v = s->item_size == 4 ? ((const int32_t *)items)[i] : ((const int64_t *)items)[i];
		ck_assert_int_eq(v, first + (int64_t)i);
	}
	s->next = first + (int64_t)n;
	s->items += (int64_t)n;
	s->chunks++;
}

static void s_gap(void *u, int64_t from, int64_t to)
{
	seen *s = u;
	ck_assert_int_eq(from, s->next);
	if (s->gaps < 8) {
		s->gap_from[s->gaps] = from;
		s->gap_to[s->gaps] = to;
	}
	s->gaps++;
	s->gap_items += to - from;
	s->next = to;
}

static void s_end(void *u, int64_t next)
{
	seen *s = u;
	ck_assert_int_eq(next, s->next);
	s->ended = TRUE;
}

static void s_error(void *u, int err, const char *msg)
{
	seen *s = u;
	s->err = err;
	g_strlcpy(s->errmsg, msg, sizeof s->errmsg);
}

static void s_state(void *u, gboolean up, int err) { ((seen *)u)->up = up; }

static const dev_sensor_reader_ops seen_ops = {s_opened, s_data, s_gap, s_end, s_error, s_state};

static dev_sensor_reader *reader(const char *name, int64_t first, int64_t last, uint32_t flags, const char *params,
				 seen *s)
{
	return dev_sensor_reader_new(name, first, last, flags, params, params ? strlen(params) : 0, NULL, &seen_ops, s,
				     NULL);
}

START_TEST(test_past_future_open_ended)
{
	ring r = {.next = 1000, .cap = 4096};
	dev_options o;
	dev_options_init(&o);
	o.chunk_bytes = 8 * 64; /* 64 items per chunk: several chunks per range */
	dev_sensor *d = dev_sensor_new("t/sens", &o, NULL, 8, &ring_ops, &r, NULL);
	ck_assert_ptr_nonnull(d);
	seen past = {0}, fut = {0}, live = {0};
	dev_sensor_reader *rp = reader("t/sens", 100, 300, 0, NULL, &past);
	dev_sensor_reader *rf = reader("t/sens", 1500, 1600, 0, NULL, &fut);
	dev_sensor_reader *rl = reader("t/sens", 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, NULL, &live);
	/* the past is served at once */
	SPIN_UNTIL(past.ended && fut.opened && live.opened);
	ck_assert_int_eq(past.items, 200);
	ck_assert_int_ge(past.chunks, 4);
	ck_assert_int_eq(past.gaps, 0);
	ck_assert_str_eq(past.reply, "ok");
	ck_assert_int_eq(live.first, 1000);
	ck_assert_int_eq(live.last, DEV_SENSOR_OPEN_END);
	ck_assert_int_eq(fut.items, 0);
	/* the future as it arrives */
	r.next = 1550;
	dev_sensor_advance(d, r.next);
	SPIN_UNTIL(fut.items == 50 && live.items == 550);
	ck_assert(!fut.ended);
	r.next = 1700;
	dev_sensor_advance(d, r.next);
	SPIN_UNTIL(fut.ended && live.items == 700);
	ck_assert_int_eq(fut.items, 100);
	ck_assert_int_eq(dev_sensor_reader_next(rl), 1700);
	ck_assert_uint_eq(dev_sensor_readers(d), 1);
	ck_assert_int_eq(r.closes, 2);
	dev_sensor_reader_free(rp);
	dev_sensor_reader_free(rf);
	dev_sensor_reader_free(rl);
	SPIN_UNTIL(dev_sensor_readers(d) == 0);
	ck_assert_int_eq(r.closes, 3);
	dev_sensor_free(d);
}
END_TEST

START_TEST(test_gaps)
{
	ring r = {.next = 5000, .cap = 1000};
	dev_sensor *d = dev_sensor_new("t/gaps", NULL, NULL, 8, &ring_ops, &r, NULL);
	/* asked from before the oldest held: a gap, then data */
	seen old = {0};
	dev_sensor_reader *ro = reader("t/gaps", 3000, 4500, 0, NULL, &old);
	SPIN_UNTIL(old.ended);
	ck_assert_int_eq(old.gaps, 1);
	ck_assert_int_eq(old.gap_from[0], 3000);
	ck_assert_int_eq(old.gap_to[0], 4000);
	ck_assert_int_eq(old.items, 500);
	/* a declared gap (xrun) inside the held range */
	ck_assert_int_eq(dev_sensor_gap(d, 4200, 4300), 0);
	ck_assert_int_eq(dev_sensor_gap(d, 10, 10), -EINVAL);
	seen mid = {0};
	dev_sensor_reader *rm = reader("t/gaps", 4100, 4400, 0, NULL, &mid);
	SPIN_UNTIL(mid.ended);
	ck_assert_int_eq(mid.gaps, 1);
	ck_assert_int_eq(mid.gap_from[0], 4200);
	ck_assert_int_eq(mid.gap_to[0], 4300);
	ck_assert_int_eq(mid.items, 200);
	/* a live reader crossing a gap declared later */
	seen live = {0};
	dev_sensor_reader *rl = reader("t/gaps", 0, DEV_SENSOR_OPEN_END, DEV_SENSOR_FROM_NEXT, NULL, &live);
	SPIN_UNTIL(live.opened);
	r.next = 5100;
	dev_sensor_advance(d, r.next);
	SPIN_UNTIL(live.items == 100);
	dev_sensor_gap(d, 5100, 5150);
	r.next = 5300;
	dev_sensor_advance(d, r.next);
	SPIN_UNTIL(live.next == 5300);
	ck_assert_int_eq(live.items, 250);
	ck_assert_int_eq(live.gap_items, 50);
	dev_sensor_reader_free(ro);
	dev_sensor_reader_free(rm);
	dev_sensor_reader_free(rl);
	dev_sensor_free(d);
}
END_TEST

START_TEST(test_open_resolution)
{
	ring r = {.next = 2000, .cap = 1000};
	dev_sensor *d = dev_sensor_new("t/res", NULL, NULL, 8, &ring_ops, &r, NULL);
	seen rej = {0}, nar = {0}, cut = {0};
	dev_sensor_reader *a = reader("t/res", 5, 10, 0, "reject", &rej);
	dev_sensor_reader *b = reader("t/res", 1500, 1600, 0, "narrow", &nar);
	dev_sensor_reader *c = reader("t/res", 1500, DEV_SENSOR_OPEN_END, 0, "last", &cut);
	SPIN_UNTIL(rej.err && nar.ended && cut.ended);
	ck_assert_int_eq(rej.err, -ERANGE);
	ck_assert_msg(strstr(rej.errmsg, "older than the oldest held, 1000") && strstr(rej.errmsg, "t/res"), "%s",
		      rej.errmsg);
	ck_assert(!rej.opened);
	ck_assert_uint_eq(nar.item_size, 4);
	ck_assert_int_eq(nar.items, 100);
	ck_assert_int_eq(cut.last, 1510);
	ck_assert_int_eq(cut.items, 10);
	dev_sensor_reader_free(a);
	dev_sensor_reader_free(b);
	dev_sensor_reader_free(c);
	dev_sensor_free(d);
	GError *e = NULL;
	ck_assert_ptr_null(dev_sensor_new("t/res", NULL, NULL, 0, &ring_ops, &r, &e));
	ck_assert_int_eq(e->code, EINVAL);
	g_error_free(e);
}
END_TEST

/* A reader that stops reading (raw socket) beside a fast one: the service
 * produces 204800 items through a ring of 4096 without ever blocking; the
 * fast reader gets every item; the slow one, when it reads again, finds a
 * GAP marker and continues at the oldest held index. */
START_TEST(test_slow_reader_beside_fast)
{
	ring r = {.next = 0, .cap = 4096};
	dev_options o;
	dev_options_init(&o);
	o.chunk_bytes = 8 * 256;
	dev_sensor *d = dev_sensor_new("t/slow", &o, NULL, 8, &ring_ops, &r, NULL);
	seen fast = {0};
	dev_sensor_reader *rf = reader("t/slow", 0, DEV_SENSOR_OPEN_END, 0, NULL, &fast);
	int slow = tu_raw_connect("t/slow");
	uint8_t open[24] = {0};
	memset(open + 8, 0xff, 7);
	open[15] = 0x7f; /* last = INT64_MAX */
	tu_raw_msg(slow, DEV_MSG_SENS_OPEN, 0, 5, open, sizeof open);
	SPIN_UNTIL(fast.opened && dev_sensor_readers(d) == 2);
	const int64_t step = 512, total = 400 * step;
	while (r.next < total) {
		r.next += step;
		dev_sensor_advance(d, r.next);
		SPIN_UNTIL(fast.next == r.next); /* the fast reader keeps up */
	}
	ck_assert_int_eq(fast.items, total);
	ck_assert_int_eq(fast.gaps, 0);
	/* now the slow reader reads everything it was sent */
	GByteArray *buf = g_byte_array_new();
	dev_msg m;
	int64_t next = 0, items = 0, gaps = 0;
	gboolean opened = FALSE;
	while (next < total) {
		tu_raw_recv(slow, buf, &m);
		if (m.type == DEV_MSG_HELLO)
			continue;
		if (m.type == DEV_MSG_SENS_OPENED) {
			opened = TRUE;
			continue;
		}
		ck_assert(opened);
		if (m.type == DEV_MSG_SENS_GAP) {
			ck_assert_int_eq(m.u.gap.from, next);
			ck_assert_int_eq(m.u.gap.to, MAX(0, r.next - r.cap)); /* continues at the oldest held */
			next = m.u.gap.to;
			gaps++;
			continue;
		}
		ck_assert_uint_eq(m.type, DEV_MSG_SENS_DATA);
		ck_assert_int_eq(m.u.data.first, next);
		ck_assert_uint_eq(m.u.data.bytes, m.u.data.count * 8);
		int64_t v;
		memcpy(&v, m.u.data.items, 8);
		ck_assert_int_eq(v, next);
		next += m.u.data.count;
		items += m.u.data.count;
	}
	ck_assert_int_eq(gaps, 1);
	ck_assert_int_lt(items, total);
	ck_assert_int_eq(next, total);
	g_byte_array_unref(buf);
	close(slow);
	dev_sensor_reader_free(rf);
	dev_sensor_free(d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("libdev_sensor");
	TCase *tc = tcase_create("sensor");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_past_future_open_ended);
	tcase_add_test(tc, test_gaps);
	tcase_add_test(tc, test_open_resolution);
	tcase_add_test(tc, test_slow_reader_beside_fast);
	suite_add_tcase(s, tc);
	return tu_check_run(s);
}
