/* filemap: pages added to the page cache, i.e. page-cache misses.
 *
 * The event is per folio; a folio of order n holds 2^n pages, so pages are
 * counted, not folios, to keep the figure comparable across kernels.
 *
 * Overhead: one per-CPU array addition per added folio, ~20 ns; no map can
 * fill, so nothing is ever dropped.
 *
 * Costs are estimates of the program itself; bench/overhead.py measures the
 * slowdown of whole workloads, tracepoint dispatch included.
 */

BPF_PERCPU_ARRAY(misses, u64, 1);
BPF_PERCPU_ARRAY(drops, u64, 1);

TRACEPOINT_PROBE(filemap, mm_filemap_add_to_page_cache)
{
    int zero = 0;
    u64 *c = misses.lookup(&zero);
    if (c)
        *c += 1ULL << (args->order & 31);
    return 0;
}
