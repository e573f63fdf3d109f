/* What the collector programs share, included by each that needs it (bcc compiles them
 * one by one, with this folder on the include path: bpf/loader.py's cflags()).
 *
 * Only plain functions belong here: bcc rewrites map accesses (`m.lookup(...)`) in the
 * program's own file alone, so each program keeps its maps and the `drops` counter.
 */

#define MAX_SLOT 63

/* floor(log2(v)) with 0 folded into slot 0: slot k holds [2^k, 2^(k+1)) ns, the slots
 * user space reads back (bpf/hist.py). */
static __always_inline u32 log2_slot(u64 v)
{
    u32 s = bpf_log2l(v);
    s = s ? s - 1 : 0;
    return s > MAX_SLOT ? MAX_SLOT : s;
}

/* The span of time a hot-path program measures, written by user space
 * (bpf/loader.py, Collector.set_gate) into the program's one-element `gate`
 * array. Events count while open_ns <= now < shut_ns (shut_ns 0: no end).
 * A freshly loaded program's gate is all zero: it measures from the start,
 * with no end, as a program that is never duty-cycled does.
 *
 * Stamps a program keeps between events (a request's issue, a thread's
 * wakeup) that are older than open_ns were taken in an earlier span, before
 * the program was detached: what happened to the request or the thread
 * while nothing watched is unknown, so such a stamp starts nothing. */
struct span {
    u64 open_ns;
    u64 shut_ns;
};

static __always_inline int in_span(const struct span *s, u64 now)
{
    return now >= s->open_ns && (s->shut_ns == 0 || now < s->shut_ns);
}
