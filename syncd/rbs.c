/* rbs.c — syncd's UDP side: socket, receive timestamps, timers (see rbs.h). */
#include "syncd/rbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <glib-unix.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libdev/netkey.h"
#include "libdev/ratelog.h"
#include "libsync/now.h"
#include "syncd/advert_scope.h"
#include "syncd/allow.h"
#include "libdev/bootid.h"
#include "syncd/conversions.h"
#include "libdev/replay.h"
#include "syncd/rtcpu.h"
#include "syncd/rxbpf.h"
#include "syncd/rxfilter_load.h"

#define RBS_ERROR g_quark_from_static_string("syncd-rbs") /* codes: errno values */

enum { BAD_SIZE,
       BAD_HEADER,
       BAD_VALUE,
       BAD_AUTH,
       N_BAD };
static const char *const bad_names[N_BAD] = {"bad_size", "bad_header", "bad_value", "bad_auth"};

struct syncd_rbs {
	const syncd_config *cfg;
	syncd_pairs *pairs; /* local pairs: realtime -> cpu, and what we advertise */
	syncd_root *root;
	syncd_notify on_change; /* told when what sync/ticker or sync/rbs shows changes */
	uint32_t self;          /* this node */
	GMainContext *ctx;
	int fd;
	struct sockaddr_in dest;
	uint8_t *key;
	size_t klen;
	rbs_core *core;
	rbs_mesh *mesh;
	syncd_rxf *filter; /* receive filter (CHORUS_RX_FILTER), or NULL */
	GSource *io, *t_beacon, *t_report, *t_advert;
	uint32_t seq[4];      /* next sequence number per packet type */
	guint64 rx[4], tx[4]; /* packets by type (index 0: own beacons looped back) */
	guint64 tx_bytes;     /* UDP payload bytes sent (the radio's load) */
	guint64 bad[N_BAD];
	guint64 no_tstamp; /* dropped: no kernel timestamp */
	guint64 send_errors;
	char last_bad[160]; /* reason of the last bad packet */
	uint32_t last_bad_from;
	syncd_allow *allow;        /* [rbs] peers, or NULL: any */
	dev_replay *replay;        /* per-sender replay windows */
	uint64_t boot;             /* our boot number, in every packet */
	char boot_note[240];       /* why the boot file was not used, or "" */
	guint64 replays[REPLAY_N]; /* refused by the replay windows, by verdict */
	guint64 not_allowed;       /* packets from senders not in [rbs] peers */
	guint64 left_out;          /* advertised nodes, edges, roots not in [rbs] peers */
	char last_refused[160];    /* the last packet refused by the two above */
	int64_t cont_ns;           /* our cpu time of the last continuation noted (root.h) */
	int64_t listen_until_ns;   /* we define no timescale of our own before this */
	GHashTable *heard;         /* node -> heard_addr: where its packets come from (sync/peers) */
	guint route_len;           /* [rbs] advert_hops: conversions on our path to global, last advert */
	guint64 scoped_out;        /* [rbs] advert_hops: conversions and news not re-advertised */
};

/* Where a node's accepted packets come from, and when last. */
typedef struct {
	struct in_addr addr;
	int64_t at_ns;
} heard_addr;

/* At most this many nodes' addresses are kept (a node beyond is not
 * listed; the fits do not depend on it). */
#define HEARD_MAX 4096

/* --- sending ---------------------------------------------------------- */

static void send_packet(syncd_rbs *r, rbs_packet *p)
{
	uint8_t buf[RBS_MAX_PACKET];
	p->sender = r->self;
	p->seq = r->seq[p->type]++;
	p->boot = r->boot;
	int n = rbs_wire_encode(p, r->key, r->klen, buf, sizeof buf);
	if (n < 0) {
		g_warning("rbs: cannot encode a type-%d packet: %s", p->type, g_strerror(-n));
		return;
	}
	if (sendto(r->fd, buf, (size_t)n, 0, (struct sockaddr *)&r->dest, sizeof r->dest) < 0 && ++r->send_errors)
		ratelog(G_LOG_LEVEL_WARNING, r->send_errors, "rbs: send to %s:%u failed: %s", inet_ntoa(r->dest.sin_addr),
			ntohs(r->dest.sin_port), g_strerror(errno));
	else {
		r->tx[p->type]++;
		r->tx_bytes += (guint64)n;
	}
}

/* Re-arm a one-shot timer at mean * U(0.5, 1.5): random phase, so nodes
 * started together do not beacon in lockstep. */
static GSource *arm(syncd_rbs *r, double mean_s, GSourceFunc fn)
{
	guint ms = (guint)(mean_s * 1000.0 * g_random_double_range(0.5, 1.5));
	GSource *t = g_timeout_source_new(ms ? ms : 1);
	g_source_set_callback(t, fn, r, NULL);
	g_source_attach(t, r->ctx);
	g_source_unref(t);
	return t;
}

