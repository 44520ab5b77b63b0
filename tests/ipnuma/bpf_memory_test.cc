// IP-NUMA's memory in BPF maps pinned on a bpffs mounted for each test (the
// XDP receive path reaches only maps): ipnumad's BAR0 (NicMemoryBar over a
// BpfBar) and buffer pool (BufferPool from a pin, or made from pool.size),
// ipnuma-emu's mappings of them (MappedFile, EmuNic). Needs root (mount, BPF
// maps): a run without it fails, saying so.
#include <gtest/gtest.h>
#include <linux/bpf.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "common/mapped_region.h"
#include "device/ipnuma_regs.h"
#include "hwif/bpf_bar.h"
#include "ipnuma/config.h"
#include "ipnuma/emu_nic.h"
#include "ipnuma/nic.h"
#include "ipnuma/nic_memory_bar.h"
#include "tests/ipnuma/peer_state_write.h"
#include "ipnuma/pool.h"
#include "tests/support/temp_dir.h"

namespace fibnic::ipnuma {
namespace {

namespace regs = ::fibnic::ipnuma_regs;

regs::Caps Model() { return {.pages = 64, .pcid_entries = 16, .region_entries = 8}; }
// BAR0 as ipnumad makes it in a map: whole 4 KiB values.
size_t MapBar0Bytes() { return (Model().bar0_bytes() + kBpfBarPage - 1) / kBpfBarPage * kBpfBarPage; }

class BpfMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::geteuid(), 0u) << "needs root: mounts a bpffs and makes BPF maps";
    ASSERT_EQ(::mkdir(Pin("").c_str(), 0700), 0) << std::strerror(errno);
    ASSERT_EQ(::mount("bpf", Pin("").c_str(), "bpf", 0, nullptr), 0)
        << "cannot mount a bpffs at " << Pin("") << ": " << std::strerror(errno);
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount(Pin("").c_str());
  }
  // Pins live in the bpffs; regular files beside it, in the same test directory.
  std::string Pin(const std::string& name) const { return dir_ / ("bpffs/" + name); }
  std::string File(const std::string& name, size_t size) const {
    const std::string path = dir_ / name;
    std::ofstream(path) << std::string(size, '\0');
    return path;
  }
  // A map of another shape than the memory maps, pinned at name.
  void PinMap(const std::string& name, uint32_t value_size, uint32_t entries, uint32_t flags) {
    bpf_attr attr{};
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = value_size;
    attr.max_entries = entries;
    attr.map_flags = flags;
    const long fd = ::syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const std::string pin = Pin(name);
    bpf_attr p{};
    p.pathname = reinterpret_cast<uint64_t>(pin.c_str());
    p.bpf_fd = static_cast<uint32_t>(fd);
    ASSERT_EQ(::syscall(__NR_bpf, BPF_OBJ_PIN, &p, sizeof p), 0) << std::strerror(errno);
    ::close(static_cast<int>(fd));
  }

  testing::TempDir dir_;
  bool mounted_ = false;
};

#define EXPECT_SAYS(status, text) \
  EXPECT_NE((status).message().find(text), std::string::npos) << (status).ToString()

// ipnumad's BAR0 in a map: a write of 1 to PEER_STATE clears the bit in the
// map, where ipnuma-emu reads it; every other word is written as it is.
TEST_F(BpfMemoryTest, NicMemoryBarOverAMapClearsPeerStateOnWriteOfOne) {
  const std::string pin = Pin("a_bar");
  auto map = BpfBar::OpenOrCreate(pin, MapBar0Bytes(), IdentityBlock(Model()));
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  NicMemoryBar bar(std::move(*map));
  auto caps = ProbeNic(bar);  // a map larger than the registers is still the NIC
  ASSERT_TRUE(caps.ok()) << caps.status().ToString();
  EXPECT_EQ(*caps, Model());
  // Another mapping of the map plays the device.
  auto device = BpfBar::Open(pin, MapBar0Bytes()).value();
  ExpectWriteOfOneClearsPeerState(bar, *device);
}

