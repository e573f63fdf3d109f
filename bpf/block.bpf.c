/* block: block request latency (issue -> complete), ops and bytes per device.
 *
 * Overhead: block_rq_issue does one shared-hash update keyed (dev, sector);
 * block_rq_complete does one hash lookup+delete, one per-CPU hash
 * lookup-or-init for the latency slot and one for the device counters.
 * Estimated cost: ~150-300 ns per request (two or three hash operations), paid
 * once per block request, far below the cost of the request itself.
 *
 * The start map is shared (not per-CPU) because a request may complete on a
 * different CPU than the one that issued it. Counting maps are per-CPU so
 * increments need no atomics. Only tracepoint arguments are read.
 *
 * Costs are estimates of the program itself; bench/overhead.py measures the
 * slowdown of whole workloads, tracepoint dispatch included.
 */

#define MAX_SLOT 63

/* floor(log2(v)) with 0 folded into slot 0: slot k holds [2^k, 2^(k+1)) ns. */
static __always_inline u32 log2_slot(u64 v)
{
    u32 s = bpf_log2l(v);
    s = s ? s - 1 : 0;
    return s > MAX_SLOT ? MAX_SLOT : s;
}

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

BPF_HASH(start, struct rq_key, u64, 16384);
BPF_PERCPU_HASH(lat, struct lat_key, u64, 4096);
BPF_PERCPU_HASH(stats, u32, struct dev_stats, 1024);
BPF_PERCPU_ARRAY(drops, u64, 1);

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
    struct rq_key k = {.dev = args->dev, .sector = args->sector};
    u64 ts = bpf_ktime_get_ns();
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
    struct rq_key k = {.dev = dev, .sector = args->sector};
    u64 *tsp = start.lookup(&k);
    if (tsp) {
        u64 delta = bpf_ktime_get_ns() - *tsp;
        start.delete(&k);
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