static gboolean on_beacon(gpointer data)
{
	syncd_rbs *r = data;
	rbs_packet p = {.type = RBS_BEACON};
	/* With [rbs] references, only the references of our neighbourhood. */
	if (rbs_core_beacons(r->core, sync_now(SYNC_KIND_CPU)))
		send_packet(r, &p);
	r->t_beacon = arm(r, r->cfg->beacon_interval_s, on_beacon);
	return G_SOURCE_REMOVE;
}

static gboolean on_report(gpointer data)
{
	syncd_rbs *r = data;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	/* Three intervals of receptions: a peer that lost a report or two still
	 * gets every beacon. */
	int64_t since_ns = now_ns - (int64_t)(3.0 * r->cfg->report_interval_s * 1e9);
	size_t max_per = (RBS_MTU - RBS_HDR - 4 - RBS_HMAC_LEN) / RBS_REPORT_ENTRY;
	rbs_reception *rx = g_new(rbs_reception, 4096);
	size_t n = rbs_core_recent(r->core, since_ns, rx, 4096);
	for (size_t off = 0; off < n; off += max_per) {
		rbs_packet p = {.type = RBS_REPORT, .rx = rx + off, .n_rx = MIN(max_per, n - off)};
		send_packet(r, &p);
	}
	g_free(rx);
	r->t_report = arm(r, r->cfg->report_interval_s, on_report);
	return G_SOURCE_REMOVE;
}

/* Our advertisement: news of live nodes, and every conversion we know
 * except realtime pairs (of local use only), split into RBS_MTU packets;
 * with [rbs] advert_hops = H, only the neighbourhood's and our path to
 * global (advert_scope.h). */
static gboolean on_advert(gpointer data)
{
	syncd_rbs *r = data;
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	uint32_t scope = (uint32_t)r->cfg->rbs_advert_hops;
	/* Scoped news keeps what the root rule needs everywhere: the root,
	 * the preferred one, the lowest live node. */
	int64_t pref = syncd_root_preferred(r->root);
	uint32_t keep[3] = {syncd_root_node(r->root), pref >= 0 ? (uint32_t)pref : RBS_NO_NODE,
			    rbs_mesh_root(r->mesh, -1, now_ns)};
	size_t n_news;
	rbs_node_news *news = rbs_mesh_news(r->mesh, now_ns, scope, keep, G_N_ELEMENTS(keep), &n_news);
	/* Ours first (origin: this node; the root affirms its definition of
	 * global in every advertisement), then learned ones with their origin. */
	GArray *conv = syncd_conversions(r->pairs, r->root, r->core, r->mesh, SYNCD_CONV_SHAREABLE, now_ns);
	GHashTable *route = scope ? syncd_scope_route(conv, r->self, now_ns, &r->route_len) : NULL;
	GArray *edges = g_array_sized_new(FALSE, FALSE, sizeof(rbs_edge), conv->len);
	for (guint i = 0; i < conv->len; i++) {
		const syncd_conversion *c = &g_array_index(conv, syncd_conversion, i);
		if (scope && !syncd_scope_keep(c, scope, route)) {
			r->scoped_out++;
			continue;
		}
		rbs_edge e = {c->origin, (uint16_t)MIN(c->hops, 65535u), c->age_ns, c->e.from, c->e.to, c->e.conv};
		g_array_append_val(edges, e);
	}
	if (route)
		g_hash_table_destroy(route);
	g_array_free(conv, TRUE);
	/* Pack: news go first, then edges, each packet within RBS_MTU. */
	size_t ni = 0, ei = 0, room0 = RBS_MTU - RBS_HDR - 8 - RBS_HMAC_LEN;
	rbs_edge *ev = (rbs_edge *)(void *)edges->data;
	do {
		size_t room = room0, nn = 0, ne = 0;
		while (ni + nn < n_news && room >= RBS_NODE_ENTRY) {
			nn++;
			room -= RBS_NODE_ENTRY;
		}
		while (ei + ne < edges->len && room >= RBS_EDGE_ENTRY) {
			ne++;
			room -= RBS_EDGE_ENTRY;
		}
		rbs_packet p = {.type = RBS_ADVERT,
				.root = syncd_root_have_global(r->root) ? syncd_root_node(r->root) : RBS_NO_NODE,
				.nodes = news + ni,
				.n_nodes = nn,
				.edges = ev + ei,
				.n_edges = ne};
		send_packet(r, &p);
		ni += nn;
		ei += ne;
	} while (ni < n_news || ei < edges->len);
	g_array_free(edges, TRUE);
	g_free(news);
	r->t_advert = arm(r, r->cfg->advert_interval_s, on_advert);
	return G_SOURCE_REMOVE;
}

/* --- receiving -------------------------------------------------------- */

