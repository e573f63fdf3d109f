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
