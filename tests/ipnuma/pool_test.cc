// Where exportable memory and neighbour MACs come from: u-dma-buf sysfs
// attributes, reserved ranges, file-backed pools.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ipnuma/pool.h"
#include "tests/support/temp_dir.h"

namespace fibnic::ipnuma {
namespace {

namespace fs = std::filesystem;

class PoolTest : public ::testing::Test {
 protected:
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  fibnic::testing::TempDir dir_;
};

TEST_F(PoolTest, UdmabufSysfsAttributes) {
  Write("phys_addr", "0x1806a0000\n");
  Write("size", "1048576\n");
  auto p = BufferPool::FromUdmabuf(dir_.path());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->phys_base, 0x1806a0000ull);
  EXPECT_EQ(p->size, 1048576u);
  EXPECT_TRUE(p->Contains(0x1806a0000ull, 1048576));
  EXPECT_TRUE(p->Contains(0x1807a0000ull - 64, 64));
  EXPECT_FALSE(p->Contains(0x1807a0000ull - 64, 128));
  EXPECT_FALSE(p->Contains(0x18069ffc0ull, 64));
  EXPECT_FALSE(p->Contains(0x1806a0000ull, ~0ull));  // no wrap-around
}

TEST_F(PoolTest, UdmabufErrorsNameTheFile) {
  Write("phys_addr", "0x1806a0000\n");
  Write("size", "lots\n");
  auto p = BufferPool::FromUdmabuf(dir_.path());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("size: 'lots' is not a number"), std::string::npos) << p.status().message();
  fs::remove(dir_ / "size");
  p = BufferPool::FromUdmabuf(dir_.path());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("/size"), std::string::npos) << p.status().message();
  Write("phys_addr", "0x1806a0010\n");
  Write("size", "4096\n");
  p = BufferPool::FromUdmabuf(dir_.path());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("64-byte aligned"), std::string::npos) << p.status().message();
}

TEST_F(PoolTest, ReservedAndFilePools) {
  EXPECT_FALSE(BufferPool::Reserved(0x1000, 0).ok());
  EXPECT_FALSE(BufferPool::Reserved(0xFFFFFFFFF000ull, 0x2000).ok());  // beyond 48 bits
  Write("buf", std::string(8192, '\0'));
  auto p = BufferPool::FromFile(dir_ / "buf", 0x40000000);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->size, 8192u);
  EXPECT_TRUE(p->Contains(0x40001000, 0x1000));
  EXPECT_FALSE(p->Contains(0x40001000, 0x1040));
}

}  // namespace
}  // namespace fibnic::ipnuma
