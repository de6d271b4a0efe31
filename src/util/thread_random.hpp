// SPDX-License-Identifier: MIT
#pragma once

#include <random>

namespace hfget::util {

/// This thread's random engine, seeded once from std::random_device. For names that must not collide and for
/// retry jitter, not for secrets. Seeding a random_device per use read the kernel's entropy for every file,
/// 3% of hfget's CPU on a download of 8,000 small files.
inline std::mt19937_64& thread_random() {
  static thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine;
}

}  // namespace hfget::util
