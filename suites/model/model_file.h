// An exported model file (scripts/export-model.py): an AOTInductor package
// (.pt2, a compiled shared library inside a zip) or a TorchScript archive,
// with its example inputs saved beside it (PATH.inputs.pt, torch.save of a
// list of tensors). What perfbench reads before it runs any of the model's
// code: the metadata export-model.py stored in the file (AOTInductor: the
// package's metadata, read from the archive without loading the library;
// TorchScript: the archive's extra file perfbench.json):
//   perfbench.name       the model's name (default: the file's stem)
//   perfbench.batch_dim  the dynamic batch dimension of every input; -1: none
//   perfbench.inputs     the input signature ("f32_Bx3x32x32-i64_Bx128")
//   perfbench.torch      the torch version that exported it
// and, AOTInductor only, AOTI_DEVICE_KEY (cpu or cuda) and AOTI_CPU_ISA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace perfbench::model {

enum class Format { kAotInductor, kTorchScript };

struct ModelFile {
  std::string path;
  Format format = Format::kAotInductor;
  std::string name;           // perfbench.name, else the file's stem
  std::string device = "any"; // the device an AOTInductor package was compiled for; TorchScript: any
  std::string cpu_isa;        // AOTI_CPU_ISA (CPU packages)
  std::string torch_version;  // perfbench.torch; "" when not recorded
  int64_t batch_dim = 0;      // -1: the inputs have no batch dimension
  std::string signature;      // perfbench.inputs
  std::string FormatName() const { return format == Format::kAotInductor ? "AOTInductor" : "TorchScript"; }
  std::string InputsPath() const { return path + ".inputs.pt"; }
};

// The file's stem ("/a/b/mlp.pt2" -> "mlp").
std::string Stem(const std::string& path);
// Reads the metadata without running the model's code. Throws
// std::runtime_error with a one-line reason naming the file (missing,
// unreadable, not a model archive, no perfbench metadata).
ModelFile ReadModelFile(const std::string& path);
// The example inputs saved beside the model, checked against its signature;
// throws std::runtime_error naming the inputs file and what did not match.
std::vector<torch::Tensor> LoadExampleInputs(const ModelFile& model);
// "f32_Bx64": dtype and shape per input, the batch dimension written B,
// inputs joined by '-'.
std::string Signature(const std::vector<torch::Tensor>& inputs, int64_t batch_dim);
// The inputs with `batch` rows along `batch_dim` (cut, or repeated
// cyclically when larger: integer inputs such as token ids stay valid);
// unchanged when batch_dim is -1. Contiguous, on `device`.
std::vector<torch::Tensor> Resize(const std::vector<torch::Tensor>& inputs, int64_t batch_dim, int64_t batch,
                                  const torch::Device& device);
// The batch the examples were saved with (1 without a batch dimension).
int64_t ExampleBatch(const std::vector<torch::Tensor>& inputs, int64_t batch_dim);
// SHA-1 of the file's bytes, hex (what `sha1sum` prints); throws when unreadable.
// Read once per process while the file's inode, size and mtime stay the same
// (a rewrite in place within the filesystem's timestamp granularity and at
// the same size would go unseen).
std::string FileSha1(const std::string& path);
// "2.11.0" from "2.11.0+cu130".
std::string ReleaseOf(const std::string& version);

}  // namespace perfbench::model