/* The kernel's receive time (host CLOCK_REALTIME) as this node's cpu time:
 * host realtime -> node realtime (simulation), then through a realtime<->cpu
 * sandwich taken when the packet is read (`now`): cpu = cpu_s + (rt - rt_s)
 * * slope.  The fresh sandwich pins the offset to ~the sandwich width; the
 * slope (1, or the fitted realtime<->cpu slope once it rests on enough
 * data, as NTP may slew realtime) only spans the µs between the kernel's
 * stamp and our read.  A fit alone would extrapolate its slope error over
 * the time since its last sample — microseconds just after a start. */
static int64_t rx_time_cpu(syncd_rbs *r, int64_t host_rt, const rtcpu_sample *now)
{
	uint32_t me = r->self;
	sync_conv c;
	double slope = 1.0;
	if (syncd_pairs_conv(r->pairs, sync_clock_realtime(me), sync_clock_cpu(me), &c) == 0 && c.n >= 10 &&
	    c.xmax - c.xmin > 10000000000LL)
		slope = c.slope;
	int64_t node_rt = sync_host_to_node(SYNC_KIND_REALTIME, host_rt);
	return now->cpu_ns + (int64_t)llround((double)(node_rt - now->realtime_ns) * slope);
}

static void count_bad(syncd_rbs *r, int rc, const char *why, const struct sockaddr_in *from)
{
	int k = rc == -EMSGSIZE ? BAD_SIZE : rc == -EBADMSG ? BAD_HEADER
				     : rc == -EACCES        ? BAD_AUTH
							    : BAD_VALUE;
	r->bad[k]++;
	snprintf(r->last_bad, sizeof r->last_bad, "%s from %s: %s", bad_names[k], inet_ntoa(from->sin_addr), why);
	ratelog(G_LOG_LEVEL_WARNING, r->bad[k], "rbs: dropped packet (%s): %s", bad_names[k], r->last_bad);
	syncd_notify_call(&r->on_change, SYNCD_CHANGED); /* the counters are on sync/rbs */
}

/* A packet refused by the peers list or the replay windows: counted on
 * sync/rbs, logged at a bounded rate. */
static void refused(syncd_rbs *r, guint64 *counter, const char *what, uint32_t sender,
		    const struct sockaddr_in *from)
{
	++*counter;
	snprintf(r->last_refused, sizeof r->last_refused, "%s: node%u from %s", what, sender, inet_ntoa(from->sin_addr));
	ratelog(G_LOG_LEVEL_WARNING, *counter, "rbs: refused packet (%s)", r->last_refused);
	syncd_notify_call(&r->on_change, SYNCD_CHANGED);
}

/* Global and utc belong to no node. */
static gboolean nodeless(sync_clock_id c)
{
	return c.kind == SYNC_KIND_GLOBAL || c.kind == SYNC_KIND_UTC;
}

/* Leave out of an advertisement what it says of nodes not in [rbs] peers:
 * news, edges between or fitted by them, and a root. */
static void keep_allowed(syncd_rbs *r, rbs_packet *p)
{
	if (!r->allow)
		return;
	size_t k = 0;
	for (size_t i = 0; i < p->n_nodes; i++)
		if (syncd_allow_has(r->allow, p->nodes[i].node))
			p->nodes[k++] = p->nodes[i];
		else
			r->left_out++;
	p->n_nodes = k;
	k = 0;
	for (size_t i = 0; i < p->n_edges; i++) {
		const rbs_edge *e = &p->edges[i];
		int ok = syncd_allow_has(r->allow, e->origin) &&
			 (nodeless(e->from) || syncd_allow_has(r->allow, e->from.node)) &&
			 (nodeless(e->to) || syncd_allow_has(r->allow, e->to.node));
		if (ok)
			p->edges[k++] = p->edges[i];
		else
			r->left_out++;
	}
	p->n_edges = k;
	if (p->root != RBS_NO_NODE && !syncd_allow_has(r->allow, p->root)) {
		p->root = RBS_NO_NODE;
		r->left_out++;
	}
}

