#include "utf8.h"

namespace perfbench {
namespace {

// The length of the well-formed sequence at `i`, or, when it is ill-formed,
// minus the length of its maximal subpart (at least 1 byte).
int SequenceAt(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = b(i);
  if (lead < 0x80) return 1;
  int len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    if (lead == 0xE0) lo = 0xA0;  // no overlong forms
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    if (lead == 0xF0) lo = 0x90;  // no overlong forms
    if (lead == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;
  }
  for (int k = 1; k < len; ++k) {
    if (i + k >= s.size()) return -k;
    const unsigned char c = b(i + k);
    const bool ok = k == 1 ? (c >= lo && c <= hi) : (c >= 0x80 && c <= 0xBF);
    if (!ok) return -k;
  }
  return len;
}

}  // namespace

std::optional<size_t> InvalidUtf8At(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const int n = SequenceAt(s, i);
    if (n < 0) return i;
    i += static_cast<size_t>(n);
  }
  return std::nullopt;
}

std::string ValidUtf8(std::string_view s) {
  if (!InvalidUtf8At(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const int n = SequenceAt(s, i);
    if (n > 0) {
      out.append(s.substr(i, static_cast<size_t>(n)));
      i += static_cast<size_t>(n);
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      i += static_cast<size_t>(-n);
    }
  }
  return out;
}

}  // namespace perfbench
