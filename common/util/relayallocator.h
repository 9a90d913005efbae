#pragma once

namespace cloop::util {

// Relayed frames are up to 64 KiB each and live for microseconds. Left to
// its defaults, glibc hands the top of the heap back to the kernel whenever
// a free leaves more than its trim threshold there, and the next frame
// faults those pages in again: relaying bulk USB, half of the hub's CPU went
// to brk and page faults (docs/performance.md). This keeps a few MiB of
// freed heap resident and allocates frame-sized buffers from the heap, not
// from fresh mappings. Call first in main, before any thread exists.
void keepRelayBuffersResident();

} // namespace cloop::util
