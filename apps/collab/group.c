/* group.c — detections of one call across nodes (see group.h). */
#include "apps/collab/group.h"
#include "apps/collab/sharemsg.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>

/* A closed group remembered whole: one that closed too small to be
 * located (fewer than min_nodes detections), or located from too few to be
 * tested (fewer than tested_nodes), which late detections may complete and
 * open again. */
typedef struct {
	collab_group *gr;
	int64_t closed_ns;
	guint n_at_close; /* detections when it closed (< min_nodes, or < tested_nodes) */
} kept;

/* A located group remembered (one that closed with min_nodes or more): a
 * late detection of its call is only kept with it (one call, one answer),
 * so what fits it is all that is remembered: the earliest onset and its
 * kind, and each detection's node and seq (a node twice is another call or
 * a duplicate).  Fixed size, in a ring allocated and faulted in once
 * (collab_grouper_keep): an hour of calls remembered does not grow the
 * process, where whole groups (a det_event is 168 bytes) grew collab by
 * 40-65 kB a minute in the chaos soak's field. */
#define LOCATED_MEMBERS 8
typedef struct {
	int64_t first_ns, closed_ns;
	char profile[32];
	int template_id;
	char call[32]; /* the earliest detection's call type ("": its template alone) */
	guint n;       /* detections held; those past LOCATED_MEMBERS in `more` */
	uint32_t node[LOCATED_MEMBERS];
	uint64_t seq[LOCATED_MEMBERS];
	GArray *more; /* located_member past the first LOCATED_MEMBERS, or NULL (fields of more nodes) */
} located_rec;

typedef struct {
	uint32_t node;
	uint64_t seq;
} located_member;

struct collab_grouper {
	int64_t aperture_ns, margin_ns, hold_ns;
	guint tested_nodes;   /* fewer detections than this: the group waits hold_more_ns */
	int64_t hold_more_ns; /* (collab_grouper_hold_more) */
	GPtrArray *open;      /* collab_group * */
	GQueue history;       /* kept * (groups that closed too small), oldest first */
	located_rec *ring;    /* located groups remembered: max_kept records, mmapped */
	size_t ring_bytes;
	guint ring_head, ring_n; /* oldest record, records held */
	guint min_nodes, max_kept;
	int64_t keep_ns;
	guint64 merged;        /* small groups merged into a later one of their call */
	guint64 moved;         /* detections moved alone from a small group into a later one of their call */
	guint64 next_id;       /* the last group's id */
	collab_split_fn split; /* (collab_grouper_split) */
	void *split_ctx;
	guint64 splits;
};

static void kept_free(gpointer p)
{
	kept *k = p;
	collab_group_free(k->gr);
	g_free(k);
}

collab_grouper *collab_grouper_new(int64_t aperture_ns, int64_t margin_ns, int64_t hold_ns)
{
	collab_grouper *g = g_new0(collab_grouper, 1);
	g->aperture_ns = aperture_ns;
	g->margin_ns = margin_ns;
	g->hold_ns = hold_ns;
	g->open = g_ptr_array_new_with_free_func((GDestroyNotify)collab_group_free);
	return g;
}

/* Forget every located group remembered and unmap the ring. */
static void ring_free(collab_grouper *g)
{
	for (guint i = 0; i < g->ring_n; i++) {
		located_rec *r = &g->ring[(g->ring_head + i) % g->max_kept];
		if (r->more)
			g_array_free(r->more, TRUE);
	}
	if (g->ring)
		munmap(g->ring, g->ring_bytes);
	g->ring = NULL;
	g->ring_head = g->ring_n = 0;
}

void collab_grouper_free(collab_grouper *g)
{
	if (!g)
		return;
	g_ptr_array_free(g->open, TRUE);
	g_queue_clear_full(&g->history, kept_free);
	ring_free(g);
	g_free(g);
}