static void handle(syncd_rbs *r, const uint8_t *buf, size_t len, int64_t host_rt, const rtcpu_sample *rs,
		   const struct sockaddr_in *from)
{
	uint32_t me = r->self, sender;
	rbs_packet p;
	const char *why = NULL;
	/* The receive time, then the receive filter on the sender named in
	 * the header (checked again by decoding), before decoding: in a big
	 * simulated field most packets on the shared loopback come from nodes
	 * out of range, and dropping them before decoding and authenticating
	 * keeps every node's load to what its radio would carry.  The filter
	 * sees our own looped-back packets too, and may move the time.  A
	 * header that names no sender goes on unfiltered: decoding refuses it
	 * and counts it on sync/rbs. */
	int64_t t = rx_time_cpu(r, host_rt, rs);
	int named = rbs_wire_peek_sender(buf, len, &sender) == 0;
	if (r->filter && named && !syncd_rxf_deliver(r->filter, sender, &t))
		return;
	if (named && sender != me && !syncd_allow_has(r->allow, sender)) {
		refused(r, &r->not_allowed, "not in [rbs] peers", sender, from);
		return;
	}
	int rc = rbs_wire_decode(buf, len, r->key, r->klen, &p, &why);
	if (rc < 0) {
		count_bad(r, rc, why, from);
		return;
	}
	/* Our own packets too: a replay of our beacons would be taken as
	 * more receptions of them. */
	replay_verdict v = dev_replay_check(r->replay, p.sender, p.type, p.boot, p.seq);
	if (v != REPLAY_OK) {
		refused(r, &r->replays[v], dev_replay_name(v), p.sender, from);
		rbs_packet_clear(&p);
		return;
	}
	if (p.sender != me && p.type == RBS_ADVERT)
		keep_allowed(r, &p);
	int64_t now_ns = sync_now(SYNC_KIND_CPU);
	if (p.sender == me) {
		/* Our own packet, looped back: only our beacons' receive times
		 * matter (sender-receiver pairs). */
		if (p.type == RBS_BEACON) {
			rbs_core_heard(r->core, me, p.seq, t, now_ns);
			r->rx[0]++;
		}
		rbs_packet_clear(&p);
		return;
	}
	r->rx[p.type]++;
	heard_addr *ha = g_hash_table_lookup(r->heard, GUINT_TO_POINTER(p.sender));
	if (!ha && g_hash_table_size(r->heard) < HEARD_MAX) {
		ha = g_new0(heard_addr, 1);
		g_hash_table_insert(r->heard, GUINT_TO_POINTER(p.sender), ha);
	}
	if (ha) {
		ha->addr = from->sin_addr;
		ha->at_ns = now_ns;
	}
	rbs_core_touch(r->core, p.sender, now_ns);
	rbs_core_boot(r->core, p.sender, p.boot, now_ns);
	rbs_mesh_heard(r->mesh, p.sender, now_ns);
	switch (p.type) {
	case RBS_BEACON:
		rbs_core_heard(r->core, p.sender, p.seq, t, now_ns);
		break;
	case RBS_REPORT: {
		guint64 restarts = rbs_core_restarts(r->core);
		if (rbs_core_report(r->core, p.sender, p.rx, p.n_rx, now_ns) > 0)
			syncd_notify_call(&r->on_change, SYNCD_CHANGED);
		if (rbs_core_restarts(r->core) != restarts)
			g_message("rbs: node%u started again (boot %" G_GUINT64_FORMAT ") with its cpu clock started again "
				  "(a reboot): the pair is fitted afresh, its old fit kept as a piece of history",
				  p.sender, p.boot);
		rbs_paths_verdict v;
		if (rbs_core_path_alarm(r->core, p.sender, &v))
			g_warning("rbs: pair with node%u: beacons of node%u give %+.3f us against the other %u sender(s)' "
				  "(z %+.1f): a delayed link from node%u (a delay attack, or a path that changed); sync/rbs "
				  "has the pair's paths line",
				  p.sender, v.sender, v.offset_ns * 1e-3, v.senders - 1, v.z, v.sender);
		break;
	}
	case RBS_ADVERT:
		rbs_core_advertised(r->core, p.sender, p.nodes, p.n_nodes, now_ns);
		if (rbs_mesh_merge(r->mesh, &p, now_ns) > 0)
			syncd_notify_call(&r->on_change, SYNCD_CHANGED);
		break;
	}
	rbs_packet_clear(&p);
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	syncd_rbs *r = data;
	static uint8_t buf[RBS_MAX_PACKET];
	/* Once per wake-up (all packets here arrived before it).  A sandwich
	 * cut by preemption is wide: its midpoint may be off by half its width,
	 * so take more until one is tight (a few µs) or give up after 4 rounds. */
	rtcpu_sample rs = rtcpu_sample_take(3);
	for (int k = 0; k < 3 && rs.width_ns > 5000; k++) {
		rtcpu_sample again = rtcpu_sample_take(3);
		if (again.width_ns < rs.width_ns)
			rs = again;
	}
	for (int i = 0; i < 64; i++) {
		struct sockaddr_in from;
		char ctl[CMSG_SPACE(sizeof(struct timespec)) + 64];
		struct iovec iov = {buf, sizeof buf};
		struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
		ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT);
		if (n < 0)
			break;
		int64_t host_rt = INT64_MIN;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
				struct timespec ts;
				memcpy(&ts, CMSG_DATA(c), sizeof ts);
				host_rt = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
			}
		if (host_rt == INT64_MIN) {
			r->no_tstamp++;
			continue;
		}
		if (m.msg_flags & MSG_TRUNC) {
			count_bad(r, -EMSGSIZE, "datagram larger than any chorus packet", &from);
			continue;
		}
		handle(r, buf, (size_t)n, host_rt, &rs, &from);
	}
	syncd_notify_call(&r->on_change, SYNCD_SETTLED);
	return G_SOURCE_CONTINUE;
}

