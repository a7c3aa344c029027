// An image dataset on disk for the dataloader suite: JPEG samples (libjpeg-
// turbo) with labels in shard files, generated deterministically on first use
// into a cache directory and reused afterwards.
//
// Layout: <root>/synth-v1-n<samples>-i<image>-c<classes>-q<quality>-s<seed>/
//   shard-00000.pbs ...   "PBSHARD1", u32 count, u32 0, count x {u64 offset,
//                         u32 length, u32 label}, then the JPEG bytes
//   manifest.json         written last: parameters, shard files, sizes, FNV-1a
// A directory without a manifest (an interrupted generation) or with one for
// other parameters is regenerated, into a temporary directory renamed into
// place. Files that no longer match their manifest (truncated, corrupted) are
// reported with their name when read; they are never silently rewritten.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace perfbench::dataloader {

struct DatasetSpec {
  int64_t samples = 512;
  int64_t image = 40;  // stored width = height; crops are smaller
  int64_t classes = 10;
  int64_t shard_size = 64;
  int quality = 90;
  uint64_t seed = 42;
  std::string Name() const;
};

struct DatasetFiles {
  std::string dir;
  std::vector<std::string> shards;  // full paths
  bool generated = false;           // false: reused
};

// Generates the dataset under `root` unless a valid one is there. Throws
// std::runtime_error naming the path when it cannot write.
DatasetFiles EnsureDataset(const std::string& root, const DatasetSpec& spec);

// Encodes RGB (h x w x 3) as JPEG; decodes into `out` (h x w x 3), throwing
// std::runtime_error with libjpeg's message on corrupt input.
std::vector<uint8_t> EncodeJpeg(const uint8_t* rgb, int width, int height, int quality);
void DecodeJpeg(const uint8_t* data, size_t size, int width, int height, uint8_t* out);

// Reads records from shard files (pread: safe from many threads).
class ShardReader {
 public:
  explicit ShardReader(const DatasetFiles& files);  // throws, naming a bad file
  ~ShardReader();
  int64_t size() const { return static_cast<int64_t>(records_.size()); }
  // The JPEG bytes and label of sample `index`; throws naming the file.
  void Read(int64_t index, std::vector<uint8_t>* bytes, int64_t* label) const;
  const std::string& FileOf(int64_t index) const { return paths_[records_[index].shard]; }

 private:
  struct Record {
    uint32_t shard;
    uint64_t offset;
    uint32_t length, label;
  };
  std::vector<std::string> paths_;
  std::vector<int> fds_;
  std::vector<int64_t> sizes_;
  std::vector<Record> records_;
};

// torch::data dataset: read, decode, random crop, flip, normalise.
class ImageDataset : public torch::data::datasets::Dataset<ImageDataset> {
 public:
  ImageDataset(std::shared_ptr<const ShardReader> reader, int64_t stored, int64_t crop, uint64_t seed);
  torch::data::Example<> get(size_t index) override;
  torch::optional<size_t> size() const override { return static_cast<size_t>(reader_->size()); }
  // Augmentation draws depend on (seed, epoch, index) only, not on which worker runs.
  void set_epoch(int64_t epoch) { epoch_->store(epoch); }
  // Called with every index decoded (tests: each exactly once per epoch).
  void set_observer(std::function<void(size_t)> f) { observer_ = std::make_shared<std::function<void(size_t)>>(std::move(f)); }
  // Extra time per sample (tests: an artificially slow loader).
  void set_delay(std::chrono::microseconds d) { delay_ = d; }

 private:
  std::shared_ptr<const ShardReader> reader_;
  int64_t stored_, crop_;
  uint64_t seed_;
  std::shared_ptr<std::atomic<int64_t>> epoch_ = std::make_shared<std::atomic<int64_t>>(0);
  std::shared_ptr<std::function<void(size_t)>> observer_;
  std::chrono::microseconds delay_{0};
};

// Stack collation that also pins the batch when asked: it runs in the
// DataLoader worker that collates (torch::data cannot map a second batch
// transform after Stack: map()'s type check needs a value_type it lacks).
class StackPinned : public torch::data::transforms::Collation<torch::data::Example<>> {
 public:
  explicit StackPinned(bool pin) : pin_(pin) {}
  torch::data::Example<> apply_batch(std::vector<torch::data::Example<>> examples) override;

 private:
  bool pin_;
};

// torch::data's DataLoader over an ImageDataset (Stack collation, a seeded
// RandomSampler, drop_last, worker threads, max_jobs = workers x prefetch),
// with epochs that wrap and, on a GPU, the copy to the device. With `pin`
// the workers pin each batch as they make it (the consumer's wait holds no
// extra copy) and the copy is non-blocking, waited for on an event after it
// rather than by a device-wide synchronise.
class Pipeline {
 public:
  Pipeline(ImageDataset dataset, int64_t batch, int workers, int prefetch, bool pin, torch::Device device);
  // The next batch, on the device; a new epoch (new order, new augmentation)
  // starts when one ends.
  torch::data::Example<> Next();
  int64_t epoch() const { return epoch_; }

 private:
  void WaitForCopies() const;
  using Loader = torch::data::StatelessDataLoader<torch::data::datasets::MapDataset<ImageDataset, StackPinned>,
                                                  torch::data::samplers::RandomSampler>;
  ImageDataset dataset_;  // shares the epoch counter with the loader's copy
  bool pin_;
  torch::Device device_;
  std::unique_ptr<Loader> loader_;
  std::optional<torch::data::Iterator<torch::data::Example<>>> it_;
  int64_t epoch_ = 0;
};

}  // namespace perfbench::dataloader
