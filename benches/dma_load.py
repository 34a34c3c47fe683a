"""Background host→device copies from pinned memory at a set rate, for
measuring what a concurrent DMA stream costs a fetch into pinned host
memory (issue 38's question: why the decoder's fetch runs slower beside its
own uploads than alone).

    python3 benches/dma_load.py GBPS SECONDS

Copies 128 MiB blocks from one pinned buffer (1 GiB, cycled) to device
memory with CuPy, sleeping between blocks to hold about GBPS; prints the
rate it held.
"""
import sys
import time

import cupy

rate = float(sys.argv[1]) * 1e9
seconds = float(sys.argv[2])
block = 128 << 20
host = cupy.cuda.alloc_pinned_memory(1 << 30)
dev = cupy.cuda.alloc(1 << 30)
stream = cupy.cuda.Stream(non_blocking=True)
start = time.perf_counter()
moved = 0
while time.perf_counter() - start < seconds:
    at = moved % (1 << 30)
    cupy.cuda.runtime.memcpyAsync(dev.ptr + at, host.ptr + at, block,
                                  cupy.cuda.runtime.memcpyHostToDevice, stream.ptr)
    stream.synchronize()
    moved += block
    ahead = moved / rate - (time.perf_counter() - start)
    if ahead > 0:
        time.sleep(ahead)
print(f"dma_load: {moved / (time.perf_counter() - start) / 1e9:.1f} GB/s for {seconds} s")