void collab_group_free(collab_group *gr)
{
	if (!gr)
		return;
	g_array_free(gr->dets, TRUE);
	if (gr->resent)
		g_array_free(gr->resent, TRUE);
	g_free(gr);
}

/* Whether node's detection in gr came as a resend. */
static gboolean was_resent(const collab_group *gr, uint32_t node)
{
	for (guint i = 0; gr->resent && i < gr->resent->len; i++)
		if (g_array_index(gr->resent, uint32_t, i) == node)
			return TRUE;
	return FALSE;
}

/* Note (why has COLLAB_LATE_RESENT) or forget (why 0) that node's
 * detection in gr came as a resend. */
static void mark_resent(collab_group *gr, uint32_t node, guint why)
{
	if ((why & COLLAB_LATE_RESENT) && !was_resent(gr, node)) {
		if (!gr->resent)
			gr->resent = g_array_new(FALSE, FALSE, sizeof(uint32_t));
		g_array_append_val(gr->resent, node);
	} else if (!(why & COLLAB_LATE_RESENT)) {
		for (guint i = 0; gr->resent && i < gr->resent->len; i++)
			if (g_array_index(gr->resent, uint32_t, i) == node)
				g_array_remove_index_fast(gr->resent, i--);
	}
}

static gboolean has_node(const collab_group *gr, uint32_t node, uint64_t seq, gboolean *dup)
{
	for (guint i = 0; i < gr->dets->len; i++) {
		const det_event *d = &g_array_index(gr->dets, det_event, i);
		if (d->node == node) {
			*dup = d->seq == seq;
			return TRUE;
		}
	}
	return FALSE;
}

static gint by_onset(gconstpointer a, gconstpointer b)
{
	const det_event *x = a, *y = b;
	return x->global_ns < y->global_ns ? -1 : x->global_ns > y->global_ns ? 1
									      : (x->node < y->node ? -1 : x->node > y->node);
}

/* Whether e is of the kind (profile, template or call type) and within
 * the window of a group whose earliest onset is first_ns: the distance,
 * else -1. */
static int64_t window_fit(const collab_grouper *g, int64_t first_ns, const char *profile, int template_id,
			  const char *call, const det_event *e)
{
	int64_t d = llabs(e->global_ns - first_ns);
	/* The window is measured from the earliest onset in either direction:
	 * the first arrival may be shared last. */
	double win = (double)(g->aperture_ns + g->margin_ns) + 3 * det_event_global_crb_se_ns(e);
	/* A call matched by one template is not a call matched by another
	 * (two species calling at once); 0 = no template.  Templates the
	 * profile names one call type (its forms, or one call's family) are
	 * one kind. */
	gboolean same_type = call[0] && e->call[0] && !strcmp(call, e->call);
	gboolean kind_ok = !strcmp(profile, e->profile) &&
			   (template_id == 0 || e->template_id == 0 || template_id == e->template_id || same_type);
	return kind_ok && (double)d <= win ? d : -1;
}

/* Whether e may join gr, and how far from its first onset: -1 no, -2 a
 * duplicate of one it holds, else the distance. */
static int64_t fits(const collab_grouper *g, const collab_group *gr, const det_event *e)
{
	gboolean dup = FALSE;
	if (has_node(gr, e->node, e->seq, &dup))
		return dup ? -2 : -1;
	const det_event *f = &g_array_index(gr->dets, det_event, 0);
	return window_fit(g, gr->first_ns, f->profile, f->template_id, f->call, e);
}

/* The same for a located group remembered. */
static int64_t rec_fits(const collab_grouper *g, const located_rec *r, const det_event *e)
{
	for (guint i = 0; i < r->n; i++) {
		located_member m = i < LOCATED_MEMBERS ? (located_member){r->node[i], r->seq[i]}
						       : g_array_index(r->more, located_member, i - LOCATED_MEMBERS);
		if (m.node == e->node)
			return m.seq == e->seq ? -2 : -1;
	}
	return window_fit(g, r->first_ns, r->profile, r->template_id, r->call, e);
}

