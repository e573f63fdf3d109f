/* vmscan: time tasks spend reclaiming memory themselves, and kswapd wake-ups.
 *
 * Direct reclaim runs in the allocating task, so begin and end are in its
 * context and the current tid keys the start time. The same holds for the
 * optional events, each compiled in only when tracefs lists it:
 *
 * - HAVE_MEMCG_RECLAIM (mm_vmscan_memcg_reclaim_begin/end): a task charging a
 *   memory cgroup at its limit (v1 limit_in_bytes, v2 memory.max/high)
 *   reclaims the group's pages synchronously. That is direct reclaim too, but
 *   the global events never fire for it and /proc/vmstat does not count it,
 *   so without these a job squeezed by its cgroup shows no reclaim at all.
 *   Kept in its own totals so user space can tell limit reclaim from global.
 * - HAVE_NODE_RECLAIM (mm_vmscan_node_reclaim_begin/end): zone_reclaim_mode
 *   reclaim of the local node in the allocating task, before the slow path.
 *
 * The softlimit events are left out on purpose: v1 soft-limit reclaim runs
 * inside global reclaim (kswapd or direct reclaim already timed here), so
 * counting it would count the same time twice.
 *
 * Each kind keeps its own start map so that one kind nested in another (an
 * allocation inside memcg reclaim entering direct reclaim) does not lose the
 * outer start time.
 *
 * Overhead: each begin does one shared-hash update, each end one lookup+delete
 * and two per-CPU array increments; kswapd wake-up one per-CPU array
 * increment. Estimated cost: ~50-150 ns per event; reclaim itself costs
 * microseconds to milliseconds, so this is noise.
 *
 * Costs are estimates of the program itself; bench/overhead.py measures the
 * slowdown of whole workloads, tracepoint dispatch included.
 */

#define T_RECLAIM_NS 0
#define T_RECLAIMS 1
#define T_KSWAPD_WAKEUPS 2
#define T_MEMCG_NS 3
#define T_MEMCGS 4
#define T_NODE_NS 5
#define T_NODES 6
#define N_TOTALS 7

BPF_HASH(start, u32, u64, 4096);
BPF_PERCPU_ARRAY(totals, u64, N_TOTALS);
BPF_PERCPU_ARRAY(drops, u64, 1);

static __always_inline void add(int idx, u64 v)
{
    u64 *t = totals.lookup(&idx);
    if (t)
        *t += v;
}

static __always_inline void drop(void)
{
    int zero = 0;
    u64 *d = drops.lookup(&zero);
    if (d)
        (*d)++;
}

TRACEPOINT_PROBE(vmscan, mm_vmscan_direct_reclaim_begin)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    u64 ts = bpf_ktime_get_ns();
    if (start.update(&tid, &ts) < 0)
        drop();
    return 0;
}

TRACEPOINT_PROBE(vmscan, mm_vmscan_direct_reclaim_end)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    u64 *tsp = start.lookup(&tid);
    if (!tsp)
        return 0;
    u64 delta = bpf_ktime_get_ns() - *tsp;
    start.delete(&tid);
    add(T_RECLAIM_NS, delta);
    add(T_RECLAIMS, 1);
    return 0;
}

TRACEPOINT_PROBE(vmscan, mm_vmscan_wakeup_kswapd)
{
    add(T_KSWAPD_WAKEUPS, 1);
    return 0;
}

#ifdef HAVE_MEMCG_RECLAIM
BPF_HASH(memcg_start, u32, u64, 4096);

TRACEPOINT_PROBE(vmscan, mm_vmscan_memcg_reclaim_begin)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    u64 ts = bpf_ktime_get_ns();
    if (memcg_start.update(&tid, &ts) < 0)
        drop();
    return 0;
}

TRACEPOINT_PROBE(vmscan, mm_vmscan_memcg_reclaim_end)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    u64 *tsp = memcg_start.lookup(&tid);
    if (!tsp)
        return 0;
    u64 delta = bpf_ktime_get_ns() - *tsp;
    memcg_start.delete(&tid);
    add(T_MEMCG_NS, delta);
    add(T_MEMCGS, 1);
    return 0;
}
#endif

#ifdef HAVE_NODE_RECLAIM
BPF_HASH(node_start, u32, u64, 4096);

TRACEPOINT_PROBE(vmscan, mm_vmscan_node_reclaim_begin)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    u64 ts = bpf_ktime_get_ns();
    if (node_start.update(&tid, &ts) < 0)
        drop();
    return 0;
}

TRACEPOINT_PROBE(vmscan, mm_vmscan_node_reclaim_end)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    u64 *tsp = node_start.lookup(&tid);
    if (!tsp)
        return 0;
    u64 delta = bpf_ktime_get_ns() - *tsp;
    node_start.delete(&tid);
    add(T_NODE_NS, delta);
    add(T_NODES, 1);
    return 0;
}
#endif
