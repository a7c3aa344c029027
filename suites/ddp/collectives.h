// Collective bandwidths exactly as nccl-tests defines them
// (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md):
//   algbw = S / t            S = bytes of the operation's buffer, GB = 1e9 bytes
//   busbw = algbw * F        F: all-reduce 2(n-1)/n; reduce-scatter, all-gather,
//                            all-to-all, scatter, gather (n-1)/n; broadcast,
//                            reduce, send/recv 1
#pragma once

namespace perfbench {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kScatter, kGather, kBroadcast, kReduce, kSendRecv };

// GB/s.
inline double AlgBw(double bytes, double seconds) { return bytes / seconds / 1e9; }

inline double BusBwFactor(Collective op, int n) {
  switch (op) {
    case Collective::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kAllToAll:
    case Collective::kScatter:
    case Collective::kGather:
      return static_cast<double>(n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace perfbench
