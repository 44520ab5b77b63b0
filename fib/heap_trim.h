// Big scratch (a table load's queue, 14 MB; its delta, 18 MB; the IPv6
// change list) would stay in malloc's heap once glibc raised its mmap
// threshold — it raises it to the size of each mmapped block freed, up to
// 32 MB — and a heap fragmented by the routes allocated between such blocks
// cannot give them back whole. So the daemon fixes the threshold at start
// (MapBigBlocks): every block of kMmapThreshold or more is mmapped and goes
// back to the system when freed. BIRD loading a full table in 12 s (batches
// and a queue 40k deep) left fibnicd 94 MB resident with glibc's moving
// threshold and 82 MB with this one, its peak 102 MB and 89 MB
// (bench/bird), for about 10% more CPU (page faults on blocks mapped anew).
// The Fib still frees such scratch, notes it here, and trims at the next
// Commit() boundary: at its end (its own scratch) or at the start of the
// next (the previous delta, dropped by the caller once pushed).
//
// Route churn leaves free memory behind too, outside the Fib: the daemon's
// update queue and batches, freed in other threads' arenas, and the RIB's
// and the kernel source's grown tables. Nothing returns it to the system by itself
// (glibc trims only the top of the main heap): a full table's load left 25 MB
// of free heap resident, a peer loss and return 60 MB (bench/sources/route_mem.sh).
// So every kTrimEvery route changes a trim is due too: malloc_trim walks
// every arena's free chunks, 100 ms at worst for a million scattered free
// chunks on the loaded 2-core development machine, against ~6 s of CPU
// for that many routes (under 2%; a commit of a few
// routes never trims by itself). The churn after the last such trim (up to
// 128k routes' garbage: a peer loss of 353k left 20-30 MB) is handed back
// when the stream goes quiet: the daemon calls Quiet() once its queue is
// empty, which trims if kTrimQuiet routes changed since the last trim, and
// Idle() once the queue has stayed empty for a while (fibnicd/pipeline.cc,
// kIdleTrim), which trims if kTrimIdle routes changed since the last trim:
// the tail of a churn after that trim, and what was freed after the last
// batch (the batch itself, the pushed delta, the sources' scratch) — 4-7 MB
// resident after a full table's load, a peer loss or its return before it.
// Not for fewer: a trickle of changes (one every few seconds, each batch
// followed by an idle spell) trimmed after each change, a walk of every
// arena's free chunks each time for the garbage of one route.
#pragma once

#include <malloc.h>

#include <cstddef>

namespace fibnic {

// Called once at start, before the daemon allocates much.
inline void MapBigBlocks() {
  constexpr int kMmapThreshold = 256 * 1024;
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
}

class HeapTrim {
 public:
  // Scratch lists up to this many entries keep their capacity for the next
  // batch; larger ones are freed (and trimmed).
  static constexpr size_t kKeepScratch = 4096;

  static constexpr size_t kTrimEvery = size_t{1} << 17;

  void Request() { pending_ = true; }
  // n routes were applied (upserted or deleted).
  void Worked(size_t n) {
    worked_ += n;
    if (worked_ >= kTrimEvery) pending_ = true;
  }
  static constexpr size_t kTrimQuiet = size_t{1} << 14;
  void Quiet() {
    if (worked_ >= kTrimQuiet) pending_ = true;
    Now();
  }
  // 1024 routes' garbage is a few hundred KB at most (70 B a pending update,
  // its batch and delta words): less is not worth a walk of the free
  // chunks (up to 100 ms with a full table's heap); a trickle of one change
  // every 3 s now trims once in ~50 min. A churn's tail below it after a
  // periodic trim (under 1% of 128k boundaries) stays until the next trim;
  // big scratch (Request) is trimmed whatever the count.
  static constexpr size_t kTrimIdle = 1024;
  void Idle() {
    if (worked_ >= kTrimIdle) pending_ = true;
    Now();
  }
  void Now() {
    if (!pending_) return;
    malloc_trim(0);
    pending_ = false;
    worked_ = 0;
    ++trims_;
  }
  // malloc_trim calls so far.
  size_t trims() const { return trims_; }

 private:
  bool pending_ = false;
  size_t worked_ = 0;  // routes applied since the last trim
  size_t trims_ = 0;
};

}  // namespace fibnic
