// PEER_STATE reset on reprovisioning (docs/contract/IPNUMA.md, "Peer down"):
// ipnumad writes 1 to PEER_STATE[i] bit0 when it (re)provisions a peer whose
// stream the NIC shows DOWN — once the peer grants its mapping again, when
// the PC ID entry is (re)written, when a new mapping is granted — always
// after the entry is VALID and before pages are written. The NICs are in
// memory behind RecordingBars (the RuleChecker checks every write); the
// device's part (setting DOWN, clearing it when written 1) is played by the
// test. NicMemoryBar, the file backend's view of that write, is checked
// here (over a BPF map in bpf_memory_test); ipnuma-emu taking it as a reset
// is in emu_nic_test.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "hwif/file_bar.h"
#include "ipnuma/nic_memory_bar.h"
#include "tests/ipnuma/peer_state_write.h"
#include "tests/ipnuma/two_nics.h"

namespace fibnic::ipnuma::testing {
namespace {

namespace fs = std::filesystem;

class PeerResetTest : public TwoNicTest {
 protected:
  DesiredState DesiredB() { return {{PeerOf(*a_)}, {Export("rx", kPoolB + 0x1000, 0x4000, "10.0.0.1/32")}, {}}; }
  void StartBoth(std::vector<MappingSpec> a_maps) {
    ASSERT_TRUE(bench_.Start(*b_, DesiredB()).ok());
    ASSERT_TRUE(bench_.Start(*a_, DesiredState{{PeerOf(*b_)}, {}, a_maps}).ok());
  }
  // The device marks the stream to PC ID id down (retry limit passed).
  void DeviceMarksDown(uint16_t id) {
    const uint32_t down = regs::kPeerStateDown;
    ASSERT_TRUE(a_->mem->Write32(regs::PeerStateOffset(id), down).ok());
  }
  // Indices of A's recorded bus writes to PEER_STATE[id] (value 1), and of
  // the first write into the page map.
  std::vector<size_t> ResetWrites(uint16_t id) const {
    std::vector<size_t> out;
    const auto& w = a_->rec->writes();
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i].offset == regs::PeerStateOffset(id)) {
        EXPECT_EQ(w[i].value, regs::kPeerStateDown) << "write " << i;
        out.push_back(i);
      }
    }
    return out;
  }
  size_t FirstPagemapWrite() const {
    const auto& w = a_->rec->writes();
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i].offset >= regs::kOffPagemap) return i;
    }
    return w.size();
  }
  bool PeerShownDown() {
    const nlohmann::json snap = a_->svc->Snapshot();
    for (const auto& p : snap["peers"]) {
      if (p["name"] == "b") return p["down"].get<bool>();
    }
    return false;
  }
};

TEST_F(PeerResetTest, DownPeerIsResetOnlyOnceItGrantsItsMappingAgain) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 0, 4)});
  const uint16_t id = a_->Tables().pagemap[0].pcid;
  ASSERT_NE(id, 0);
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  a_->rec->Clear();
  // Nothing is down: reconciling writes nothing.
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  EXPECT_TRUE(a_->rec->writes().empty());

  DeviceMarksDown(id);
  b_->svc.reset();  // B's ipnumad is away too
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  EXPECT_TRUE(ResetWrites(id).empty()) << "reset while the peer does not answer";
  EXPECT_TRUE(PeerShownDown());
  EXPECT_FALSE(a_->svc->Snapshot()["mappings"][0]["confirmed"].get<bool>()) << "a down peer's mapping is in doubt";
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  EXPECT_TRUE(ResetWrites(id).empty());

  // B is back: it grants the mapping again, A resets the stream; the pages
  // (same address) are not rewritten.
  ASSERT_TRUE(bench_.Start(*b_, DesiredB()).ok());
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  EXPECT_EQ(ResetWrites(id).size(), 1u);
  EXPECT_EQ(FirstPagemapWrite(), a_->rec->writes().size());
  EXPECT_TRUE(a_->svc->Snapshot()["mappings"][0]["confirmed"].get<bool>());
  const auto notices = a_->svc->TakeNotices();
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("PEER_STATE[" + std::to_string(id) + "]"), std::string::npos) << notices[0];
  EXPECT_EQ(a_->svc->Snapshot()["peers"][0]["stream_resets"], 1);

  // The device clears DOWN when written 1 (memory does not): then nothing more.
  ASSERT_TRUE(a_->mem->Write32(regs::PeerStateOffset(id), 0).ok());
  a_->rec->Clear();
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  EXPECT_TRUE(a_->rec->writes().empty());
}

TEST_F(PeerResetTest, RewrittenEntryIsValidBeforeTheReset) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 0, 2)});
  const uint16_t id = a_->Tables().pagemap[0].pcid;
  DeviceMarksDown(id);
  a_->rec->Clear();
  ASSERT_TRUE(a_->svc->OnNeighbour(Ip("10.0.0.2"), Mac("02:00:00:00:00:22")).ok());
  const auto resets = ResetWrites(id);
  ASSERT_EQ(resets.size(), 1u);
  // Replayed up to the reset, the entry already names the new MAC, VALID.
  std::vector<uint8_t> image = a_->Bytes();
  ASSERT_TRUE(a_->rec->Replay(resets[0], image).ok());
  const auto e = regs::PcidEntry::Decode(image.data() + regs::PcidOffset(id));
  EXPECT_TRUE(e.valid());
  EXPECT_EQ(e.mac, Mac("02:00:00:00:00:22"));
  EXPECT_EQ(resets[0], a_->rec->writes().size() - 1) << "the reset is the last write";
}

TEST_F(PeerResetTest, NewMappingToADownPeerResetsBeforeItsPages) {
  StartBoth({});
  ASSERT_TRUE(a_->svc->AddMapping(Mapping("first", "b", "rx", 0, 0, 1)).ok());
  const uint16_t id = a_->Tables().pagemap[0].pcid;
  DeviceMarksDown(id);
  a_->rec->Clear();
  ASSERT_TRUE(a_->svc->AddMapping(Mapping("second", "b", "rx", 0x1000, 8, 2)).ok());
  const auto resets = ResetWrites(id);
  ASSERT_EQ(resets.size(), 1u);
  EXPECT_LT(resets[0], FirstPagemapWrite());
  EXPECT_EQ(a_->Tables().pagemap[9].pcid, id);
}

// The file BAR: a write of 1 to PEER_STATE clears the bit in the file; every
// other word is written as it is (and a write of 1 over 0 leaves 0).
TEST(NicMemoryBar, WriteOfOneToPeerStateClearsItInTheFile) {
  const fs::path path = fs::temp_directory_path() / ("ipnuma-nic-memory-bar-" + std::to_string(::getpid()));
  regs::Caps caps = SmallCaps();
  {
    auto file = FileBar::OpenOrCreate(path.string(), caps.bar0_bytes(), IdentityBlock(caps));
    ASSERT_TRUE(file.ok()) << file.status().ToString();
    NicMemoryBar bar(std::move(*file));
    // Another mapping of the file plays the device.
    auto device = FileBar::Open(path.string(), caps.bar0_bytes()).value();
    ExpectWriteOfOneClearsPeerState(bar, *device);
  }
  fs::remove(path);
}

}  // namespace
}  // namespace fibnic::ipnuma::testing
