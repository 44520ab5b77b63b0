#include "ipnuma/provisioner.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace fibnic::ipnuma {
namespace {

using regs::Ipv4String;

regs::LocalRegs ToRegs(const LocalNic& n) {
  regs::LocalRegs r;
  r.control = regs::kControlEnable;
  r.local_ip = n.ip;
  r.netmask = n.netmask;
  r.gateway_ip = n.gateway;
  r.local_mac = n.mac;
  r.udp_port = n.udp_port;
  r.retx_timeout_ns = n.retx_timeout_ns;
  return r;
}

uint32_t PrefixMask(const Prefix& p) { return MaskV4(p.len()); }

// The widest prefix whose mask is the run of leading ones of mask: a superset
// of what a (possibly non-contiguous) REGION mask admits.
Prefix CoveringPrefix(uint32_t ip, uint32_t mask) {
  int len = 0;
  while (len < 32 && (mask & (0x80000000u >> len))) ++len;
  return Prefix::V4(ip, len);
}

std::string PageRange(uint32_t first, uint32_t pages) {
  return "pages " + std::to_string(first) + ".." + std::to_string(uint64_t{first} + pages - 1);
}

bool Overlaps(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen) { return a < b + blen && b < a + alen; }

}  // namespace

std::string Hex64(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

Status ValidateName(const std::string& kind, const std::string& name) {
  const bool ok_chars = std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  if (name.empty() || name.size() > 64 || !ok_chars || name[0] == '.' || name[0] == '-') {
    std::string shown;
    for (unsigned char c : name.substr(0, 64)) shown += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
    const std::string more = name.size() > 64 ? "... (" + std::to_string(name.size()) + " chars)" : "";
    return InvalidArgument(kind + " name '" + shown + "'" + more +
                           ": allowed 1-64 characters of A-Z a-z 0-9 . _ -, not starting with '.' or '-'");
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<Provisioner>> Provisioner::Open(Bar& bar, const LocalNic& local, const BufferPool& pool) {
  ASSIGN_OR_RETURN(regs::Caps caps, ProbeNic(bar));
  return std::unique_ptr<Provisioner>(new Provisioner(bar, caps, local, pool));
}

const PeerState* Provisioner::FindPeerByIp(uint32_t ip) const {
  for (const auto& [name, p] : peers_) {
    if (p.spec.ip == ip) return &p;
  }
  return nullptr;
}

std::optional<uint16_t> Provisioner::FreePcid() const {
  std::vector<bool> used(caps_.pcid_entries, false);
  for (const auto& [name, p] : peers_) {
    if (p.pcid) used[p.pcid] = true;
  }
  for (uint16_t id = 1; id < caps_.pcid_entries; ++id) {
    if (!used[id]) return id;
  }
  return std::nullopt;
}

std::optional<uint16_t> Provisioner::FreeRegionSlot() const {
  std::vector<bool> used(caps_.region_entries, false);
  for (const auto& [name, e] : exports_) used[e.slot] = true;
  for (uint16_t s = 0; s < caps_.region_entries; ++s) {
    if (!used[s]) return s;
  }
  return std::nullopt;
}

Status Provisioner::ValidateExport(const ExportSpec& e) const {
  const std::string what = "export '" + e.name + "'";
  RETURN_IF_ERROR(ValidateName("export", e.name));
  if (exports_.count(e.name)) return AlreadyExists(what + " already exists");
  if (e.base % regs::kBufferAlign != 0) {
    return InvalidArgument(what + ": base " + Hex64(e.base) + " is not 64-byte aligned");
  }
  if (e.length == 0 || e.length % regs::kBufferAlign != 0) {
    return InvalidArgument(what + ": length " + std::to_string(e.length) + " is not a positive multiple of 64");
  }
  if (!e.allow.addr().is_v4()) return InvalidArgument(what + ": allow " + e.allow.ToString() + " is not IPv4");
  if (!pool_.Contains(e.base, e.length)) {
    return OutOfRange(what + ": [" + Hex64(e.base) + ", +" + Hex64(e.length) + ") lies outside the buffer pool " +
                      pool_.Describe());
  }
  for (const auto& [name, x] : exports_) {
    if (Overlaps(e.base, e.length, x.spec.base, x.spec.length)) {
      return AlreadyExists(what + ": [" + Hex64(e.base) + ", +" + Hex64(e.length) + ") overlaps export '" + name +
                           "' [" + Hex64(x.spec.base) + ", +" + Hex64(x.spec.length) + ")");
    }
  }
  if (!FreeRegionSlot()) {
    return ResourceExhausted(what + ": region table full (" + std::to_string(caps_.region_entries) +
                             " of " + std::to_string(caps_.region_entries) + " entries in use)");
  }
  return OkStatus();
}

Status Provisioner::AddExport(const ExportSpec& e) {
  RETURN_IF_ERROR(ValidateExport(e));
  const uint16_t slot = *FreeRegionSlot();
  regs::RegionEntry r;
  r.base = e.base;
  r.length = e.length;
  r.peer_ip = e.allow.addr().v4();
  r.mask = PrefixMask(e.allow);
  r.flags = regs::kRegionValid;
  RETURN_IF_ERROR(writer_.WriteRegion(slot, r));
  exports_[e.name] = ExportState{e, slot};
  return OkStatus();
}

StatusOr<std::vector<std::string>> Provisioner::Revoke(const std::string& name) {
  auto it = exports_.find(name);
  if (it == exports_.end()) return NotFound("unknown export '" + name + "'");
  std::vector<std::string> tell;
  for (const auto& [pname, p] : peers_) {
    if (it->second.spec.allow.Contains(IpAddr::V4(p.spec.ip))) tell.push_back(pname);
  }
  RETURN_IF_ERROR(writer_.ClearRegion(it->second.slot));
  exports_.erase(it);
  return tell;
}

StatusOr<Grant> Provisioner::CheckGrant(uint32_t requester_ip, const std::string& export_name, uint64_t offset,
                                        uint64_t length) const {
  const PeerState* peer = FindPeerByIp(requester_ip);
  if (!peer) {
    return PermissionDenied("unauthorised peer " + Ipv4String(requester_ip) + ": not a configured peer of " +
                            Ipv4String(local_.ip));
  }
  auto it = exports_.find(export_name);
  if (it == exports_.end()) return NotFound("unknown export '" + export_name + "'");
  const ExportState& x = it->second;
  if (!x.spec.allow.Contains(IpAddr::V4(requester_ip))) {
    return PermissionDenied("unauthorised peer " + Ipv4String(requester_ip) + ": export '" + export_name +
                            "' allows only " + x.spec.allow.ToString());
  }
  if (offset % regs::kPageBytes != 0 || (x.spec.base + offset) % regs::kPageBytes != 0) {
    return InvalidArgument("export '" + export_name + "': offset " + std::to_string(offset) +
                           " does not give a 4 KiB-aligned address (base " + Hex64(x.spec.base) + ")");
  }
  if (length == 0 || length % regs::kPageBytes != 0) {
    return InvalidArgument("export '" + export_name + "': length " + std::to_string(length) +
                           " is not a positive multiple of 4096");
  }
  if (offset > x.spec.length || length > x.spec.length - offset) {
    return OutOfRange("export '" + export_name + "': [" + std::to_string(offset) + ", +" + std::to_string(length) +
                      ") exceeds its length " + std::to_string(x.spec.length));
  }
  return Grant{x.spec.base, x.spec.length, x.spec.base + offset};
}

Status Provisioner::ResolvePeer(const std::string& name, const MacAddr& mac, bool via_gateway) {
  auto it = peers_.find(name);
  if (it == peers_.end()) return NotFound("unknown peer '" + name + "'");
  PeerState& p = it->second;
  if (mac.IsZero() || (mac.b[0] & 1)) {
    return InvalidArgument("peer '" + name + "': MAC " + mac.ToString() +
                           " is not a unicast address (zero, broadcast or multicast): the PCID entry is left alone");
  }
  if (p.resolved && p.mac == mac && p.via_gateway == via_gateway) return OkStatus();
  uint16_t id = p.pcid;
  if (!id) {
    auto free = FreePcid();
    if (!free) {
      return ResourceExhausted("peer '" + name + "': PC ID table full (" +
                               std::to_string(caps_.pcid_entries - 1) + " usable entries in use)");
    }
    id = *free;
  }
  regs::PcidEntry e;
  e.ip = p.spec.ip;
  e.mac = mac;
  e.flags = static_cast<uint8_t>(regs::kPcidValid | (via_gateway ? regs::kPcidViaGateway : 0));
  RETURN_IF_ERROR(writer_.WritePcid(id, e));
  p.pcid = id;
  p.mac = mac;
  p.via_gateway = via_gateway;
  p.resolved = true;
  // A PC ID given to this peer, or its frames sent to another MAC from now
  // on: a stream that went down meanwhile starts again.
  return ResetIfDown(p, "PC ID entry written, MAC " + mac.ToString());
}

Status Provisioner::ResetIfDown(PeerState& p, const std::string& why) {
  if (!p.resolved || !p.pcid) return OkStatus();
  ASSIGN_OR_RETURN(bool down, writer_.PeerDown(p.pcid));
  if (!down) return OkStatus();
  RETURN_IF_ERROR(writer_.ResetPeer(p.pcid));
  p.stream_resets++;
  notices_.push_back("peer '" + p.spec.name + "' (" + Ipv4String(p.spec.ip) +
                     "): stream was down, reset through PEER_STATE[" + std::to_string(p.pcid) + "] (" + why + ")");
  return OkStatus();
}

StatusOr<bool> Provisioner::PeerDown(const std::string& name) {
  auto it = peers_.find(name);
  if (it == peers_.end() || !it->second.resolved) return false;
  return writer_.PeerDown(it->second.pcid);
}

StatusOr<std::vector<std::string>> Provisioner::MappingsOfDownPeers() {
  std::vector<std::string> out;
  for (const auto& [name, p] : peers_) {
    ASSIGN_OR_RETURN(bool down, PeerDown(name));
    if (!down) continue;
    for (auto& [n, m] : mappings_) {
      if (m.spec.peer != name) continue;
      m.confirmed = false;
      out.push_back(n);
    }
  }
  return out;
}

Status Provisioner::ValidateMappingSpec(const MappingSpec& m) const {
  const std::string what = "mapping '" + m.name + "'";
  RETURN_IF_ERROR(ValidateName("mapping", m.name));
  if (mappings_.count(m.name) || reserved_.count(m.name)) return AlreadyExists(what + " already exists");
  auto pit = peers_.find(m.peer);
  if (pit == peers_.end()) return NotFound(what + ": unknown peer '" + m.peer + "'");
  if (m.export_name.empty()) return InvalidArgument(what + ": empty export name");
  if (m.pages == 0) return InvalidArgument(what + ": zero pages");
  if (m.first_page >= caps_.pages || m.pages > caps_.pages - m.first_page) {
    return OutOfRange(what + ": " + PageRange(m.first_page, m.pages) + " out of the BAR's " +
                      std::to_string(caps_.pages) + " pages (CAPS0)");
  }
  if (m.offset % regs::kPageBytes != 0) {
    return InvalidArgument(what + ": offset " + std::to_string(m.offset) + " is not a multiple of 4096");
  }
  auto clash = [&](const MappingSpec& o) -> Status {
    if (Overlaps(m.first_page, m.pages, o.first_page, o.pages)) {
      return AlreadyExists(what + ": " + PageRange(m.first_page, m.pages) + " overlap mapping '" + o.name +
                           "' (" + PageRange(o.first_page, o.pages) + ", peer '" + o.peer + "')");
    }
    return OkStatus();
  };
  for (const auto& [n, o] : mappings_) RETURN_IF_ERROR(clash(o.spec));
  for (const auto& [n, o] : reserved_) RETURN_IF_ERROR(clash(o));
  return OkStatus();
}

Status Provisioner::ReserveMapping(const MappingSpec& m) {
  RETURN_IF_ERROR(ValidateMappingSpec(m));
  const PeerState& p = peers_.at(m.peer);
  if (!p.resolved) {
    return Unavailable("mapping '" + m.name + "': peer '" + m.peer + "' (" + Ipv4String(p.spec.ip) +
                       ") has no MAC yet (no neighbour entry for " +
                       Ipv4String(local_.OnSegment(p.spec.ip) ? p.spec.ip : local_.gateway) + ")");
  }
  reserved_[m.name] = m;
  return OkStatus();
}

Status Provisioner::WritePages(const MappingSpec& m, uint64_t remote_base) {
  const uint16_t pcid = peers_.at(m.peer).pcid;
  for (uint32_t i = 0; i < m.pages; ++i) {
    RETURN_IF_ERROR(writer_.MapPage(m.first_page + i, {remote_base + uint64_t{i} * regs::kPageBytes, pcid}));
  }
  return writer_.Flush();
}

Status Provisioner::CommitMapping(const std::string& name, uint64_t remote_base) {
  auto it = reserved_.find(name);
  if (it == reserved_.end()) return FailedPrecondition("mapping '" + name + "' was cancelled (export revoked)");
  const MappingSpec m = it->second;
  reserved_.erase(it);
  RETURN_IF_ERROR(CheckRemoteRange(m, remote_base));
  RETURN_IF_ERROR(ResetIfDown(peers_.at(m.peer), "granted mapping '" + name + "'"));
  RETURN_IF_ERROR(WritePages(m, remote_base));
  mappings_[name] = MappingState{m, remote_base, true};
  return OkStatus();
}

Status Provisioner::CheckRemoteRange(const MappingSpec& m, uint64_t remote_base) const {
  const uint64_t bytes = uint64_t{m.pages} * regs::kPageBytes;
  if (remote_base % regs::kPageBytes != 0 || remote_base > regs::kPaMask || bytes - 1 > regs::kPaMask - remote_base) {
    return InvalidArgument("mapping '" + m.name + "': peer answered base " + Hex64(remote_base) +
                           ", not a 4 KiB-aligned 48-bit range for " + std::to_string(m.pages) + " pages");
  }
  return OkStatus();
}

Status Provisioner::ConfirmMapping(const std::string& name, uint64_t remote_base) {
  auto it = mappings_.find(name);
  if (it == mappings_.end()) return NotFound("unknown mapping '" + name + "'");
  RETURN_IF_ERROR(CheckRemoteRange(it->second.spec, remote_base));
  RETURN_IF_ERROR(ResetIfDown(peers_.at(it->second.spec.peer), "granted mapping '" + name + "' again"));
  if (it->second.remote_base != remote_base) {
    RETURN_IF_ERROR(WritePages(it->second.spec, remote_base));
    it->second.remote_base = remote_base;
  }
  it->second.confirmed = true;
  return OkStatus();
}

Status Provisioner::RemoveMapping(const std::string& name) {
  if (reserved_.erase(name)) return OkStatus();
  auto it = mappings_.find(name);
  if (it == mappings_.end()) return NotFound("unknown mapping '" + name + "'");
  const MappingSpec& m = it->second.spec;
  for (uint32_t i = 0; i < m.pages; ++i) RETURN_IF_ERROR(writer_.UnmapPage(m.first_page + i));
  RETURN_IF_ERROR(writer_.Flush());
  mappings_.erase(it);
  return OkStatus();
}

std::vector<std::string> Provisioner::MappingsInto(const std::string& peer, const std::string& export_name,
                                                   uint64_t base, uint64_t length) const {
  std::vector<std::string> out;
  for (const auto& [n, m] : mappings_) {
    if (m.spec.peer != peer) continue;
    if (m.spec.export_name == export_name ||
        Overlaps(m.remote_base, uint64_t{m.spec.pages} * regs::kPageBytes, base, length)) {
      out.push_back(n);
    }
  }
  for (const auto& [n, m] : reserved_) {
    if (m.peer == peer && m.export_name == export_name) out.push_back(n);
  }
  return out;
}

StatusOr<AdoptPlan> Provisioner::Adopt(const std::vector<PeerSpec>& peers, const std::vector<ExportSpec>& exports,
                                       const std::vector<MappingSpec>& mappings) {
  // 1. The desired state on its own: everything is checked before any write.
  if (peers.size() > size_t{caps_.pcid_entries} - 1u) {
    return ResourceExhausted(std::to_string(peers.size()) + " peers configured but the PC ID table holds " +
                             std::to_string(caps_.pcid_entries - 1) + " (CAPS1)");
  }
  std::map<std::string, PeerState> new_peers;
  std::set<uint32_t> peer_ips;
  for (const auto& p : peers) {
    if (p.name.empty()) return InvalidArgument("peer with an empty name");
    if (p.ip == 0 || p.ip == local_.ip) {
      return InvalidArgument("peer '" + p.name + "': address " + Ipv4String(p.ip) + " is not a remote NIC");
    }
    PeerState st;
    st.spec = p;
    if (!new_peers.emplace(p.name, st).second) return AlreadyExists("peer '" + p.name + "' given twice");
    if (!peer_ips.insert(p.ip).second) return AlreadyExists("peer address " + Ipv4String(p.ip) + " given twice");
  }
  if (exports.size() > caps_.region_entries) {
    return ResourceExhausted(std::to_string(exports.size()) + " exports configured but the region table holds " +
                             std::to_string(caps_.region_entries) + " (CAPS1)");
  }
  {
    Provisioner probe(bar_, caps_, local_, pool_);  // validates exports against each other only
    for (const auto& e : exports) {
      RETURN_IF_ERROR(probe.ValidateExport(e));
      probe.exports_[e.name] = ExportState{e, 0};
    }
    probe.exports_.clear();
    probe.peers_ = new_peers;
    for (auto& [n, p] : probe.peers_) p.resolved = true;
    for (const auto& m : mappings) {
      RETURN_IF_ERROR(probe.ValidateMappingSpec(m));
      probe.reserved_[m.name] = m;
    }
  }

  // 2. What the NIC holds.
  ASSIGN_OR_RETURN(NicTables t, ReadNicTables(bar_, caps_));
  // The wire-protocol registers go in before CONTROL enables the NIC. A NIC
  // being enabled (first start, or after a reset or a disable) gets a newer
  // EPOCH_BASE, so a receiver still holding its previous streams takes the
  // new ones for new (docs/contract/IPNUMA.md, "Epochs"). The register is the
  // counter: it survives in a BAR file, not across a device reset.
  ASSIGN_OR_RETURN(uint32_t max_payload, bar_.Read32(regs::kOffMaxPayload));
  ASSIGN_OR_RETURN(uint32_t retry_limit, bar_.Read32(regs::kOffRetryLimit));
  ASSIGN_OR_RETURN(uint32_t epoch_base, bar_.Read32(regs::kOffEpochBase));
  const bool enabling = !(t.local.control & regs::kControlEnable);
  if (enabling || max_payload != local_.max_payload || retry_limit != local_.retry_limit) {
    const uint16_t epoch = static_cast<uint16_t>(epoch_base + (enabling ? 1 : 0));
    RETURN_IF_ERROR(writer_.WriteWireParams(local_.max_payload, local_.retry_limit, epoch));
  }
  if (!(t.local == ToRegs(local_))) RETURN_IF_ERROR(writer_.WriteLocal(ToRegs(local_)));

  peers_ = new_peers;
  std::vector<std::string> owner(caps_.pcid_entries);  // PC ID → configured peer adopting it
  for (uint16_t id = 1; id < caps_.pcid_entries; ++id) {
    const auto& e = t.pcid[id];
    if (!e.valid()) continue;
    for (auto& [n, p] : peers_) {
      if (p.spec.ip == e.ip && !p.pcid) {
        p.pcid = id;
        p.mac = e.mac;
        p.via_gateway = e.via_gateway();
        p.resolved = true;
        owner[id] = n;
        break;
      }
    }
  }

  // 3. Pages: runs that equal a configured mapping stay; the rest is unmapped.
  std::map<uint32_t, const MappingSpec*> by_first;
  for (const auto& m : mappings) by_first[m.first_page] = &m;
  std::vector<bool> keep(caps_.pages, false);
  AdoptPlan plan;
  for (const auto& m : mappings) {
    const PeerState& p = peers_.at(m.peer);
    bool whole = p.pcid != 0;
    const uint64_t base = t.pagemap[m.first_page].remote_pa;
    for (uint32_t i = 0; whole && i < m.pages; ++i) {
      const auto& pe = t.pagemap[m.first_page + i];
      whole = pe.pcid == p.pcid && pe.remote_pa == base + uint64_t{i} * regs::kPageBytes;
    }
    if (whole) {
      for (uint32_t i = 0; i < m.pages; ++i) keep[m.first_page + i] = true;
      mappings_[m.name] = MappingState{m, base, false};
      plan.mappings_to_confirm.push_back(m.name);
    } else {
      plan.mappings_to_add.push_back(m);
    }
  }
  for (uint32_t pg = 0; pg < caps_.pages; ++pg) {
    if (!keep[pg] && t.pagemap[pg].Encode() != 0) RETURN_IF_ERROR(writer_.UnmapPage(pg));
  }
  // 4. No page names an unadopted PC ID any more: clear those entries.
  for (uint16_t id = 1; id < caps_.pcid_entries; ++id) {
    if (t.pcid[id].valid() && owner[id].empty()) RETURN_IF_ERROR(writer_.ClearPcid(id));
  }

  // 5. REGIONs: equal to a configured export → adopted; other valid ones are
  // leftovers the service revokes (peers first); the rest of the config is added.
  std::set<std::string> adopted;
  for (uint16_t s = 0; s < caps_.region_entries; ++s) {
    const auto& r = t.region[s];
    if (!r.valid()) continue;
    const ExportSpec* match = nullptr;
    for (const auto& e : exports) {
      if (!adopted.count(e.name) && e.base == r.base && e.length == r.length && e.allow.addr().v4() == r.peer_ip &&
          PrefixMask(e.allow) == r.mask) {
        match = &e;
        break;
      }
    }
    if (match) {
      adopted.insert(match->name);
      exports_[match->name] = ExportState{*match, s};
    } else {
      const std::string name = "leftover-slot" + std::to_string(s);
      exports_[name] = ExportState{ExportSpec{name, r.base, r.length, CoveringPrefix(r.peer_ip, r.mask)}, s};
      plan.leftover_exports.push_back(name);
    }
  }
  for (const auto& e : exports) {
    if (!adopted.count(e.name)) plan.exports_to_add.push_back(e);
  }
  RETURN_IF_ERROR(writer_.Flush());
  return plan;
}

}  // namespace fibnic::ipnuma
