/* vmscan: time tasks spend in direct reclaim, and kswapd wake-ups.
 *
 * Direct reclaim runs in the allocating task, so begin and end are in its
 * context and the current tid keys the start time.
 *
 * Overhead: reclaim begin does one shared-hash update, end one lookup+delete
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

BPF_HASH(start, u32, u64, 4096);
BPF_PERCPU_ARRAY(totals, u64, 3);
BPF_PERCPU_ARRAY(drops, u64, 1);

static __always_inline void add(int idx, u64 v)
{
    u64 *t = totals.lookup(&idx);
    if (t)
        *t += v;
}

TRACEPOINT_PROBE(vmscan, mm_vmscan_direct_reclaim_begin)
{
    u32 tid = (u32)bpf_get_current_pid_tgid();
    u64 ts = bpf_ktime_get_ns();
    if (start.update(&tid, &ts) < 0) {
        int zero = 0;
        u64 *d = drops.lookup(&zero);
        if (d)
            (*d)++;
    }
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
