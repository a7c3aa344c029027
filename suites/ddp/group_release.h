// How a rank lets go of its c10d process group at the end of a variant.
#pragma once

#include <torch/csrc/distributed/c10d/Backend.hpp>

namespace perfbench::ddp {

// A healthy group is shut down (Backend::shutdown: NCCL flushes and destroys
// its communicators, as Python's destroy_process_group does, instead of
// warning "destroy_process_group() was not called" from its destructor); a
// broken one (a peer died or hung, a collective timed out) is aborted, since
// a shutdown could wait for the missing peer. A shutdown that throws is
// followed by an abort. `pg` is released either way; a null `pg` is left alone.
void ReleaseGroup(c10::intrusive_ptr<c10d::Backend>& pg, bool broken);

}  // namespace perfbench::ddp
