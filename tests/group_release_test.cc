// How a ddp rank lets go of its process group (suites/ddp/group_release.h):
// shut down when healthy, aborted when broken, against a recording fake
// c10d::Backend.
#include "group_release.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace perfbench::ddp {
namespace {

class RecordingBackend final : public c10d::Backend {
 public:
  RecordingBackend(std::vector<std::string>* calls, bool shutdown_throws)
      : Backend(0, 1), calls_(calls), shutdown_throws_(shutdown_throws) {}
  ~RecordingBackend() override { calls_->push_back("destroyed"); }
  const std::string getBackendName() const override { return "recording"; }
  void shutdown() override {
    calls_->push_back("shutdown");
    if (shutdown_throws_) throw std::runtime_error("NCCL communicator is in an error state");
  }
  void abort() override { calls_->push_back("abort"); }

 private:
  std::vector<std::string>* calls_;
  bool shutdown_throws_;
};

c10::intrusive_ptr<c10d::Backend> Make(std::vector<std::string>* calls, bool shutdown_throws = false) {
  return c10::make_intrusive<RecordingBackend>(calls, shutdown_throws);
}

TEST(GroupRelease, AHealthyGroupIsShutDownNotLeftToItsDestructor) {
  std::vector<std::string> calls;
  auto pg = Make(&calls);
  ReleaseGroup(pg, /*broken=*/false);
  EXPECT_FALSE(pg);
  EXPECT_EQ(calls, (std::vector<std::string>{"shutdown", "destroyed"}));
}

TEST(GroupRelease, ABrokenGroupIsAbortedWithoutWaitingForAShutdown) {
  std::vector<std::string> calls;
  auto pg = Make(&calls);
  ReleaseGroup(pg, /*broken=*/true);
  EXPECT_FALSE(pg);
  EXPECT_EQ(calls, (std::vector<std::string>{"abort", "destroyed"}));
}

TEST(GroupRelease, AShutdownThatThrowsIsFollowedByAnAbort) {
  std::vector<std::string> calls;
  auto pg = Make(&calls, /*shutdown_throws=*/true);
  ReleaseGroup(pg, /*broken=*/false);
  EXPECT_FALSE(pg);
  EXPECT_EQ(calls, (std::vector<std::string>{"shutdown", "abort", "destroyed"}));
}

TEST(GroupRelease, NoGroupIsNothingToDo) {
  c10::intrusive_ptr<c10d::Backend> none;
  ReleaseGroup(none, /*broken=*/false);
  EXPECT_FALSE(none);
}

}  // namespace
}  // namespace perfbench::ddp
