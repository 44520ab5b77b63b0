// Test oracle for the IP-NUMA update rules, evaluated on the device's view
// after every single bus write (RecordingBar observer). It decodes the BAR
// bytes with the ipnuma_regs codecs and knows nothing of ipnumad's state:
//  - a VALID PCID / REGION entry never changes while VALID (no torn entry);
//  - a page is mapped only to a PC ID whose entry is VALID at that moment, and
//    that entry keeps the page's peer address while the page names it (no PC
//    ID reuse); an in-place rewrite may hide it (VALID=0) for at most the
//    five writes of the rewrite;
//  - a mapped page never changes without passing through "unmapped";
//  - across NICs: a page is mapped only into memory a VALID REGION of the
//    peer NIC admits for this NIC's address at that moment (nothing is mapped
//    into a revoked region). A page mapped earlier may outlive the REGION:
//    revoking takes effect before the peer is told (IPNUMA.md), and the
//    receiving NIC drops those writes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ipnuma/nic.h"

namespace fibnic::ipnuma::testing {

class RuleChecker {
 public:
  // bytes: the NIC's BAR0 as the device holds it (a MemoryBar's data()).
  int AddNic(const regs::Caps& caps, const uint8_t* bytes) {
    Nic n;
    n.caps = caps;
    n.bytes = bytes;
    n.prev = DecodeNicTables(bytes, caps);
    n.page_ip.assign(caps.pages, 0);
    n.hidden_writes.assign(caps.pcid_entries, 0);
    nics_.push_back(std::move(n));
    return static_cast<int>(nics_.size()) - 1;
  }

  // Call after each write to NIC nic; returns the violation, if any (also kept
  // in first_violation(): a caller may swallow the failed write's status).
  Status Check(int nic) {
    Status st = CheckNic(nic);
    if (!st.ok() && first_violation_.empty()) first_violation_ = st.message();
    return st;
  }
  const std::string& first_violation() const { return first_violation_; }

 private:
  Status CheckNic(int nic) {
    ++checks_;
    Nic& n = nics_[nic];
    NicTables t = DecodeNicTables(n.bytes, n.caps);
    const std::string where = "NIC " + std::to_string(nic) + " after write " + std::to_string(checks_) + ": ";
    for (size_t i = 0; i < t.pcid.size(); ++i) {
      if (n.prev.pcid[i].valid() && t.pcid[i].valid() && !(n.prev.pcid[i] == t.pcid[i])) {
        return Internal(where + "PCID[" + std::to_string(i) + "] changed while VALID");
      }
    }
    for (size_t s = 0; s < t.region.size(); ++s) {
      if (n.prev.region[s].valid() && t.region[s].valid() && !(n.prev.region[s] == t.region[s])) {
        return Internal(where + "REGION[" + std::to_string(s) + "] changed while VALID");
      }
    }
    std::vector<bool> referenced(t.pcid.size(), false);
    std::vector<uint32_t> newly_mapped;
    for (uint32_t p = 0; p < t.pagemap.size(); ++p) {
      const auto& now = t.pagemap[p];
      const auto& before = n.prev.pagemap[p];
      if (!now.mapped()) continue;
      const std::string page = "PAGEMAP[" + std::to_string(p) + "]";
      if (now.pcid >= t.pcid.size()) return Internal(where + page + " names PC ID beyond the table");
      if (now.remote_pa % regs::kPageBytes) return Internal(where + page + " address not 4 KiB aligned");
      const auto& e = t.pcid[now.pcid];
      if (before.mapped()) {
        if (!(before == now)) return Internal(where + page + " remapped without being unmapped first");
        if (e.ip != n.page_ip[p]) {
          return Internal(where + "PC ID " + std::to_string(now.pcid) + " re-used for " + regs::Ipv4String(e.ip) +
                          " while " + page + " names it for " + regs::Ipv4String(n.page_ip[p]));
        }
      } else {
        if (!e.valid()) {
          return Internal(where + page + " mapped to PC ID " + std::to_string(now.pcid) + " whose entry is invalid");
        }
        n.page_ip[p] = e.ip;
        newly_mapped.push_back(p);
      }
      referenced[now.pcid] = true;
    }
    for (size_t i = 0; i < t.pcid.size(); ++i) {
      n.hidden_writes[i] = (referenced[i] && !t.pcid[i].valid()) ? n.hidden_writes[i] + 1 : 0;
      if (n.hidden_writes[i] > 5) {
        return Internal(where + "PC ID " + std::to_string(i) + " named by pages but invalid for " +
                        std::to_string(n.hidden_writes[i]) + " writes");
      }
    }
    n.prev = std::move(t);
    return CrossCheck(nic, newly_mapped, where);
  }


 public:
  size_t checks() const { return checks_; }

 private:
  struct Nic {
    regs::Caps caps;
    const uint8_t* bytes = nullptr;
    NicTables prev;
    std::vector<uint32_t> page_ip;
    std::vector<int> hidden_writes;
  };

  Status CrossCheck(int a, const std::vector<uint32_t>& pages, const std::string& where) {
    const NicTables& ta = nics_[a].prev;
    for (uint32_t p : pages) {
      const auto& pe = ta.pagemap[p];
      const uint32_t peer_ip = ta.pcid[pe.pcid].ip;
      for (size_t b = 0; b < nics_.size(); ++b) {
        if (static_cast<int>(b) == a || nics_[b].prev.local.local_ip != peer_ip) continue;
        bool admitted = false;
        for (const auto& r : nics_[b].prev.region) {
          admitted = admitted || r.Admits(ta.local.local_ip, pe.remote_pa, regs::kPageBytes);
        }
        if (!admitted) {
          return Internal(where + "NIC " + std::to_string(a) + " page " + std::to_string(p) + " maps " +
                          regs::Ipv4String(peer_ip) + " memory 0x" + ToHex(pe.remote_pa) +
                          " that no VALID REGION of that NIC admits");
        }
      }
    }
    return OkStatus();
  }

  static std::string ToHex(uint64_t v) {
    static const char* d = "0123456789abcdef";
    std::string s;
    do {
      s.insert(s.begin(), d[v & 15]);
      v >>= 4;
    } while (v);
    return s;
  }

  std::vector<Nic> nics_;
  size_t checks_ = 0;
  std::string first_violation_;
};

}  // namespace fibnic::ipnuma::testing
