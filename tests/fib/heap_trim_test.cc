// HeapTrim's decision, driven as the Fib and the pipeline drive it: routes
// applied (Worked), the queue drained (Quiet), the stream idle (Idle), big
// scratch freed (Request), a commit boundary (Now). A trickle of changes —
// one per batch, each followed by an idle spell — called malloc_trim after
// every change; it must trim only once enough has changed since the last.
#include "fib/heap_trim.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace fibnic {
namespace {

// One change, its batch drains the queue, then the stream stays idle.
void TrickleOne(HeapTrim& heap) {
  heap.Now();  // the commit's start
  heap.Worked(1);
  heap.Now();  // its end
  heap.Quiet();
  heap.Idle();
}

TEST(HeapTrim, ATrickleTrimsOnlyOnceEnoughHasChanged) {
  HeapTrim heap;
  for (size_t i = 1; i < HeapTrim::kTrimIdle; ++i) TrickleOne(heap);
  EXPECT_EQ(heap.trims(), 0u) << "a trim for fewer than kTrimIdle changes";
  TrickleOne(heap);
  EXPECT_EQ(heap.trims(), 1u);
  // Counted from that trim again.
  for (size_t i = 1; i < HeapTrim::kTrimIdle; ++i) TrickleOne(heap);
  EXPECT_EQ(heap.trims(), 1u);
  TrickleOne(heap);
  EXPECT_EQ(heap.trims(), 2u);
}

TEST(HeapTrim, IdleWithNothingChangedNeverTrims) {
  HeapTrim heap;
  for (int i = 0; i < 100; ++i) heap.Idle();
  EXPECT_EQ(heap.trims(), 0u);
}

TEST(HeapTrim, AChurnsTailIsTrimmedWhenTheStreamGoesIdle) {
  HeapTrim heap;
  heap.Worked(HeapTrim::kTrimIdle);  // a batch below the quiet threshold
  heap.Now();
  heap.Quiet();
  EXPECT_EQ(heap.trims(), 0u) << "kTrimIdle < kTrimQuiet: the queue draining is not enough";
  heap.Idle();
  EXPECT_EQ(heap.trims(), 1u);
  heap.Idle();
  EXPECT_EQ(heap.trims(), 1u) << "nothing changed since";
}

TEST(HeapTrim, ABigBatchTrimsWhenTheQueueDrains) {
  HeapTrim heap;
  heap.Worked(HeapTrim::kTrimQuiet);
  heap.Now();
  EXPECT_EQ(heap.trims(), 0u);
  heap.Quiet();
  EXPECT_EQ(heap.trims(), 1u);
}

TEST(HeapTrim, EveryTrimEveryRoutesAtTheNextCommitBoundary) {
  HeapTrim heap;
  heap.Worked(HeapTrim::kTrimEvery - 1);
  heap.Now();
  EXPECT_EQ(heap.trims(), 0u);
  heap.Worked(1);
  heap.Now();
  EXPECT_EQ(heap.trims(), 1u);
}

TEST(HeapTrim, BigScratchIsTrimmedWhateverTheCount) {
  HeapTrim heap;
  heap.Request();
  heap.Idle();
  EXPECT_EQ(heap.trims(), 1u);
  heap.Worked(1);
  heap.Request();
  heap.Now();
  EXPECT_EQ(heap.trims(), 2u);
}

// glibc's own threshold rises to the size of each mmapped block freed, so
// the second block of that size came from the heap and stayed resident once
// freed. Under the sanitizers malloc is theirs: a test of the release build.
#if !defined(__SANITIZE_ADDRESS__)
TEST(HeapTrim, BigBlocksAreMappedEveryTimeAndGoBackWhenFreed) {
  MapBigBlocks();
  constexpr size_t kBlock = size_t{4} << 20;
  for (int i = 0; i < 3; ++i) {
    const size_t before = mallinfo2().hblkhd;
    auto* p = static_cast<volatile char*>(std::malloc(kBlock));
    ASSERT_NE(p, nullptr);
    p[0] = 1;
    p[kBlock - 1] = 1;
    EXPECT_GE(mallinfo2().hblkhd, before + kBlock) << "block " << i << " came from the heap";
    std::free(const_cast<char*>(p));
    EXPECT_EQ(mallinfo2().hblkhd, before) << "block " << i << " stayed mapped";
  }
}
#endif

}  // namespace
}  // namespace fibnic
