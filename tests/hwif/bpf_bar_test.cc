// The BAR map backend (hwif/bpf_bar.h) on a bpffs mounted for each test:
// made by OpenFibnicFile for a path there, reopened with its contents, shared
// with every other mapping at once, refused at the wrong size or shape.
// Needs root (mount, BPF maps): a run without it fails, saying so.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "common/mapped_region.h"
#include "device/fibnic_regs.h"
#include "hwif/bpf_bar.h"
#include "hwif/fibnic_device.h"
#include "tests/support/temp_dir.h"

namespace fibnic {
namespace {

class BpfBarTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "needs root: mounts a bpffs and makes BPF maps";
    ASSERT_EQ(::mount("bpf", dir_.path().c_str(), "bpf", 0, nullptr), 0)
        << "cannot mount a bpffs at " << dir_.path() << ": " << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount(dir_.path().c_str());
  }
  std::string Pin(const std::string& name) const { return dir_ / name; }

  testing::TempDir dir_;
  bool mounted_ = false;
};

TEST_F(BpfBarTest, PathOnBpfFsIsAMapThatKeepsItsContents) {
  const auto caps = regs::Caps::Model2Bit();
  const std::string pin = Pin("bar0");
  EXPECT_TRUE(IsBpfFsPath(pin));
  EXPECT_FALSE(IsBpfFsPath(dir_.path() + "/../elsewhere"));
  {
    auto bar = OpenFibnicFile(pin, caps);
    ASSERT_TRUE(bar.ok()) << bar.status().ToString();
    EXPECT_NE(dynamic_cast<BpfBar*>(bar->get()), nullptr);
    EXPECT_EQ((*bar)->size(), caps.bar_bytes());
    EXPECT_EQ(*(*bar)->Read32(regs::kOffId), regs::kId);
    EXPECT_EQ(*(*bar)->Read32(regs::kOffControl), 0u);
    ASSERT_TRUE((*bar)->Write32(regs::kOffSram4 + 4096, 0xA5A5A5A5u).ok());
  }
  // The pin keeps the map: reopened, the write is there and nothing is re-preset.
  auto again = OpenFibnicFile(pin, caps);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*(*again)->Read32(regs::kOffSram4 + 4096), 0xA5A5A5A5u);
  // Another mapping (what fibnic-emu and the tools hold) sees a write at once.
  auto view = MappedRegion::Open(pin);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->size(), caps.bar_bytes());
  ASSERT_TRUE((*again)->Write32(regs::kOffGeneration, 77).ok());
  EXPECT_EQ(view->Read32(regs::kOffGeneration), 77u);
  // The other model's size is refused, naming both sizes.
  auto wrong = OpenFibnicFile(pin, regs::Caps::Model4Bit());
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("expected " + std::to_string(regs::Caps::Model4Bit().bar_bytes())),
            std::string::npos)
      << wrong.status().ToString();
}

TEST_F(BpfBarTest, RefusesAMapThatIsNotABar) {
  bpf_attr attr{};
  attr.map_type = BPF_MAP_TYPE_HASH;
  attr.key_size = 4;
  attr.value_size = 8;
  attr.max_entries = 4;
  const long fd = ::syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  const std::string pin = Pin("hash");
  bpf_attr p{};
  p.pathname = reinterpret_cast<uint64_t>(pin.c_str());
  p.bpf_fd = static_cast<uint32_t>(fd);
  ASSERT_EQ(::syscall(__NR_bpf, BPF_OBJ_PIN, &p, sizeof p), 0) << std::strerror(errno);
  ::close(static_cast<int>(fd));
  auto bar = BpfBar::Open(pin, 4096);
  ASSERT_FALSE(bar.ok());
  EXPECT_NE(bar.status().message().find("is not a BAR map"), std::string::npos) << bar.status().ToString();
  auto missing = BpfBar::Open(Pin("none"), 4096);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace fibnic
