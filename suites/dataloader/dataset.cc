#include "dataset.h"

#include "common/synthetic_images.h"

#ifdef PERFBENCH_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#endif

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <jpeglib.h>
#include <torch/cuda.h>
#include <nlohmann/json.hpp>

#include "perfbench/posix_fs.h"

namespace perfbench::dataloader {
namespace {

constexpr char kMagic[8] = {'P', 'B', 'S', 'H', 'A', 'R', 'D', '1'};
constexpr int kFormat = 1;

uint64_t Fnv1a(const std::string& data) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// libjpeg reports errors through a callback that must not return: longjmp out.
struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};
void OnJpegError(j_common_ptr info) {
  auto* err = reinterpret_cast<JpegError*>(info->err);
  (*info->err->format_message)(info, err->message);
  std::longjmp(err->jump, 1);
}
void OnJpegWarning(j_common_ptr info, int level) {
  // Corrupt-data warnings (level -1) are errors for us: a damaged file must not decode quietly.
  if (level < 0) OnJpegError(info);
}

nlohmann::json ManifestHead(const DatasetSpec& s) {
  return {{"format", kFormat}, {"samples", s.samples}, {"image", s.image}, {"classes", s.classes},
          {"shard_size", s.shard_size}, {"quality", s.quality}, {"seed", s.seed}};
}

bool ValidManifest(const std::string& dir, const DatasetSpec& spec, DatasetFiles* out) {
  const std::string path = dir + "/manifest.json";
  if (!posix::Exists(path)) return false;
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(Slurp(path));
  } catch (const std::exception&) {
    return false;
  }
  const nlohmann::json head = ManifestHead(spec);  // named: items() of a temporary dangles before C++23
  for (const auto& [k, v] : head.items())
    if (!m.contains(k) || m[k] != v) return false;
  if (!m.contains("shards") || !m["shards"].is_array()) return false;
  out->dir = dir;
  out->shards.clear();
  for (const auto& sh : m["shards"]) out->shards.push_back(dir + "/" + sh.at("file").get<std::string>());
  return true;
}

void WriteShard(const std::string& path, const std::vector<std::vector<uint8_t>>& jpegs,
                const std::vector<uint32_t>& labels) {
  std::string buf(kMagic, 8);
  const uint32_t count = static_cast<uint32_t>(jpegs.size()), zero = 0;
  buf.append(reinterpret_cast<const char*>(&count), 4);
  buf.append(reinterpret_cast<const char*>(&zero), 4);
  uint64_t offset = 16 + 16ULL * count;
  for (size_t i = 0; i < jpegs.size(); ++i) {
    const uint32_t len = static_cast<uint32_t>(jpegs[i].size());
    buf.append(reinterpret_cast<const char*>(&offset), 8);
    buf.append(reinterpret_cast<const char*>(&len), 4);
    buf.append(reinterpret_cast<const char*>(&labels[i]), 4);
    offset += len;
  }
  for (const auto& j : jpegs) buf.append(reinterpret_cast<const char*>(j.data()), j.size());
  std::ofstream out(path, std::ios::binary);
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  if (!out.flush()) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace

std::string DatasetSpec::Name() const {
  return "synth-v" + std::to_string(kFormat) + "-n" + std::to_string(samples) + "-i" + std::to_string(image) + "-c" +
         std::to_string(classes) + "-q" + std::to_string(quality) + "-s" + std::to_string(seed);
}


std::vector<uint8_t> EncodeJpeg(const uint8_t* rgb, int width, int height, int quality) {
  jpeg_compress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = OnJpegError;
  unsigned char* out = nullptr;
  unsigned long size = 0;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    std::free(out);
    throw std::runtime_error(std::string("JPEG encode failed: ") + err.message);
  }
  jpeg_create_compress(&cinfo);
  jpeg_mem_dest(&cinfo, &out, &size);
  cinfo.image_width = static_cast<JDIMENSION>(width);
  cinfo.image_height = static_cast<JDIMENSION>(height);
  cinfo.input_components = 3;
  cinfo.in_color_space = JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(rgb + static_cast<size_t>(cinfo.next_scanline) * width * 3);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<uint8_t> bytes(out, out + size);
  jpeg_destroy_compress(&cinfo);
  std::free(out);
  return bytes;
}

