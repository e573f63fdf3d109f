/* block: block request latency (issue -> complete), ops and bytes per device.
 *
 * Overhead: block_rq_issue reads the clock and claims a start slot for the
 * request: a direct-mapped array entry chosen by a hash of (dev, sector),
 * tagged with both, taken with one compare-and-swap (an inlined array access,
 * no hash walk, no lock). block_rq_complete finds it there, releases it with
 * another compare-and-swap, and does one per-CPU hash lookup for the latency
 * slot and one for the device counters. A request whose slot is held by
 * another request in flight goes to the overflow hash (an insert at issue, a
 * delete at completion); with RQ_SLOTS far above the requests a host keeps in
 * flight that is rare. A slot left behind by a request whose completion never
 * came is taken over once it is STALE_NS old, so slots never leak.
 * Measured (kernel.bpf_stats_enabled, 2-CPU VM, 4 KiB O_DIRECT reads of a
 * loop device): ~290 ns per issue and ~300 ns per completion; with a hash for
 * the starts, ~390 and ~430 ns. Kernels without BPF atomics (before 5.12)
 * get the hash alone (NO_ATOMICS, chosen by the loader when the first load
 * fails).
 *
 * The start slots are shared (not per-CPU) because a request may complete on
 * a different CPU than the one that issued it. Counting maps are per-CPU so
 * increments need no atomics. Only tracepoint arguments are read.
 *
 * bench/overhead.py measures the slowdown of whole workloads, tracepoint
 * dispatch included.
 *
 * Duty cycle (agent/sources/bpf_source.py): user space detaches both programs
 * while the host is healthy and attaches them again for a span (the `gate`,
 * common.h), keeping this object and its maps loaded. Inside a span, starts
 * are recorded and a completion counts its request's bytes and, when its
 * start was recorded in the same span, its latency: a request whose issue
 * was not seen is counted but not timed, as at the collector's first start.
 * A start slot left by an earlier span (its completion came while nothing
 * watched) is free; user space empties the overflow hash before it attaches.
 * Cost of the gate: one array lookup (inlined) and one clock read per event.
 */

#include "common.h"

struct rq_key {
    u32 dev;
    u32 pad;
    u64 sector;
};

struct lat_key {
    u32 dev;
    u32 slot;
};

struct dev_stats {
    u64 read_ops;
    u64 write_ops;
    u64 read_bytes;
    u64 write_bytes;
};

#ifndef NO_ATOMICS
struct rq_start {
    u32 dev;
    u32 pad;
    u64 sector;
    u64 ts; /* 0: free; CLAIMED: being filled in; else the issue time */
};

/* A power of two; tests compile it smaller to force requests into the overflow hash. */
#ifndef RQ_SLOTS
#define RQ_SLOTS 8192
#endif
#define CLAIMED 1
/* A slot this old is a request whose completion was never seen: 30 s. */
#define STALE_NS 30000000000ULL

BPF_ARRAY(slots, struct rq_start, RQ_SLOTS);

static __always_inline u32 slot_of(u32 dev, u64 sector)
{
    /* Requests are at least 8 sectors apart in the common case: drop those bits. */
    u64 h = ((sector >> 3) ^ ((u64)dev << 32)) * 0x9E3779B97F4A7C15ULL;
    return (u32)(h >> 40) & (RQ_SLOTS - 1);
}

/* Take the request's slot; 0 when another request in flight holds it. A start
 * older than `open` is from an earlier span: that slot is free. */
static __always_inline int slot_start(u32 dev, u64 sector, u64 ts, u64 open)
{
    u32 idx = slot_of(dev, sector);
    struct rq_start *e = slots.lookup(&idx);
    if (!e)
        return 0;
    u64 cur = e->ts;
    if (cur > CLAIMED && e->dev == dev && e->sector == sector) {
        /* The same request issued again (a requeue): the start moves, as a
         * hash update would move it. */
        return __sync_val_compare_and_swap(&e->ts, cur, ts) == cur;
    }
    /* Held by a request in flight; another CPU's start may be a little later than ours. */
    if (cur != 0 && (cur == CLAIMED || (cur >= open && (ts < cur || ts - cur <= STALE_NS))))
        return 0;
    if (__sync_val_compare_and_swap(&e->ts, cur, CLAIMED) != cur)
        return 0; /* another CPU took it first */
    e->dev = dev;
    e->sector = sector;
    __sync_val_compare_and_swap(&e->ts, CLAIMED, ts); /* publish, after the tag */
    return 1;
}