/* e held by r from now on (it becomes r's earliest when it is). */
static void rec_join(located_rec *r, const det_event *e)
{
	if (r->n < LOCATED_MEMBERS) {
		r->node[r->n] = e->node;
		r->seq[r->n] = e->seq;
	} else {
		if (!r->more)
			r->more = g_array_new(FALSE, FALSE, sizeof(located_member));
		located_member m = {e->node, e->seq};
		g_array_append_val(r->more, m);
	}
	r->n++;
	if (e->global_ns < r->first_ns) {
		r->first_ns = e->global_ns;
		g_strlcpy(r->profile, e->profile, sizeof r->profile);
		r->template_id = e->template_id;
		g_strlcpy(r->call, e->call, sizeof r->call);
	}
}

static void join(collab_group *gr, const det_event *e)
{
	g_array_append_val(gr->dets, *e);
	g_array_sort(gr->dets, by_onset);
	gr->first_ns = g_array_index(gr->dets, det_event, 0).global_ns;
}

/* The open group e fits best, or NULL; -EALREADY in *dup for a duplicate. */
static collab_group *best_open(const collab_grouper *g, const det_event *e, gboolean *dup)
{
	collab_group *best = NULL;
	int64_t best_d = INT64_MAX;
	for (guint i = 0; i < g->open->len; i++) {
		collab_group *gr = g_ptr_array_index(g->open, i);
		int64_t d = fits(g, gr, e);
		if (d == -2)
			*dup = TRUE;
		if (d >= 0 && d < best_d) {
			best = gr;
			best_d = d;
		}
	}
	return best;
}

static collab_group *open_new(collab_grouper *g, const det_event *e, int64_t now_ns, guint late)
{
	collab_group *gr = g_new0(collab_group, 1);
	gr->dets = g_array_new(FALSE, FALSE, sizeof(det_event));
	g_array_append_val(gr->dets, *e);
	gr->created_ns = now_ns;
	gr->first_ns = e->global_ns;
	gr->late = late;
	gr->id = ++g->next_id;
	g_ptr_array_add(g->open, gr);
	return gr;
}

/* The closed group e belongs to, the nearest that fits: a small one in
 * *small or a located one in *rec (both NULL: none); TRUE in *dup when a
 * closed group holds e already. */
static void kept_fit(const collab_grouper *g, const det_event *e, GList **small, located_rec **rec, gboolean *dup)
{
	int64_t best_d = INT64_MAX;
	*small = NULL;
	*rec = NULL;
	for (GList *l = g->history.head; l; l = l->next) {
		const kept *k = l->data;
		int64_t d = fits(g, k->gr, e);
		if (d == -2)
			*dup = TRUE;
		if (d >= 0 && d < best_d) {
			*small = l;
			best_d = d;
		}
	}
	for (guint i = 0; i < g->ring_n; i++) {
		located_rec *r = &g->ring[(g->ring_head + i) % g->max_kept];
		int64_t d = rec_fits(g, r, e);
		if (d == -2)
			*dup = TRUE;
		if (d >= 0 && d < best_d) {
			*small = NULL;
			*rec = r;
			best_d = d;
		}
	}
}

/* e joins the closed group remembered at bk; now with min_nodes (one too
 * small to be located) or tested_nodes (one answered untested) it is
 * opened again (with the late bits why).  Returns COLLAB_LATE_REOPENED or
 * COLLAB_LATE_KEPT. */
static int join_kept(collab_grouper *g, GList *bk, const det_event *e, int64_t now_ns, guint why)
{
	kept *k = bk->data;
	join(k->gr, e);
	mark_resent(k->gr, e->node, why);
	k->gr->late |= why;
	gboolean answered = k->n_at_close >= g->min_nodes;
	if (k->gr->dets->len < (answered ? g->tested_nodes : g->min_nodes))
		return COLLAB_LATE_KEPT;
	/* Complete now: open again (its reporter answers it again). */
	k->gr->again |= answered;
	collab_group *gr = k->gr;
	k->gr = NULL;
	g_queue_delete_link(&g->history, bk);
	kept_free(k);
	gr->created_ns = now_ns;
	g_ptr_array_add(g->open, gr);
	return COLLAB_LATE_REOPENED;
}