TEST_F(BpfMemoryTest, PoolIsThePinnedMapsSize) {
  ASSERT_TRUE(BpfBar::OpenOrCreate(Pin("pool"), 8 * 4096, {}).ok());
  auto p = BufferPool::FromFile(Pin("pool"), 0x40000000);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->size, 8u * 4096);
  EXPECT_EQ(p->source, "BPF map " + Pin("pool"));
  EXPECT_TRUE(BufferPool::FromFile(Pin("pool"), 0x40000000, 8 * 4096).ok());  // size given, and equal
  auto other = BufferPool::FromFile(Pin("pool"), 0x40000000, 4 * 4096);
  ASSERT_FALSE(other.ok());
  EXPECT_SAYS(other.status(), "pool.size 0x4000 differs from the size of the BPF map pinned at " + Pin("pool"));
}

TEST_F(BpfMemoryTest, PoolMapIsMadeFromSizeWhenNothingIsPinned) {
  const std::string pin = Pin("b_pool");
  auto missing = BufferPool::FromFile(pin, 0x200000000);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_SAYS(missing.status(), "no BPF map is pinned at " + pin + " and pool.size is not set");
  auto odd = BufferPool::FromFile(pin, 0x200000000, 0x1040);
  ASSERT_FALSE(odd.ok());
  EXPECT_SAYS(odd.status(), "pool.size 0x1040 for the BPF map at " + pin + " is not a multiple of 4096");
  auto made = BufferPool::FromFile(pin, 0x200000000, 0x100000);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->size, 0x100000u);
  // Pinned, zeroed, and what ipnuma-emu and the tools map.
  auto view = MappedRegion::Open(pin);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_EQ(view->size(), 0x100000u);
  EXPECT_EQ(view->Read32(0x80000), 0u);
  auto again = BufferPool::FromFile(pin, 0x200000000);  // made once: now its own size
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->size, 0x100000u);
}

TEST_F(BpfMemoryTest, PoolMapOfAnotherShapeIsRefused) {
  PinMap("plain", 4096, 4, 0);                  // not mmapable
  PinMap("small", 64, 64, BPF_F_MMAPABLE);      // values not a page each
  for (const char* name : {"plain", "small"}) {
    auto p = BufferPool::FromFile(Pin(name), 0x40000000);
    ASSERT_FALSE(p.ok()) << name;
    EXPECT_SAYS(p.status(), "BPF map " + Pin(name) + " cannot be the buffer pool: it is not an mmapable array of "
                            "4096-byte values");
  }
}

TEST_F(BpfMemoryTest, RegularFilePoolSizeMustMatchWhenGiven) {
  const std::string f = File("pool", 8192);
  EXPECT_TRUE(BufferPool::FromFile(f, 0x40000000, 8192).ok());
  auto p = BufferPool::FromFile(f, 0x40000000, 4096);
  ASSERT_FALSE(p.ok());
  EXPECT_SAYS(p.status(), "pool.size 0x1000 differs from the size of " + f);
}

TEST_F(BpfMemoryTest, ConfigAllowsSizeForAFilePoolOnly) {
  const std::string base =
      "device: {kind: file, path: /tmp/x.bar}\n"
      "local: {address: 10.0.0.1, netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '02:00:00:00:00:01'}\n"
      "neighbours: {source: static}\npeer_api: {listen: '127.0.0.1:7470'}\n";
  auto file = ParseIpnumadConfig(base + "pool: {kind: file, path: /sys/fs/bpf/p, base: 0x1000, size: 0x100000}\n",
                                 "t.yaml");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->pool.size, 0x100000u);
  auto absent = ParseIpnumadConfig(base + "pool: {kind: file, path: /tmp/p, base: 0x1000}\n", "t.yaml");
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_EQ(absent->pool.size, 0u);
  auto udmabuf = ParseIpnumadConfig(base + "pool: {kind: udmabuf, path: /sys/class/u-dma-buf/u, size: 4096}\n",
                                    "t.yaml");
  ASSERT_FALSE(udmabuf.ok());
  EXPECT_SAYS(udmabuf.status(), "pool.size");
}

