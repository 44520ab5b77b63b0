// Big scratch (a table load's queue, 14 MB; its delta, 18 MB; the IPv6
// change list) can stay in malloc's heap once glibc has raised its mmap
// threshold. The Fib frees such scratch, notes it here, and hands the heap
// back to the system with malloc_trim at the next Commit() boundary: at its
// end (its own scratch) or at the start of the next (the previous delta,
// dropped by the caller once pushed).
#pragma once

#include <malloc.h>

#include <cstddef>

namespace fibnic {

class HeapTrim {
 public:
  // Scratch lists up to this many entries keep their capacity for the next
  // batch; larger ones are freed (and trimmed).
  static constexpr size_t kKeepScratch = 4096;

  void Request() { pending_ = true; }
  void Now() {
    if (!pending_) return;
    malloc_trim(0);
    pending_ = false;
  }

 private:
  bool pending_ = false;
};

}  // namespace fibnic
