// Process memory from the kernel: peak resident set size.
#pragma once

#include <cstdint>

namespace perfbench {

// VmHWM from /proc/self/status in bytes; -1 where unavailable.
int64_t PeakRssBytes();
// Resets VmHWM to the current RSS (writes "5" to /proc/self/clear_refs, Linux
// >= 4.0). Returns false where the kernel refuses; the peak then covers the
// whole process lifetime.
bool ResetPeakRss();

}  // namespace perfbench