// ipnuma-emu's view: read-write, shared with every other mapping of the map,
// the fd kept for an XDP program.
TEST_F(BpfMemoryTest, MappedFileOnAPinSharesTheMapAndKeepsItsFd) {
  const std::string pin = Pin("pool");
  auto owner = BpfBar::OpenOrCreate(pin, 4 * 4096, {});
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  auto m = MappedFile::Open(pin);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ((*m)->size(), 4u * 4096);
  ASSERT_GE((*m)->map_fd(), 0);
  bpf_map_info info{};
  bpf_attr q{};
  q.info.bpf_fd = static_cast<uint32_t>((*m)->map_fd());
  q.info.info_len = sizeof info;
  q.info.info = reinterpret_cast<uint64_t>(&info);
  ASSERT_EQ(::syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &q, sizeof q), 0) << std::strerror(errno);
  EXPECT_EQ(info.max_entries, 4u);
  // A write through it is seen by a second mapping, and the other way round.
  std::memcpy((*m)->data() + 3 * 4096 + 8, "\x11\x22\x33\x44", 4);
  auto view = MappedRegion::Open(pin);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->Read32(3 * 4096 + 8), 0x44332211u);
  ASSERT_TRUE((*owner)->Write32(4096, 0xCAFEF00Du).ok());
  uint32_t got = 0;
  std::memcpy(&got, (*m)->data() + 4096, 4);
  EXPECT_EQ(got, 0xCAFEF00Du);
  // A regular file has no map fd.
  auto f = MappedFile::Open(File("plain", 4096));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->map_fd(), -1);
}

TEST_F(BpfMemoryTest, MappedFileRefusesAMapOfAnotherShapeOrNone) {
  PinMap("plain", 4096, 4, 0);
  PinMap("small", 64, 64, BPF_F_MMAPABLE);
  for (const char* name : {"plain", "small"}) {
    auto m = MappedFile::Open(Pin(name));
    ASSERT_FALSE(m.ok()) << name;
    EXPECT_SAYS(m.status(), "BPF map " + Pin(name) + " is not an mmapable array of 4096-byte values");
  }
  auto none = MappedFile::Open(Pin("none"), 4096);  // a map is never made here, whatever the size
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  // A bpffs refuses names with a dot with EPERM: the error says why.
  auto dotted = MappedFile::Open(Pin("a.bar"));
  ASSERT_FALSE(dotted.ok());
  EXPECT_SAYS(dotted.status(), "a bpffs refuses names with a '.'");
}

// The emulator on BAR0 and pool maps (as ipnumad makes them), pages in a file:
// the map fds the XDP step needs are there.
TEST_F(BpfMemoryTest, EmuNicOpensBar0AndPoolMaps) {
  ASSERT_TRUE(BpfBar::OpenOrCreate(Pin("a_bar"), MapBar0Bytes(), IdentityBlock(Model())).ok());
  ASSERT_TRUE(BufferPool::FromFile(Pin("a_pool"), 0x100000000, 0x100000).ok());
  auto nic = EmuNic::Open({Pin("a_bar"), dir_ / "a.pages", Pin("a_pool"), 0x100000000});
  ASSERT_TRUE(nic.ok()) << nic.status().ToString();
  EXPECT_EQ((*nic)->caps(), Model());
  EXPECT_GE((*nic)->bar0_map_fd(), 0);
  EXPECT_GE((*nic)->pool_map_fd(), 0);
  EXPECT_NE((*nic)->bar0_map_fd(), (*nic)->pool_map_fd());
  // BAR0 at exactly the CAPS size is not what ipnumad makes in a map.
  ASSERT_TRUE(BpfBar::OpenOrCreate(Pin("b_bar"), MapBar0Bytes() + kBpfBarPage, IdentityBlock(Model())).ok());
  auto wrong = EmuNic::Open({Pin("b_bar"), dir_ / "b.pages", Pin("a_pool"), 0x100000000});
  ASSERT_FALSE(wrong.ok());
  EXPECT_SAYS(wrong.status(), "CAPS say " + std::to_string(MapBar0Bytes()));
}

}  // namespace
}  // namespace fibnic::ipnuma