int collab_grouper_add(collab_grouper *g, const det_event *e, int64_t now_ns)
{
	if (!e->has_global)
		return -EINVAL;
	gboolean dup = FALSE;
	collab_group *best = best_open(g, e, &dup);
	if (dup)
		return -EALREADY;
	if (best) {
		join(best, e);
		return 1;
	}
	open_new(g, e, now_ns, 0);
	return 0;
}

int collab_grouper_add_late(collab_grouper *g, const det_event *e, int64_t now_ns, guint why)
{
	if (!e->has_global)
		return -EINVAL;
	gboolean dup = FALSE;
	collab_group *best = best_open(g, e, &dup);
	GList *bk;
	located_rec *rec;
	kept_fit(g, e, &bk, &rec, &dup);
	if (dup)
		return -EALREADY;
	if (best) {
		join(best, e);
		mark_resent(best, e->node, why);
		best->late |= why;
		return COLLAB_LATE_JOINED;
	}
	if (rec) {
		rec_join(rec, e);
		return COLLAB_LATE_KEPT;
	}
	if (!bk) {
		mark_resent(open_new(g, e, now_ns, why), e->node, why);
		return COLLAB_LATE_OPENED;
	}
	return join_kept(g, bk, e, now_ns, why);
}

void collab_grouper_keep(collab_grouper *g, guint min_nodes, int64_t keep_ns, guint max_groups)
{
	ring_free(g);
	g->min_nodes = min_nodes;
	g->keep_ns = keep_ns;
	g->max_kept = max_groups;
	if (!max_groups)
		return;
	/* Faulted in now (MAP_POPULATE): the ring's pages are the process's
	 * from the start, not as the hour fills them. */
	g->ring_bytes = (size_t)max_groups * sizeof(located_rec);
	void *m = mmap(NULL, g->ring_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (m == MAP_FAILED)
		g_error("collab: cannot map %zu bytes for the located groups remembered: %s", g->ring_bytes,
			g_strerror(errno));
	g->ring = m;
}

guint collab_grouper_kept(const collab_grouper *g)
{
	return g->history.length + g->ring_n;
}

/* The oldest located group remembered goes (ring_n > 0). */
static void forget_oldest_located(collab_grouper *g)
{
	located_rec *old = &g->ring[g->ring_head];
	if (old->more)
		g_array_free(old->more, TRUE);
	old->more = NULL;
	g->ring_head = (g->ring_head + 1) % g->max_kept;
	g->ring_n--;
}

/* Remember located group gr, closed at now_ns, in the ring (the oldest
 * record goes when it is full). */
static void remember_located(collab_grouper *g, const collab_group *gr, int64_t now_ns)
{
	if (g->ring_n == g->max_kept)
		forget_oldest_located(g);
	located_rec *r = &g->ring[(g->ring_head + g->ring_n) % g->max_kept];
	const det_event *f = &g_array_index(gr->dets, det_event, 0);
	memset(r, 0, sizeof *r);
	r->first_ns = gr->first_ns;
	r->closed_ns = now_ns;
	g_strlcpy(r->profile, f->profile, sizeof r->profile);
	r->template_id = f->template_id;
	g_strlcpy(r->call, f->call, sizeof r->call);
	for (guint i = 0; i < gr->dets->len; i++)
		rec_join(r, &g_array_index(gr->dets, det_event, i));
	g->ring_n++;
}

static collab_group *copy_group(const collab_group *gr)
{
	collab_group *c = g_new0(collab_group, 1);
	*c = *gr;
	c->dets = g_array_copy(gr->dets);
	c->resent = gr->resent ? g_array_copy(gr->resent) : NULL;
	return c;
}

/* Whether every detection of k may join gr (a group of one call: no node
 * twice, the same kind, within the window of gr's earliest onset). */
static gboolean mergeable(const collab_grouper *g, const collab_group *gr, const collab_group *k)
{
	for (guint i = 0; i < k->dets->len; i++)
		if (fits(g, gr, &g_array_index(k->dets, det_event, i)) < 0)
			return FALSE;
	return TRUE;
}

/* Remembered groups that closed too small and belong to the call gr is
 * (their detections came before gr's, gr's after their hold): merged into
 * gr and forgotten.  A small group that holds a node gr has as well (a
 * detector's second detection of that kind near the call: a template
 * matched inside another caller's call) gives gr only its detections
 * that fit it, of nodes gr lacks, and keeps the rest (the chaos soak: node
 * 3's ghost opened a group that node 1's detection of the call then
 * joined, and the call was solved from four nodes without it).  Returns
 * how many groups were taken in whole. */
static guint merge_small(collab_grouper *g, collab_group *gr)
{
	guint n = 0;
	for (GList *l = g->history.head; l;) {
		GList *next = l->next;
		kept *k = l->data;
		if (k->n_at_close < g->min_nodes && mergeable(g, gr, k->gr)) {
			for (guint i = 0; i < k->gr->dets->len; i++) {
				const det_event *e = &g_array_index(k->gr->dets, det_event, i);
				join(gr, e);
				mark_resent(gr, e->node, was_resent(k->gr, e->node) ? COLLAB_LATE_RESENT : 0);
			}
			gr->late |= k->gr->late;
			g_queue_delete_link(&g->history, l);
			kept_free(k);
			n++;
		} else if (k->n_at_close < g->min_nodes) {
			for (guint i = 0; i < k->gr->dets->len;) {
				const det_event *e = &g_array_index(k->gr->dets, det_event, i);
				if (fits(g, gr, e) < 0) {
					i++;
					continue;
				}
				join(gr, e);
				mark_resent(gr, e->node, was_resent(k->gr, e->node) ? COLLAB_LATE_RESENT : 0);
				gr->late |= k->gr->late;
				g->moved++;
				g_array_remove_index(k->gr->dets, i);
			}
			if (!k->gr->dets->len) {
				g_queue_delete_link(&g->history, l);
				kept_free(k);
			} else
				k->gr->first_ns = g_array_index(k->gr->dets, det_event, 0).global_ns;
		}
		l = next;
	}
	return n;
}

void collab_grouper_split(collab_grouper *g, collab_split_fn fn, void *ctx)
{
	g->split = fn;
	g->split_ctx = ctx;
}

guint64 collab_grouper_splits(const collab_grouper *g)
{
	return g->splits;
}

/* The open group other than gr (index skip) of gr's kind whose first onset
 * lies within the window of gr's, nearest, or NULL. */
static collab_group *overlapping(const collab_grouper *g, const collab_group *gr, guint skip)
{
	const det_event *f = &g_array_index(gr->dets, det_event, 0);
	collab_group *best = NULL;
	int64_t best_d = INT64_MAX;
	for (guint i = 0; i < g->open->len; i++) {
		collab_group *o = g_ptr_array_index(g->open, i);
		if (i == skip)
			continue;
		int64_t d = window_fit(g, gr->first_ns, f->profile, f->template_id, f->call, &g_array_index(o->dets, det_event, 0));
		if (d >= 0 && d < best_d) {
			best = o;
			best_d = d;
		}
	}
	return best;
}

/* Offer gr's and o's detections to the split function; regroup them as it
 * says.  Returns whether they were regrouped. */
static gboolean split_pair(collab_grouper *g, collab_group *gr, collab_group *o)
{
	guint n = gr->dets->len + o->dets->len;
	det_event *pool = g_new(det_event, n);
	int *side = g_new(int, n);
	gboolean *resent = g_new(gboolean, n);
	for (guint i = 0; i < n; i++) {
		const collab_group *from = i < gr->dets->len ? gr : o;
		pool[i] = g_array_index(from->dets, det_event, i < gr->dets->len ? i : i - gr->dets->len);
		side[i] = from == o;
		resent[i] = was_resent(from, pool[i].node);
	}
	gboolean done = g->split(g->split_ctx, pool, (int)n, side) == 1;
	if (done) {
		g_array_set_size(gr->dets, 0);
		g_array_set_size(o->dets, 0);
		if (gr->resent)
			g_array_set_size(gr->resent, 0);
		if (o->resent)
			g_array_set_size(o->resent, 0);
		for (guint i = 0; i < n; i++) {
			collab_group *to = side[i] ? o : gr;
			join(to, &pool[i]);
			mark_resent(to, pool[i].node, resent[i] ? COLLAB_LATE_RESENT : 0);
		}
		g->splits++;
	}
	g_free(pool);
	g_free(side);
	g_free(resent);
	return done;
}

void collab_grouper_hold_more(collab_grouper *g, guint tested_nodes, int64_t hold_more_ns)
{
	g->tested_nodes = tested_nodes;
	g->hold_more_ns = hold_more_ns;
}

guint collab_grouper_poll(collab_grouper *g, int64_t now_ns, GPtrArray *out)
{
	guint n = 0;
	for (guint i = 0; i < g->open->len;) {
		collab_group *gr = g_ptr_array_index(g->open, i);
		int64_t hold = gr->dets->len < g->tested_nodes ? MAX(g->hold_ns, g->hold_more_ns) : g->hold_ns;
		if (now_ns - gr->created_ns >= hold) {
			collab_group *o = g->split ? overlapping(g, gr, i) : NULL;
			if (o && split_pair(g, gr, o)) {
				guint oi;
				if (!o->dets->len && g_ptr_array_find(g->open, o, &oi)) {
					g_ptr_array_remove_index(g->open, oi);
					i -= oi < i;
				}
				if (!gr->dets->len) {
					g_ptr_array_remove_index(g->open, i);
					continue;
				}
			}
			g->merged += merge_small(g, gr);
			g_ptr_array_add(out, g_ptr_array_steal_index(g->open, i));
			n++;
			gr->reporter = collab_group_reporter(gr); /* (again: the one it had) */
			if (g->max_kept && gr->dets->len >= g->min_nodes && gr->dets->len >= g->tested_nodes) {
				remember_located(g, gr, now_ns);
			} else if (g->max_kept) {
				kept *k = g_new0(kept, 1);
				k->gr = copy_group(gr);
				k->closed_ns = now_ns;
				k->n_at_close = gr->dets->len;
				g_queue_push_tail(&g->history, k);
			}
		} else {
			i++;
		}
	}
	while (g->history.length &&
	       (g->history.length > g->max_kept || now_ns - ((kept *)g->history.head->data)->closed_ns > g->keep_ns))
		kept_free(g_queue_pop_head(&g->history));
	while (g->ring_n && now_ns - g->ring[g->ring_head].closed_ns > g->keep_ns)
		forget_oldest_located(g);
	return n;
}

/* The detections of gr that fn moves or loses leave it, appended to moved
 * or lost (may be NULL); gr keeps its order and its earliest onset.  Those
 * fn cannot time (UNKNOWN) follow the members it moved when every member
 * it could time moved (collab_grouper_retime). */
static void retime_group(collab_group *gr, collab_retime_fn fn, void *ctx, GArray *moved, GArray *lost)
{
	double sum = 0, sum2 = 0;
	guint n_moved = 0, n_same = 0;
	GArray *unknown = NULL; /* indices into gr->dets */
	for (guint k = 0; k < gr->dets->len;) {
		det_event e = g_array_index(gr->dets, det_event, k);
		int rc = fn(ctx, &e);
		if (rc == COLLAB_RETIME_SAME || rc == COLLAB_RETIME_UNKNOWN) {
			n_same += rc == COLLAB_RETIME_SAME;
			if (rc == COLLAB_RETIME_UNKNOWN) {
				if (!unknown)
					unknown = g_array_new(FALSE, FALSE, sizeof(guint));
				g_array_append_val(unknown, k);
			}
			k++;
			continue;
		}
		if (rc == COLLAB_RETIME_MOVED) {
			double d = (double)(e.global_ns - g_array_index(gr->dets, det_event, k).global_ns);
			sum += d;
			sum2 += d * d;
			n_moved++;
			g_array_append_val(moved, e);
		} else if (lost) {
			g_array_append_val(lost, g_array_index(gr->dets, det_event, k));
		}
		mark_resent(gr, e.node, 0);
		g_array_remove_index(gr->dets, k);
		/* (indices kept in `unknown` are below k: they stand) */
	}
	if (unknown && n_moved && !n_same) {
		double mean = sum / n_moved, var = n_moved > 1 ? fmax(0, (sum2 - sum * sum / n_moved) / (n_moved - 1)) : 0;
		double grow = sqrt(var + var / n_moved);
		/* from the last, so the earlier indices stand */
		for (guint u = unknown->len; u-- > 0;) {
			guint k = g_array_index(unknown, guint, u);
			det_event e = g_array_index(gr->dets, det_event, k);
			e.global_ns += (int64_t)llround(mean);
			e.global_se_ns = hypot(e.global_se_ns, grow);
			g_array_append_val(moved, e);
			mark_resent(gr, e.node, 0);
			g_array_remove_index(gr->dets, k);
		}
	}
	if (unknown)
		g_array_free(unknown, TRUE);
	if (gr->dets->len)
		gr->first_ns = g_array_index(gr->dets, det_event, 0).global_ns;
}

guint collab_grouper_retime(collab_grouper *g, collab_retime_fn fn, void *ctx, int64_t now_ns, guint why,
			    GArray *lost)
{
	GArray *moved = g_array_new(FALSE, FALSE, sizeof(det_event));
	for (guint i = 0; i < g->open->len;) {
		collab_group *gr = g_ptr_array_index(g->open, i);
		retime_group(gr, fn, ctx, moved, lost);
		if (gr->dets->len)
			i++;
		else
			g_ptr_array_remove_index(g->open, i);
	}
	for (GList *l = g->history.head; l;) {
		GList *next = l->next;
		kept *k = l->data;
		retime_group(k->gr, fn, ctx, moved, lost);
		if (!k->gr->dets->len) {
			g_queue_delete_link(&g->history, l);
			kept_free(k);
		}
		l = next;
	}
	/* Only once every group holds times on one timescale: a detection
	 * moved must not rejoin a group of the old one. */
	for (guint i = 0; i < moved->len; i++)
		collab_grouper_add_late(g, &g_array_index(moved, det_event, i), now_ns, why);
	guint n = moved->len;
	g_array_free(moved, TRUE);
	return n;
}

guint64 collab_grouper_merged(const collab_grouper *g)
{
	return g->merged;
}

guint64 collab_grouper_moved(const collab_grouper *g)
{
	return g->moved;
}

guint collab_grouper_open(const collab_grouper *g)
{
	return g->open->len;
}

uint32_t collab_group_reporter(const collab_group *gr)
{
	if (gr->again)
		return gr->reporter;
	/* dets are sorted by (global onset, node): the first one is the rule's. */
	return g_array_index(gr->dets, det_event, 0).node;
}

gboolean collab_group_answered_elsewhere(const collab_group *gr, guint min_nodes)
{
	uint32_t rep = collab_group_reporter(gr);
	if (!gr->resent || was_resent(gr, rep))
		return FALSE;
	guint n = 0;
	for (guint i = 0; i < gr->dets->len; i++)
		n += was_resent(gr, g_array_index(gr->dets, det_event, i).node);
	return n >= min_nodes;
}
