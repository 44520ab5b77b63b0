// A large array of zeroes whose pages cost memory only once written: mapped
// anonymous and private, so untouched pages are the kernel's shared zero page
// (reading them costs nothing either). The second group byte per /24 (16 MiB,
// once a group id >= 1024 is painted) is written only where routes are, and
// `new T[n]()` would write all of it at construction.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <new>

namespace fibnic {

template <typename T>
struct ZeroPagesDeleter {
  size_t n = 0;
  void operator()(T* p) const { munmap(p, n * sizeof(T)); }
};
template <typename T>
using ZeroPages = std::unique_ptr<T[], ZeroPagesDeleter<T>>;

template <typename T>
ZeroPages<T> MapZeroPages(size_t n) {
  void* p = mmap(nullptr, n * sizeof(T), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  return ZeroPages<T>(static_cast<T*>(p), ZeroPagesDeleter<T>{n});
}

}  // namespace fibnic
