#include <gtest/gtest.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "hwif/file_bar.h"
#include "hwif/memory_bar.h"
#include "hwif/recording_bar.h"
#include "tests/support/temp_dir.h"

namespace fibnic {
namespace {

using testing::TempDir;

TEST(MemoryBar, WordWritesAndUnalignedReads) {
  MemoryBar bar(64);
  ASSERT_TRUE(bar.Write32(8, 0x44332211u).ok());
  uint8_t out[3];
  ASSERT_TRUE(bar.Read(9, out, 3).ok());
  EXPECT_EQ(out[0], 0x22);
  EXPECT_EQ(out[1], 0x33);
  EXPECT_EQ(out[2], 0x44);
  EXPECT_EQ(*bar.Read32(8), 0x44332211u);
}

TEST(MemoryBar, RejectsMisalignedAndOutOfRange) {
  MemoryBar bar(64);
  Status st = bar.Write32(2, 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("0x000002"), std::string::npos) << st.ToString();
  st = bar.Write32(64, 1);
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  uint8_t b[8];
  EXPECT_EQ(bar.Read(60, b, 8).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(bar.Write(60, b, 8).code(), StatusCode::kOutOfRange);
}

TEST(RecordingBar, SplitsWritesIntoWordsAndKeepsTailBytes) {
  MemoryBar mem(32);
  ASSERT_TRUE(mem.Write32(4, 0xAABBCCDDu).ok());
  RecordingBar rec(mem);
  const uint8_t src[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_TRUE(rec.Write(0, src, 6).ok());
  ASSERT_EQ(rec.writes().size(), 2u);
  EXPECT_EQ(rec.writes()[0], (BusWrite{0, 0x04030201u}));
  // Tail word: bytes 4,5 new, bytes 6,7 keep 0xBB 0xAA.
  EXPECT_EQ(rec.writes()[1], (BusWrite{4, 0xAABB0605u}));
  EXPECT_EQ(*mem.Read32(4), 0xAABB0605u);
}

TEST(RecordingBar, ReplayRebuildsEachIntermediateState) {
  MemoryBar mem(16);
  RecordingBar rec(mem);
  ASSERT_TRUE(rec.Write32(0, 1).ok());
  ASSERT_TRUE(rec.Write32(4, 2).ok());
  ASSERT_TRUE(rec.Write32(0, 3).ok());
  std::vector<uint8_t> img(16, 0);
  ASSERT_TRUE(rec.Replay(2, img).ok());
  uint32_t w0, w1;
  std::memcpy(&w0, img.data(), 4);
  std::memcpy(&w1, img.data() + 4, 4);
  EXPECT_EQ(w0, 1u);
  EXPECT_EQ(w1, 2u);
  std::vector<uint8_t> all(16, 0);
  ASSERT_TRUE(rec.Replay(3, all).ok());
  EXPECT_EQ(all, mem.bytes());
  EXPECT_EQ(rec.Replay(4, all).code(), StatusCode::kOutOfRange);
}

TEST(RecordingBar, ObserverSeesEveryWriteAndCanFailIt) {
  MemoryBar mem(16);
  std::vector<uint32_t> seen_in_memory;
  RecordingBar rec(mem, [&](const BusWrite& w, size_t index) {
    seen_in_memory.push_back(*mem.Read32(w.offset));  // already applied
    if (index == 1) return Internal("stop at write 1");
    return OkStatus();
  });
  ASSERT_TRUE(rec.Write32(0, 7).ok());
  EXPECT_EQ(rec.Write32(4, 9).code(), StatusCode::kInternal);
  EXPECT_EQ(seen_in_memory, (std::vector<uint32_t>{7, 9}));
}

TEST(FileBar, CreatesWithPresetAndReopensWithContents) {
  TempDir dir;
  const std::string path = dir / "bar";
  {
    auto bar = FileBar::OpenOrCreate(path, 4096, {0x46, 0x49, 0x42, 0x4E});
    ASSERT_TRUE(bar.ok()) << bar.status().ToString();
    EXPECT_EQ((*bar)->size(), 4096u);
    EXPECT_EQ(*(*bar)->Read32(0), 0x4E424946u);
    EXPECT_EQ(*(*bar)->Read32(4), 0u);
    ASSERT_TRUE((*bar)->Write32(100, 0xDEADBEEFu).ok());
    ASSERT_TRUE((*bar)->Flush().ok());
  }
  // The write is in the file, and an existing file is not re-preset.
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(bytes.size(), 4096u);
  uint32_t v;
  std::memcpy(&v, bytes.data() + 100, 4);
  EXPECT_EQ(v, 0xDEADBEEFu);
  auto again = FileBar::OpenOrCreate(path, 4096, {9, 9, 9, 9});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*(*again)->Read32(0), 0x4E424946u);
  EXPECT_EQ(*(*again)->Read32(100), 0xDEADBEEFu);
  // No temporary left behind.
  size_t entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1u);
}

TEST(FileBar, RefusesWrongSizeWithoutTouchingIt) {
  TempDir dir;
  const std::string path = dir / "bar";
  { std::ofstream(path, std::ios::binary) << std::string(100, 'x'); }
  auto bar = FileBar::OpenOrCreate(path, 4096, {});
  ASSERT_FALSE(bar.ok());
  EXPECT_EQ(bar.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(bar.status().message().find("is 100 bytes, expected 4096"), std::string::npos) << bar.status().ToString();
  EXPECT_EQ(std::filesystem::file_size(path), 100u);
}

TEST(FileBar, OpenOfMissingFileNamesIt) {
  TempDir dir;
  auto bar = FileBar::Open(dir / "nope", 4096);
  ASSERT_FALSE(bar.ok());
  EXPECT_NE(bar.status().message().find(dir / "nope"), std::string::npos);
}

TEST(FileBar, WritesAreVisibleToAnotherMappingImmediately) {
  TempDir dir;
  const std::string path = dir / "bar";
  auto bar = FileBar::OpenOrCreate(path, 8192, {});
  ASSERT_TRUE(bar.ok());
  int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* other = ::mmap(nullptr, 8192, PROT_READ, MAP_SHARED, fd, 0);
  ASSERT_NE(other, MAP_FAILED);
  ASSERT_TRUE((*bar)->Write32(4096, 0x12345678u).ok());
  uint32_t v;
  std::memcpy(&v, static_cast<uint8_t*>(other) + 4096, 4);
  EXPECT_EQ(v, 0x12345678u);
  ::munmap(other, 8192);
  ::close(fd);
}

}  // namespace
}  // namespace fibnic
