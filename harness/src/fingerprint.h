// The hardware/software fingerprint stored with every run.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "perfbench/backend.h"

namespace perfbench {

// Host facts (CPU, ISA flags, memory, OS, compiler, perfbench build) plus
// whatever the backend adds (torch, CUDA, cuDNN, NCCL, GPUs).
nlohmann::json CaptureFingerprint(const DeviceBackend& backend);

// Fields that define the hardware: runs whose values differ here are not
// comparable without --across-hardware.
const std::vector<std::string>& HardwareFields();

// Stable 16-hex-digit FNV-1a hash of the hardware fields' canonical JSON.
std::string ProfileKey(const nlohmann::json& fingerprint);

}  // namespace perfbench
