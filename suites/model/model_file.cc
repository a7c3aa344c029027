#include "model_file.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <stdexcept>

#include <c10/util/hash.h>
#include <caffe2/serialize/inline_container.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#include <torch/serialize.h>

#include "perfbench/posix_fs.h"

namespace perfbench::model {
namespace {

using Metadata = std::map<std::string, std::string>;

[[noreturn]] void Fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("model file " + path + ": " + what);
}

// The first line of a library error (c10::Error carries a backtrace).
std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

bool IsZip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

// An AOTInductor package holds <archive>/archive_format = "pt2".
bool IsAotPackage(caffe2::serialize::PyTorchStreamReader& zip) {
  if (!zip.hasRecord("archive_format")) return false;
  auto [data, size] = zip.getRecord("archive_format");
  return std::string(static_cast<const char*>(data.get()), size) == "pt2";
}

Metadata AotMetadata(const std::string& path) {
  Metadata out;
  for (const auto& [k, v] : torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(path, "model"))
    out[k] = v;
  return out;
}

// TorchScript: export-model.py stores the metadata as the extra file perfbench.json.
Metadata TorchScriptMetadata(caffe2::serialize::PyTorchStreamReader& zip, const std::string& path) {
  if (!zip.hasRecord("extra/perfbench.json"))
    Fail(path, "a TorchScript archive without perfbench's metadata (extra/perfbench.json): export it with "
               "scripts/export-model.py");
  auto [data, size] = zip.getRecord("extra/perfbench.json");
  const auto j = nlohmann::json::parse(std::string(static_cast<const char*>(data.get()), size), nullptr, false);
  if (!j.is_object()) Fail(path, "extra/perfbench.json is not a JSON object");
  Metadata out;
  for (const auto& [k, v] : j.items())
    if (v.is_string()) out[k] = v.get<std::string>();
  return out;
}

std::string Get(const Metadata& m, const std::string& key, const std::string& fallback = "") {
  auto it = m.find(key);
  return it == m.end() ? fallback : it->second;
}

void FillFromMetadata(const Metadata& m, ModelFile& f) {
  f.name = Get(m, "perfbench.name", Stem(f.path));
  f.torch_version = Get(m, "perfbench.torch");
  f.signature = Get(m, "perfbench.inputs");
  if (f.signature.empty()) Fail(f.path, "no input signature (perfbench.inputs): export it with scripts/export-model.py");
  const std::string dim = Get(m, "perfbench.batch_dim", "0");
  try {
    f.batch_dim = std::stoll(dim);
  } catch (const std::exception&) {
    Fail(f.path, "perfbench.batch_dim '" + dim + "' is not an integer");
  }
  if (f.format == Format::kAotInductor) {
    f.device = Get(m, "AOTI_DEVICE_KEY", "cpu");
    f.cpu_isa = Get(m, "AOTI_CPU_ISA");
  }
}

const char* DtypeName(torch::ScalarType t) {
  switch (t) {
    case torch::kFloat: return "f32";
    case torch::kDouble: return "f64";
    case torch::kHalf: return "f16";
    case torch::kBFloat16: return "bf16";
    case torch::kLong: return "i64";
    case torch::kInt: return "i32";
    case torch::kShort: return "i16";
    case torch::kChar: return "i8";
    case torch::kByte: return "u8";
    case torch::kBool: return "bool";
    default: return "other";
  }
}

}  // namespace

std::string Stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  if (auto dot = base.find('.'); dot != std::string::npos && dot > 0) base = base.substr(0, dot);
  return base.empty() ? "model" : base;
}

ModelFile ReadModelFile(const std::string& path) {
  ModelFile f;
  f.path = path;
  if (!posix::Exists(path)) Fail(path, "no such file");
  if (!IsZip(path)) Fail(path, "not an exported model (neither an AOTInductor .pt2 package nor a TorchScript archive)");
  Metadata m;
  try {
    caffe2::serialize::PyTorchStreamReader zip(path);
    f.format = IsAotPackage(zip) ? Format::kAotInductor : Format::kTorchScript;
    m = f.format == Format::kAotInductor ? AotMetadata(path) : TorchScriptMetadata(zip, path);
  } catch (const std::exception& e) {  // c10::Error is a std::exception
    const std::string what = FirstLine(e.what());
    if (what.rfind("model file ", 0) == 0) throw;
    Fail(path, "unreadable archive (" + what.substr(0, what.find(". ")) + ")");  // miniz adds advice after its first sentence
  }
  FillFromMetadata(m, f);
  return f;
}

std::string Signature(const std::vector<torch::Tensor>& inputs, int64_t batch_dim) {
  std::string out;
  for (const auto& t : inputs) {
    if (!out.empty()) out += '-';
    out += DtypeName(t.scalar_type());
    out += '_';
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d > 0) out += 'x';
      out += d == batch_dim ? std::string("B") : std::to_string(t.size(d));
    }
    if (t.dim() == 0) out += "scalar";
  }
  return out;
}

std::vector<torch::Tensor> LoadExampleInputs(const ModelFile& model) {
  const std::string path = model.InputsPath();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("inputs file " + path + ": no such file (export-model.py saves it beside the model)");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<torch::Tensor> out;
  try {
    const auto value = torch::pickle_load(bytes);
    if (!value.isList() && !value.isTuple()) throw std::runtime_error("not a list of tensors");
    for (const auto& v : value.isList() ? value.toListRef().vec() : value.toTupleRef().elements().vec()) {
      if (!v.isTensor()) throw std::runtime_error("an element is not a tensor");
      out.push_back(v.toTensor());
    }
  } catch (const std::exception& e) {
    throw std::runtime_error("inputs file " + path + ": unreadable (" + FirstLine(e.what()) + ")");
  }
  for (const auto& t : out)
    if (model.batch_dim >= t.dim())
      throw std::runtime_error(fmt::format("inputs file {}: an input of {} dimensions has no batch dimension {}", path,
                                           t.dim(), model.batch_dim));
  if (const std::string sig = Signature(out, model.batch_dim); sig != model.signature)
    throw std::runtime_error("inputs file " + path + ": inputs " + sig + " do not match the model's " + model.signature);
  return out;
}

int64_t ExampleBatch(const std::vector<torch::Tensor>& inputs, int64_t batch_dim) {
  return batch_dim < 0 || inputs.empty() ? 1 : inputs.front().size(batch_dim);
}

std::vector<torch::Tensor> Resize(const std::vector<torch::Tensor>& inputs, int64_t batch_dim, int64_t batch,
                                  const torch::Device& device) {
  std::vector<torch::Tensor> out;
  for (const auto& t : inputs) {
    torch::Tensor x = t;
    if (batch_dim >= 0 && t.size(batch_dim) != batch) {
      const auto rows = torch::arange(batch, torch::kLong).remainder(t.size(batch_dim));
      x = t.index_select(batch_dim, rows);
    }
    out.push_back(x.to(device).contiguous());
  }
  return out;
}

std::string FileSha1(const std::string& path) {
  // Every variant of a model (scenarios, batches) asks; a file of hundreds
  // of MB is read once per process unless it changed (size, mtime, inode).
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw std::runtime_error("model file " + path + ": cannot be read");
  const std::string key = fmt::format("{}\n{}:{}:{}.{}", path, st.st_ino, st.st_size, st.st_mtim.tv_sec,
                                      st.st_mtim.tv_nsec);
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(key); it != known.end()) return it->second;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("model file " + path + ": cannot be read");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return known[key] = c10::sha1(bytes).str();
}

std::string ReleaseOf(const std::string& version) { return version.substr(0, version.find('+')); }

}  // namespace perfbench::model