/* --- set-up ----------------------------------------------------------- */

/* The receive filter names the only senders it could keep: let the kernel
 * drop the rest before we wake (rxbpf.h).  Without it, every packet is
 * still judged by the filter itself, so a failure here costs only CPU. */
static void attach_kernel_filter(syncd_rbs *r)
{
	uint32_t ids[SYNCD_RXBPF_MAX];
	char why[160];
	int n = syncd_rxf_senders(r->filter, ids, SYNCD_RXBPF_MAX);
	if (n < 0)
		return;
	if (n > SYNCD_RXBPF_MAX || syncd_rxbpf_attach(r->fd, ids, (size_t)n, why, sizeof why) < 0) {
		g_message("rbs: no kernel filter for the receive filter's %d senders: %s", n,
			  n > SYNCD_RXBPF_MAX ? "too many" : why);
		return;
	}
	g_message("rbs: kernel filter: packets from %d senders only (the receive filter's)", n);
}

static int open_socket(syncd_rbs *r, GError **err)
{
	const syncd_config *c = r->cfg;
	struct in_addr addr;
	if (inet_pton(AF_INET, c->rbs_address, &addr) != 1) {
		g_set_error(err, RBS_ERROR, EINVAL,
			    "[rbs] address \"%s\" is not an IPv4 address", c->rbs_address);
		return -EINVAL;
	}
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd < 0)
		goto fail;
	/* Every node's syncd on one host binds the same port (simulation). */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof one) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one) < 0)
		goto fail;
	if (*c->rbs_interface &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->rbs_interface, (socklen_t)strlen(c->rbs_interface)) < 0)
		goto fail;
	struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons((uint16_t)c->rbs_port), .sin_addr.s_addr = htonl(INADDR_ANY)};
	if (bind(fd, (struct sockaddr *)&any, sizeof any) < 0)
		goto fail;
	if (IN_MULTICAST(ntohl(addr.s_addr))) {
		struct ip_mreqn mr = {.imr_multiaddr = addr};
		mr.imr_ifindex = *c->rbs_interface ? (int)if_nametoindex(c->rbs_interface) : 0;
		if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof mr) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mr, sizeof mr) < 0 ||
		    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof one) < 0)
			goto fail;
	}
	r->fd = fd;
	r->dest = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = any.sin_port, .sin_addr = addr};
	return 0;
fail:
	g_set_error(err, RBS_ERROR, errno, "rbs socket on %s:%" G_GINT64_FORMAT "%s%s: %s",
		    c->rbs_address, c->rbs_port, *c->rbs_interface ? " dev " : "", c->rbs_interface, g_strerror(errno));
	if (fd >= 0)
		close(fd);
	return -errno;
}