/* The request's start from its slot, releasing it; 0 when it is not there. */
static __always_inline u64 slot_end(u32 dev, u64 sector)
{
    u32 idx = slot_of(dev, sector);
    struct rq_start *e = slots.lookup(&idx);
    if (!e)
        return 0;
    u64 cur = e->ts;
    if (cur <= CLAIMED || e->dev != dev || e->sector != sector)
        return 0;
    return __sync_val_compare_and_swap(&e->ts, cur, 0) == cur ? cur : 0;
}
#endif

BPF_HASH(start, struct rq_key, u64, 16384); /* the overflow (or, without atomics, every start) */
BPF_PERCPU_HASH(lat, struct lat_key, u64, 4096);
BPF_PERCPU_HASH(stats, u32, struct dev_stats, 1024);
BPF_PERCPU_ARRAY(drops, u64, 1);
BPF_ARRAY(gate, struct span, 1);

static __always_inline struct span span_now(void)
{
    int zero = 0;
    struct span out = {};
    struct span *s = gate.lookup(&zero);
    if (s)
        out = *s;
    return out;
}

static __always_inline void drop(void)
{
    int zero = 0;
    u64 *d = drops.lookup(&zero);
    if (d)
        (*d)++;
}

/* The operation letter of rwbs: a leading 'F' is a preflush, the op follows it
 * ("FW" preflush write, "FF" pure flush); a lone "F" is a flush too. */
static __always_inline char rw_op(const char *rwbs)
{
    char c = rwbs[0];
    if (c == 'F') {
        char n = rwbs[1];
        return (n == 'R' || n == 'W' || n == 'D') ? n : 'F';
    }
    return c;
}

TRACEPOINT_PROBE(block, block_rq_issue)
{
    if (args->dev == 0)
        return 0;
    char op = rw_op(args->rwbs);
    /* Discards are not data the trainer waits on; their latency would skew
     * the device's figure. */
    if (op != 'R' && op != 'W' && op != 'F')
        return 0;
    u64 ts = bpf_ktime_get_ns();
    struct span s = span_now();
    if (!in_span(&s, ts))
        return 0;
#ifndef NO_ATOMICS
    if (slot_start(args->dev, args->sector, ts, s.open_ns))
        return 0;
#endif
    struct rq_key k = {.dev = args->dev, .sector = args->sector};
    if (start.update(&k, &ts) < 0)
        drop();
    return 0;
}

TRACEPOINT_PROBE(block, block_rq_complete)
{
    if (args->dev == 0)
        return 0;
    char op = rw_op(args->rwbs);
    if (op != 'R' && op != 'W' && op != 'F')
        return 0;
    u32 dev = args->dev;
    u64 now = bpf_ktime_get_ns();
    struct span sp = span_now();
    u64 t0 = 0;
#ifndef NO_ATOMICS
    t0 = slot_end(dev, args->sector);
#endif
    if (!t0) {
        struct rq_key k = {.dev = dev, .sector = args->sector};
        u64 *tsp = start.lookup(&k);
        if (tsp) {
            t0 = *tsp;
            start.delete(&k);
        }
    }
    if (!in_span(&sp, now))
        return 0; /* the start, if any, is released; nothing counts outside the span */
    if (t0 >= sp.open_ns && t0 && now >= t0) {
        u64 delta = now - t0;
        struct lat_key lk = {.dev = dev, .slot = log2_slot(delta)};
        u64 zero64 = 0;
        u64 *c = lat.lookup_or_try_init(&lk, &zero64);
        if (c)
            (*c)++;
        else
            drop();
    }
    if (op == 'F')
        return 0;
    struct dev_stats empty = {};
    struct dev_stats *s = stats.lookup_or_try_init(&dev, &empty);
    if (!s) {
        drop();
        return 0;
    }
    u64 bytes = (u64)args->nr_sector << 9;
    if (op == 'R') {
        s->read_ops++;
        s->read_bytes += bytes;
    } else {
        s->write_ops++;
        s->write_bytes += bytes;
    }
    return 0;
}
