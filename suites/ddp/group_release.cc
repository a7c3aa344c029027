#include "group_release.h"

#include <exception>

namespace perfbench::ddp {

void ReleaseGroup(c10::intrusive_ptr<c10d::Backend>& pg, bool broken) {
  if (!pg) return;
  if (!broken) {
    try {
      pg->shutdown();
      pg.reset();
      return;
    } catch (const std::exception&) {
      // Fall through: a group that cannot shut down is aborted.
    }
  }
  try {
    pg->abort();
  } catch (const std::exception&) {
    // Nothing more to do at tear-down: the group is dropped below.
  }
  pg.reset();
}

}  // namespace perfbench::ddp