syncd_rbs *syncd_rbs_new(const syncd_config *cfg, syncd_pairs *pairs, syncd_root *root, syncd_notify on_change,
			 GMainContext *ctx, GError **err)
{
	const syncd_config *c = cfg;
	const char *why = NULL;
	syncd_rbs *r = g_new0(syncd_rbs, 1);
	r->cfg = cfg;
	r->pairs = pairs;
	r->root = root;
	r->on_change = on_change;
	r->self = (uint32_t)cfg->node;
	r->fd = -1;
	r->heard = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
	r->ctx = ctx ? ctx : g_main_context_default();
	for (int i = 0; i < 4; i++)
		r->seq[i] = g_random_int(); /* a restarted node's numbers do not match its old ones */
	/* Listen for a live timescale (adverts carry the root's definition)
	 * before defining one of our own (choose_root). */
	r->listen_until_ns = sync_now(SYNC_KIND_CPU) + (int64_t)(2.5 * c->advert_interval_s * 1e9);
	syncd_root_listen(root);
	if (*c->key_file) {
		if (!dev_netkey_load("rbs", c->key_file, &r->key, &r->klen, err))
			goto fail;
	} else if (!c->insecure) {
		g_set_error(err, RBS_ERROR, EACCES,
			    "[rbs] has no key_file: a networked syncd does not run without the field's shared key, "
			    "since anyone on the network could forge or replay time.  Put 16 or more random bytes in a "
			    "file on every node (head -c 32 /dev/urandom > /etc/chorus/network.key, copied to each) "
			    "and set key_file to it; or set insecure = true to run unauthenticated; or enable = false "
			    "for a node alone (docs/deployment.md, \"The network key\")");
		goto fail;
	}
	char pwhy[160];
	if (syncd_allow_parse(c->peers, &r->allow, pwhy, sizeof pwhy) < 0) {
		g_set_error(err, RBS_ERROR, EINVAL, "[rbs] peers: %s", pwhy);
		goto fail;
	}
	r->replay = dev_replay_new((uint32_t)c->max_peers);
	char *boot_path = NULL;
	if (*c->boot_file) {
		boot_path = g_strdup(c->boot_file);
	} else if (g_getenv("STATE_DIRECTORY") && *g_getenv("STATE_DIRECTORY")) {
		gchar **dirs = g_strsplit(g_getenv("STATE_DIRECTORY"), ":", 2);
		boot_path = g_build_filename(dirs[0], "syncd.boot", NULL);
		g_strfreev(dirs);
	}
	r->boot = dev_bootid_next(boot_path, r->boot_note, sizeof r->boot_note);
	if (*r->boot_note)
		g_warning("rbs: %s", r->boot_note);
	else if (!boot_path)
		g_strlcpy(r->boot_note, "no boot file: the boot number is the realtime clock's alone", sizeof r->boot_note);
	g_free(boot_path);
	rbs_core_cfg cc = {
		.self = (uint32_t)c->node,
		.window = (uint32_t)c->rbs_window,
		.reject_k = c->reject_k,
		.wander = c->wander_ppm * 1e-6,
		.max_span_ns = (int64_t)(c->rbs_max_span_s * 1e9),
		.hold_ns = (int64_t)(MAX(10.0, 5.0 * c->report_interval_s) * 1e9),
		.peer_timeout_ns = (int64_t)(c->peer_timeout_s * 1e9),
		.min_rbs = (uint32_t)c->rbs_min,
		.references = (uint32_t)c->rbs_references,
		.path_tolerance_ns = c->path_tolerance_us * 1e3,
		.history_ns = (int64_t)(c->rbs_history_s * 1e9),
		.history_pieces = (uint32_t)c->rbs_history_pieces,
		.history_peers = (uint32_t)c->max_peers,
		.history_every_ns = (int64_t)(c->rbs_history_every_s * 1e9),
	};
	r->core = rbs_core_new(&cc, &why);
	if (!r->core) {
		g_set_error(err, RBS_ERROR, EINVAL, "rbs: %s", why);
		goto fail;
	}
	rbs_mesh_cfg mc = {(uint32_t)c->node, (int64_t)(c->edge_expire_s * 1e9), (int64_t)(c->node_timeout_s * 1e9),
			   SYNC_GRAPH_MAX_HOPS};
	if (c->rbs_advert_hops)
		g_message("rbs: advertisements scoped to %" G_GINT64_FORMAT " hop%s and the path to global ([rbs] advert_hops)",
			  c->rbs_advert_hops, c->rbs_advert_hops == 1 ? "" : "s");
	r->mesh = rbs_mesh_new(&mc);
	if (!syncd_rxf_load_env(r->self, &r->filter, err))
		goto fail;
	if (r->filter) {
		GString *d = g_string_new(NULL);
		syncd_rxf_describe(r->filter, d);
		g_strchomp(d->str);
		g_message("rbs: receive filter %s: %s", g_getenv("CHORUS_RX_FILTER"), d->str);
		g_string_free(d, TRUE);
	}
	if (open_socket(r, err) < 0)
		goto fail;
	if (r->filter)
		attach_kernel_filter(r);
	r->io = g_unix_fd_source_new(r->fd, G_IO_IN);
	g_source_set_callback(r->io, (GSourceFunc)(void (*)(void))on_readable, r, NULL);
	g_source_attach(r->io, r->ctx);
	if (c->rbs_beacon)
		r->t_beacon = arm(r, c->beacon_interval_s, on_beacon);
	r->t_report = arm(r, c->report_interval_s, on_report);
	r->t_advert = arm(r, c->advert_interval_s, on_advert);
	return r;
fail:
	syncd_rbs_free(r);
	return NULL;
}

void syncd_rbs_free(syncd_rbs *r)
{
	if (!r)
		return;
	GSource *src[] = {r->io, r->t_beacon, r->t_report, r->t_advert};
	for (size_t i = 0; i < G_N_ELEMENTS(src); i++)
		if (src[i] && !g_source_is_destroyed(src[i]))
			g_source_destroy(src[i]);
	if (r->io)
		g_source_unref(r->io);
	if (r->fd >= 0)
		close(r->fd);
	rbs_core_free(r->core);
	rbs_mesh_free(r->mesh);
	if (r->heard)
		g_hash_table_destroy(r->heard);
	syncd_rxf_free(r->filter);
	syncd_allow_free(r->allow);
	dev_replay_free(r->replay);
	g_free(r->key);
	g_free(r);
}

rbs_core *syncd_rbs_core(syncd_rbs *r)
{
	return r ? r->core : NULL;
}

const rbs_mesh *syncd_rbs_mesh(const syncd_rbs *r)
{
	return r ? r->mesh : NULL;
}

