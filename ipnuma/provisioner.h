// The local half of ipnumad: validated changes to one NIC's tables. Every
// operation checks all of its input against the current state first and only
// then writes, so a refused request leaves every table byte unchanged; the
// writes themselves go through NicWriter in update-rule order.
//
// Not thread-safe: IpnumaService serialises calls. The peer conversation
// (asking for grants, telling peers about revocations) lives in IpnumaService;
// this class only decides and writes.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hwif/counters.h"
#include "ipnuma/model.h"
#include "ipnuma/nic.h"
#include "ipnuma/pool.h"

namespace fibnic::ipnuma {

// What the peer's ipnumad answers to a grant request.
struct Grant {
  uint64_t export_base = 0;
  uint64_t export_length = 0;
  uint64_t window_base = 0;  // export_base + offset: the first page's remote address
};

// What startup left for the service to do with the peers' help.
struct AdoptPlan {
  std::vector<std::string> leftover_exports;  // valid REGIONs not in the config: revoke (peers first)
  std::vector<ExportSpec> exports_to_add;     // configured exports not yet on the NIC
  std::vector<MappingSpec> mappings_to_add;   // configured mappings not yet on the NIC
  std::vector<std::string> mappings_to_confirm;  // found on the NIC: ask the peer again
};

class Provisioner {
 public:
  // Probes the NIC (refusing anything but an IP-NUMA NIC of a known version).
  static StatusOr<std::unique_ptr<Provisioner>> Open(Bar& bar, const LocalNic& local, const BufferPool& pool);

  const regs::Caps& caps() const { return caps_; }
  const LocalNic& local() const { return local_; }
  const BufferPool& pool() const { return pool_; }
  const std::map<std::string, PeerState>& peers() const { return peers_; }
  const std::map<std::string, ExportState>& exports() const { return exports_; }
  const std::map<std::string, MappingState>& mappings() const { return mappings_; }
  const std::map<std::string, MappingSpec>& reserved() const { return reserved_; }
  Bar& bar() { return bar_; }

  // Checks the whole desired state, then reads the NIC back and adopts what
  // matches it without rewriting: local registers, PC IDs of configured peers,
  // REGIONs equal to configured exports, page runs equal to configured
  // mappings. Pages naming unknown or invalid PC IDs are unmapped, then those
  // PC IDs cleared. The rest is returned as a plan.
  StatusOr<AdoptPlan> Adopt(const std::vector<PeerSpec>& peers, const std::vector<ExportSpec>& exports,
                            const std::vector<MappingSpec>& mappings);

  // Sets the peer's MAC (its own, or the gateway's when via_gateway) and makes
  // its PCID entry valid, allocating a PC ID on first use. An existing entry is
  // rewritten in place (VALID=0, fields, VALID=1).
  Status ResolvePeer(const std::string& name, const MacAddr& mac, bool via_gateway);
  const PeerState* FindPeerByIp(uint32_t ip) const;

  // Whether the NIC shows the stream to the peer's address DOWN (PEER_STATE).
  StatusOr<bool> PeerDown(const std::string& name);
  // Mappings of peers whose stream is DOWN, marked unconfirmed: the peer is
  // asked to grant them again, and the stream is reset once it does
  // (ConfirmMapping) — a peer that went down and came back is reprovisioned.
  StatusOr<std::vector<std::string>> MappingsOfDownPeers();
  // What ipnumad did on its own that the log should say (stream resets).
  std::vector<std::string> TakeNotices() { return std::exchange(notices_, {}); }

  Status ValidateExport(const ExportSpec& e) const;
  Status AddExport(const ExportSpec& e);
  // Invalidates the REGION and forgets the export; returns the configured
  // peers its ACL admits: the ones to tell to unmap.
  StatusOr<std::vector<std::string>> Revoke(const std::string& name);

  // The receiving side's check of a peer's request for [offset, offset+length) of an export.
  StatusOr<Grant> CheckGrant(uint32_t requester_ip, const std::string& export_name, uint64_t offset,
                             uint64_t length) const;

  // Mapping, in two steps around the peer's answer: Reserve checks and claims
  // the pages; Commit writes them with the granted address.
  Status ReserveMapping(const MappingSpec& m);
  void CancelReservation(const std::string& name) { reserved_.erase(name); }
  Status CommitMapping(const std::string& name, uint64_t remote_base);
  // A mapping found on the NIC at startup, granted again by its peer: kept as
  // is when the address agrees, otherwise remapped page by page.
  Status ConfirmMapping(const std::string& name, uint64_t remote_base);
  Status RemoveMapping(const std::string& name);
  // Mappings (and reservations) of the peer that point into the given export:
  // by name, or by remote address range (the peer may know it by another name
  // after a restart).
  std::vector<std::string> MappingsInto(const std::string& peer, const std::string& export_name, uint64_t base,
                                        uint64_t length) const;

  // Carry-safe reads of the live counters (each u64 is two 32-bit bus reads).
  StatusOr<regs::Counters> Counters() { return ReadIpnumaCounters(bar_); }

 private:
  Provisioner(Bar& bar, const regs::Caps& caps, const LocalNic& local, const BufferPool& pool)
      : bar_(bar), caps_(caps), local_(local), pool_(pool), writer_(bar, caps) {}
  Status ValidateMappingSpec(const MappingSpec& m) const;
  Status CheckRemoteRange(const MappingSpec& m, uint64_t remote_base) const;
  Status WritePages(const MappingSpec& m, uint64_t remote_base);
  std::optional<uint16_t> FreePcid() const;
  // Resets the peer's stream if the NIC shows it DOWN (PEER_STATE bit0 written
  // 1). Called once the PCID entry is VALID for the peer and before pages are
  // (re)written to it, whenever ipnumad (re)provisions the peer: a new or
  // rewritten entry, a mapping the peer grants or grants again.
  Status ResetIfDown(PeerState& p, const std::string& why);
  std::optional<uint16_t> FreeRegionSlot() const;

  Bar& bar_;
  regs::Caps caps_;
  LocalNic local_;
  BufferPool pool_;
  NicWriter writer_;
  std::map<std::string, PeerState> peers_;
  std::map<std::string, ExportState> exports_;
  std::map<std::string, MappingState> mappings_;
  std::map<std::string, MappingSpec> reserved_;
  std::vector<std::string> notices_;
};

std::string Hex64(uint64_t v);
// Names of exports and mappings (they appear in URL paths): 1-64 of
// [A-Za-z0-9._-], not starting with '.' or '-'. Error names what and why.
Status ValidateName(const std::string& kind, const std::string& name);

}  // namespace fibnic::ipnuma
