/* writeback: writers paused by dirty-page throttling (balance_dirty_pages).
 *
 * The tracepoint fires just before the writer sleeps `pause` jiffies; when the
 * kernel decides not to sleep it reports pause <= 0, which adds nothing. User
 * space converts jiffies to milliseconds with the kernel's HZ.
 *
 * Overhead: two per-CPU array additions per event, ~20-40 ns; the event fires
 * at most once per throttled writer per pause (milliseconds apart).
 *
 * Costs are estimates of the program itself; bench/overhead.py measures the
 * slowdown of whole workloads, tracepoint dispatch included.
 */

#define T_PAUSE_JIFFIES 0
#define T_PAUSES 1

BPF_PERCPU_ARRAY(totals, u64, 2);
BPF_PERCPU_ARRAY(drops, u64, 1);

TRACEPOINT_PROBE(writeback, balance_dirty_pages)
{
    long pause = args->pause;
    if (pause <= 0)
        return 0;
    int idx = T_PAUSE_JIFFIES;
    u64 *t = totals.lookup(&idx);
    if (t)
        *t += (u64)pause;
    idx = T_PAUSES;
    t = totals.lookup(&idx);
    if (t)
        (*t)++;
    return 0;
}
