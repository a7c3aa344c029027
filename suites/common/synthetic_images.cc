#include "common/synthetic_images.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace perfbench::common {

void SynthesizeImage(uint64_t seed, int64_t index, int64_t image, int64_t classes, std::vector<uint8_t>* rgb,
                     int64_t* label) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(index));
  const int64_t c = static_cast<int64_t>(rng() % static_cast<uint64_t>(classes));
  *label = c;
  // A class-dependent stripe pattern and colour, a random phase and gradient, and
  // noise: learnable, and JPEG sees edges and texture as in real photos.
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 12);
  const double angle = 3.14159265 * c / classes, freq = 0.15 + 0.05 * (c % 4), phase = 6.283 * u(rng);
  const double base[3] = {60 + 150.0 * ((c * 37) % 10) / 10, 60 + 150.0 * ((c * 53) % 10) / 10,
                          60 + 150.0 * ((c * 71) % 10) / 10};
  const double gx = u(rng) - 0.5, gy = u(rng) - 0.5;
  rgb->resize(static_cast<size_t>(image * image * 3));
  for (int64_t y = 0; y < image; ++y)
    for (int64_t x = 0; x < image; ++x) {
      const double s = std::sin(freq * (x * std::cos(angle) + y * std::sin(angle)) + phase);
      for (int ch = 0; ch < 3; ++ch) {
        double v = base[ch] + 50 * s * (ch == c % 3 ? 1.0 : 0.4) + 40 * (gx * x + gy * y) / image + noise(rng);
        (*rgb)[static_cast<size_t>((y * image + x) * 3 + ch)] = static_cast<uint8_t>(std::clamp(v, 0.0, 255.0));
      }
    }
}

}  // namespace perfbench::common