void DecodeJpeg(const uint8_t* data, size_t size, int width, int height, uint8_t* out) {
  jpeg_decompress_struct cinfo{};
  JpegError err{};
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = OnJpegError;
  err.mgr.emit_message = OnJpegWarning;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    throw std::runtime_error(err.message);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  if (jpeg_read_header(&cinfo, TRUE) != JPEG_HEADER_OK) {
    jpeg_destroy_decompress(&cinfo);
    throw std::runtime_error("not a JPEG image");
  }
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  if (static_cast<int>(cinfo.output_width) != width || static_cast<int>(cinfo.output_height) != height ||
      cinfo.output_components != 3) {
    const std::string got = std::to_string(cinfo.output_width) + "x" + std::to_string(cinfo.output_height);
    jpeg_destroy_decompress(&cinfo);
    throw std::runtime_error("image is " + got + ", expected " + std::to_string(width) + "x" + std::to_string(height));
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = out + static_cast<size_t>(cinfo.output_scanline) * width * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
}

DatasetFiles EnsureDataset(const std::string& root, const DatasetSpec& spec) {
  DatasetFiles files;
  const std::string dir = root + "/" + spec.Name();
  if (ValidManifest(dir, spec, &files)) return files;
  if (auto err = posix::MakeDirs(root); !err.empty())
    throw std::runtime_error("cannot create data directory '" + root + "': " + err);
  const std::string tmp = dir + ".tmp-" + std::to_string(getpid());
  posix::RemoveTree(tmp);
  if (auto err = posix::MakeDirs(tmp); !err.empty()) throw std::runtime_error("cannot create '" + tmp + "': " + err);
  nlohmann::json manifest = ManifestHead(spec);
  manifest["shards"] = nlohmann::json::array();
  std::vector<uint8_t> rgb;
  for (int64_t first = 0, shard = 0; first < spec.samples; first += spec.shard_size, ++shard) {
    std::vector<std::vector<uint8_t>> jpegs;
    std::vector<uint32_t> labels;
    for (int64_t i = first; i < std::min(spec.samples, first + spec.shard_size); ++i) {
      int64_t label = 0;
      common::SynthesizeImage(spec.seed, i, spec.image, spec.classes, &rgb, &label);
      jpegs.push_back(EncodeJpeg(rgb.data(), static_cast<int>(spec.image), static_cast<int>(spec.image), spec.quality));
      labels.push_back(static_cast<uint32_t>(label));
    }
    const std::string name = fmt::format("shard-{:05d}.pbs", shard);
    WriteShard(tmp + "/" + name, jpegs, labels);
    const std::string bytes = Slurp(tmp + "/" + name);
    const std::string hash = fmt::format("{:016x}", Fnv1a(bytes));
    manifest["shards"].push_back({{"file", name}, {"bytes", bytes.size()}, {"fnv1a", hash}});
  }
  {
    std::ofstream m(tmp + "/manifest.json");
    m << manifest.dump(2) << "\n";
    if (!m.flush()) throw std::runtime_error("cannot write '" + tmp + "/manifest.json'");
  }
  posix::RemoveTree(dir);  // an invalid leftover
  if (std::rename(tmp.c_str(), dir.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    posix::RemoveTree(tmp);
    // Another process may have finished first: use its dataset if valid.
    if (ValidManifest(dir, spec, &files)) return files;
    throw std::runtime_error("cannot move the dataset into '" + dir + "': " + why);
  }
  if (!ValidManifest(dir, spec, &files)) throw std::runtime_error("dataset in '" + dir + "' did not validate");
  files.generated = true;
  return files;
}

ShardReader::ShardReader(const DatasetFiles& files) : paths_(files.shards) {
  for (size_t s = 0; s < paths_.size(); ++s) {
    const std::string& p = paths_[s];
    const int fd = open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open shard '" + p + "': " + std::strerror(errno));
    fds_.push_back(fd);
    struct stat st{};
    fstat(fd, &st);
    sizes_.push_back(st.st_size);
    char head[16];
    if (pread(fd, head, 16, 0) != 16 || std::memcmp(head, kMagic, 8) != 0)
      throw std::runtime_error("shard '" + p + "' is corrupt or truncated (bad header)");
    uint32_t count = 0;
    std::memcpy(&count, head + 8, 4);
    std::vector<char> index(16ULL * count);
    if (pread(fd, index.data(), index.size(), 16) != static_cast<ssize_t>(index.size()))
      throw std::runtime_error("shard '" + p + "' is truncated (index of " + std::to_string(count) + " records)");
    for (uint32_t i = 0; i < count; ++i) {
      Record r{static_cast<uint32_t>(s), 0, 0, 0};
      std::memcpy(&r.offset, index.data() + 16 * i, 8);
      std::memcpy(&r.length, index.data() + 16 * i + 8, 4);
      std::memcpy(&r.label, index.data() + 16 * i + 12, 4);
      records_.push_back(r);
    }
  }
}

ShardReader::~ShardReader() {
  for (int fd : fds_) close(fd);
}

void ShardReader::Read(int64_t index, std::vector<uint8_t>* bytes, int64_t* label) const {
  const Record& r = records_.at(static_cast<size_t>(index));
  const std::string& path = paths_[r.shard];
  if (static_cast<int64_t>(r.offset + r.length) > sizes_[r.shard])
    throw std::runtime_error("shard '" + path + "' is truncated: record " + std::to_string(index) + " ends at byte " +
                             std::to_string(r.offset + r.length) + " of " + std::to_string(sizes_[r.shard]));
  bytes->resize(r.length);
  size_t done = 0;
  while (done < r.length) {
    const ssize_t n = pread(fds_[r.shard], bytes->data() + done, r.length - done, static_cast<off_t>(r.offset + done));
    if (n <= 0) throw std::runtime_error("cannot read shard '" + path + "': " + (n < 0 ? std::strerror(errno) : "EOF"));
    done += static_cast<size_t>(n);
  }
  *label = r.label;
}

ImageDataset::ImageDataset(std::shared_ptr<const ShardReader> reader, int64_t stored, int64_t crop, uint64_t seed)
    : reader_(std::move(reader)), stored_(stored), crop_(crop), seed_(seed) {}

torch::data::Example<> ImageDataset::get(size_t index) {
  thread_local std::vector<uint8_t> bytes, rgb;
  int64_t label = 0;
  reader_->Read(static_cast<int64_t>(index), &bytes, &label);
  rgb.resize(static_cast<size_t>(stored_ * stored_ * 3));
  try {
    DecodeJpeg(bytes.data(), bytes.size(), static_cast<int>(stored_), static_cast<int>(stored_), rgb.data());
  } catch (const std::exception& e) {
    throw std::runtime_error("shard '" + reader_->FileOf(static_cast<int64_t>(index)) + "' record " +
                             std::to_string(index) + " does not decode: " + e.what());
  }
  if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
  if (observer_) (*observer_)(index);
  // Augmentation: random crop and horizontal flip, seeded by (seed, epoch, index).
  std::mt19937_64 rng(seed_ ^ (static_cast<uint64_t>(epoch_->load()) << 40) ^ (index * 0x9E3779B97F4A7C15ULL));
  const int64_t y0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(stored_ - crop_ + 1));
  const int64_t x0 = static_cast<int64_t>(rng() % static_cast<uint64_t>(stored_ - crop_ + 1));
  const bool flip = rng() & 1;
  auto hwc = torch::from_blob(rgb.data(), {stored_, stored_, 3}, torch::kUInt8);
  auto img = hwc.slice(0, y0, y0 + crop_).slice(1, x0, x0 + crop_).permute({2, 0, 1}).to(torch::kFloat32);
  if (flip) img = img.flip({2});
  img = (img.div_(255.0f).sub_(0.5f)).div_(0.25f);  // normalise: mean 0.5, std 0.25
  return {img.contiguous(), torch::tensor(label, torch::kInt64)};
}

torch::data::Example<> StackPinned::apply_batch(std::vector<torch::data::Example<>> examples) {
  auto batch = torch::data::transforms::Stack<>().apply_batch(std::move(examples));
  if (pin_) batch = {batch.data.pin_memory(), batch.target.pin_memory()};
  return batch;
}

Pipeline::Pipeline(ImageDataset dataset, int64_t batch, int workers, int prefetch, bool pin, torch::Device device)
    : dataset_(dataset), pin_(pin), device_(device) {
  auto opts = torch::data::DataLoaderOptions().batch_size(static_cast<size_t>(batch)).drop_last(true);
  opts.workers(static_cast<size_t>(workers));
  if (workers > 0) opts.max_jobs(static_cast<size_t>(workers * prefetch));
  const size_t n = *dataset.size();
  // Pinned in the worker that collates (in Next()'s thread when workers is 0).
  loader_ = torch::data::make_data_loader(dataset.map(StackPinned(pin && device.is_cuda())),
                                          torch::data::samplers::RandomSampler(n), opts);
}

// The batch is on the device when the copies queued on the current stream
// are done: an event after them, not a device-wide synchronise.
void Pipeline::WaitForCopies() const {
#ifdef PERFBENCH_WITH_CUDA
  at::cuda::CUDAEvent copied;
  copied.record(at::cuda::getCurrentCUDAStream(device_.index()));
  copied.synchronize();
#else
  torch::cuda::synchronize(device_.index());
#endif
}

torch::data::Example<> Pipeline::Next() {
  if (!it_) {
    it_.emplace(loader_->begin());
  } else {
    ++*it_;
  }
  if (*it_ == loader_->end()) {
    dataset_.set_epoch(++epoch_);
    it_.reset();  // the finished iterator first
    it_.emplace(loader_->begin());
  }
  torch::data::Example<> b = **it_;
  if (device_.is_cuda()) {
    b.data = b.data.to(device_, /*non_blocking=*/pin_);
    b.target = b.target.to(device_, pin_);
    WaitForCopies();
  }
  return b;
}

}  // namespace perfbench::dataloader