/* TRUE when the definition of global by `root` has reached us; the
 * definition in *def when def is not NULL. */
static gboolean global_def(syncd_rbs *r, uint32_t root, sync_conv *def)
{
	GArray *tmp = g_array_new(FALSE, FALSE, sizeof(sync_ticker_entry));
	rbs_mesh_entries(r->mesh, root, NULL, tmp, NULL, NULL);
	gboolean have = FALSE;
	for (guint i = 0; i < tmp->len; i++) {
		const sync_ticker_entry *e = &g_array_index(tmp, sync_ticker_entry, i);
		if (e->to.kind == SYNC_KIND_GLOBAL) {
			have = TRUE;
			if (def)
				*def = e->conv;
		}
	}
	g_array_free(tmp, TRUE);
	return have;
}

static gboolean global_reached(syncd_rbs *r, uint32_t root)
{
	return global_def(r, root, NULL);
}

/* While we follow a remote root whose global we know, note our conversion
 * to it once a second: the line global continues along if we become root. */
static void note_continuation(syncd_rbs *r, int64_t now_ns)
{
	if (syncd_root_node(r->root) == r->self || !syncd_root_have_global(r->root) || now_ns - r->cont_ns < 1000000000)
		return;
	r->cont_ns = now_ns;
	size_t n;
	sync_ticker_entry *e = syncd_conversions_ticker(r->pairs, r->root, r->core, r->mesh, now_ns, &n);
	syncd_continuation c;
	char why[200];
	if (syncd_continuation_measure(e, n, r->self, syncd_root_node(r->root), now_ns, &c, why, sizeof why) == 0)
		syncd_root_offer_continuation(r->root, &c);
	else
		g_debug("rbs: no conversion to global to continue along: %s", why);
	g_free(e);
}

/* How long a continuation may be old for this node to claim the root over
 * a live timescale (it is noted once a second while we follow). */
#define CLAIM_CONTINUATION_AGE_NS 5000000000LL

/* The root rule (docs/protocol.md "Global time"): the candidate is the
 * configured root while it is alive, else the lowest live node — but only
 * a node that defines global holds the timescale, so
 *  - a candidate that defines it is the root;
 *  - while the candidate does not (it has just started, or it is listening)
 *    the lowest live node that does stays the root, so no one loses global;
 *  - this node, the candidate, claims the root when it has a fresh
 *    continuation of the live timescale (continuing it), or when no one
 *    defines global and it has listened long enough (a new timescale).
 * RBS_NO_NODE: no change yet (listening). */
static uint32_t choose_root(syncd_rbs *r, int64_t now_ns)
{
	uint32_t cand = rbs_mesh_root(r->mesh, syncd_root_preferred(r->root), now_ns);
	gboolean self_defines = syncd_root_node(r->root) == r->self && syncd_root_have_global(r->root);
	uint32_t dmin = rbs_mesh_lowest_definer(r->mesh, now_ns);
	if (self_defines && (dmin == RBS_NO_NODE || r->self < dmin))
		dmin = r->self;
	if (cand == r->self) {
		if (self_defines)
			return r->self;
		if (dmin == RBS_NO_NODE)
			return now_ns >= r->listen_until_ns ? r->self : RBS_NO_NODE; /* still listening: no change */
		const syncd_continuation *c = syncd_root_continuation(r->root);
		if (c->valid && c->via_root == dmin && now_ns - c->cpu0_ns <= CLAIM_CONTINUATION_AGE_NS &&
		    syncd_root_node(r->root) == dmin && syncd_root_have_global(r->root))
			return r->self;
		return dmin; /* follow the live timescale until we can continue it */
	}
	if (cand == dmin || dmin == RBS_NO_NODE || global_reached(r, cand))
		return cand;
	return dmin;
}

void syncd_rbs_tick(syncd_rbs *r, int64_t now_ns)
{
	note_continuation(r, now_ns);
	guint gone = rbs_core_expire(r->core, now_ns);
	if (gone)
		g_message("rbs: %u neighbour%s fell silent; their fits are forgotten", gone, gone == 1 ? "" : "s");
	if (rbs_mesh_expire(r->mesh, now_ns))
		syncd_notify_call(&r->on_change, SYNCD_CHANGED);
	uint32_t chosen = choose_root(r, now_ns);
	if (chosen == RBS_NO_NODE)
		return;
	sync_conv def;
	gboolean have = chosen != r->self && global_def(r, chosen, &def);
	syncd_root_follow(r->root, chosen, have, now_ns);
	if (have) /* followers keep the history of the root's steered definition */
		syncd_root_note_definition(r->root, &def);
}

static gint by_node(gconstpointer a, gconstpointer b)
{
	guint x = GPOINTER_TO_UINT(*(gconstpointer *)a), y = GPOINTER_TO_UINT(*(gconstpointer *)b);
	return x < y ? -1 : x > y;
}

void syncd_rbs_describe_peers(syncd_rbs *r, int64_t now_ns, GString *out)
{
	GPtrArray *ids = g_ptr_array_new();
	GHashTableIter it;
	gpointer k, v;
	g_hash_table_iter_init(&it, r->heard);
	while (g_hash_table_iter_next(&it, &k, &v))
		g_ptr_array_add(ids, k);
	g_ptr_array_sort(ids, by_node);
	for (guint i = 0; i < ids->len; i++) {
		const heard_addr *ha = g_hash_table_lookup(r->heard, g_ptr_array_index(ids, i));
		char a[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &ha->addr, a, sizeof a);
		g_string_append_printf(out, "node=%u addr=%s age_s=%.1f%s\n", GPOINTER_TO_UINT(g_ptr_array_index(ids, i)), a,
				       (double)(now_ns - ha->at_ns) * 1e-9, r->klen ? " authenticated" : "");
	}
	g_ptr_array_free(ids, TRUE);
}

void syncd_rbs_describe(syncd_rbs *r, int64_t now_ns, GString *out)
{
	const syncd_config *c = r->cfg;
	g_string_append_printf(out, "rbs node%u on %s:%" G_GINT64_FORMAT "%s%s%s\n", r->self, c->rbs_address,
			       c->rbs_port, *c->rbs_interface ? " dev " : "", c->rbs_interface,
			       r->klen ? " authenticated (HMAC-SHA256)" : " UNAUTHENTICATED (insecure = true)");
	char *peers = syncd_allow_format(r->allow);
	g_string_append_printf(out, "peers %s senders=%zu max_peers=%" G_GINT64_FORMAT " boot=%" G_GUINT64_FORMAT "%s%s\n",
			       peers, dev_replay_senders(r->replay), c->max_peers, r->boot, *r->boot_note ? " note: " : "",
			       r->boot_note);
	g_free(peers);
	g_string_append(out, "refused:");
	for (int v = REPLAY_SEEN; v < REPLAY_N; v++)
		g_string_append_printf(out, " replay_%s=%" G_GUINT64_FORMAT, dev_replay_name(v), r->replays[v]);
	g_string_append_printf(out, " not_in_peers=%" G_GUINT64_FORMAT " left_out=%" G_GUINT64_FORMAT "\n", r->not_allowed,
			       r->left_out);
	if (*r->last_refused)
		g_string_append_printf(out, "last refused packet: %s\n", r->last_refused);
	syncd_root_describe(r->root, now_ns, out);
	syncd_root_describe_utc(r->root, out);
	if (c->rbs_references)
		g_string_append_printf(out, "references %" G_GINT64_FORMAT ": this node %s, and fits only to its own references\n",
				       c->rbs_references,
				       rbs_core_beacons(r->core, now_ns) ? "beacons (a reference here or of a neighbour)"
									 : "does not beacon");
	if (c->rbs_advert_hops)
		g_string_append_printf(out,
				       "advert_hops %" G_GINT64_FORMAT ": path to global %u conversion%s, scoped_out=%" G_GUINT64_FORMAT
				       " (conversions not re-advertised)\n",
				       c->rbs_advert_hops, r->route_len, r->route_len == 1 ? "" : "s", r->scoped_out);
	g_string_append_printf(out,
			       "packets: rx_beacon=%" G_GUINT64_FORMAT " rx_report=%" G_GUINT64_FORMAT
			       " rx_advert=%" G_GUINT64_FORMAT " own_beacons=%" G_GUINT64_FORMAT " tx_beacon=%" G_GUINT64_FORMAT
			       " tx_report=%" G_GUINT64_FORMAT " tx_advert=%" G_GUINT64_FORMAT " tx_bytes=%" G_GUINT64_FORMAT "\n",
			       r->rx[RBS_BEACON], r->rx[RBS_REPORT], r->rx[RBS_ADVERT], r->rx[0], r->tx[RBS_BEACON],
			       r->tx[RBS_REPORT], r->tx[RBS_ADVERT], r->tx_bytes);
	g_string_append(out, "dropped:");
	for (int i = 0; i < N_BAD; i++)
		g_string_append_printf(out, " %s=%" G_GUINT64_FORMAT, bad_names[i], r->bad[i]);
	g_string_append_printf(out, " no_tstamp=%" G_GUINT64_FORMAT " send_errors=%" G_GUINT64_FORMAT "\n",
			       r->no_tstamp, r->send_errors);
	if (*r->last_bad)
		g_string_append_printf(out, "last bad packet: %s\n", r->last_bad);
	if (r->filter)
		syncd_rxf_describe(r->filter, out);
	rbs_core_describe(r->core, now_ns, out);
	rbs_mesh_describe(r->mesh, now_ns, out);
}
