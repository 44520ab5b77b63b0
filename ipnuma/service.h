// ipnumad's core: one NIC's Provisioner plus the conversation with the peers'
// ipnumad. All state changes go through here under one lock; calls to peers
// are made without it, so two ipnumad asking each other at once cannot
// deadlock. The ordering guarantees of the peer agreement live here:
//  - a mapping's pages are reserved before the grant request leaves, so a
//    revocation that overtakes the grant answer cancels them;
//  - revoking an export invalidates its REGION at once (the memory stops
//    being writable before any peer is told, IPNUMA.md), then every peer its
//    ACL admits is told to unmap; a peer that does not acknowledge is told
//    again on every reconcile until it does;
//  - everything a peer answers is checked before it reaches a register.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ipnuma/provisioner.h"

namespace fibnic::ipnuma {

// The way to a peer's ipnumad (signed HTTP/JSON in the daemon; direct calls in tests).
class PeerTransport {
 public:
  virtual ~PeerTransport() = default;
  // POSTs body to path at the peer; its JSON answer, or its error (same code).
  virtual StatusOr<nlohmann::json> Post(const PeerSpec& peer, const std::string& path,
                                        const nlohmann::json& body) = 0;
};

// The MAC the kernel's neighbour table holds for an IPv4 address, if any.
using MacLookup = std::function<std::optional<MacAddr>(uint32_t ip)>;

inline constexpr const char* kPeerGrantPath = "/peer/v1/grant";
inline constexpr const char* kPeerRevokePath = "/peer/v1/revoke";

struct DesiredState {
  std::vector<PeerSpec> peers;
  std::vector<ExportSpec> exports;
  std::vector<MappingSpec> mappings;
};

class IpnumaService {
 public:
  IpnumaService(std::unique_ptr<Provisioner> prov, PeerTransport& transport, MacLookup lookup)
      : prov_(std::move(prov)), transport_(transport), lookup_(std::move(lookup)) {}

  // Adopts what the NIC holds, then converges it to the desired state. Errors
  // that only a peer can fix (unreachable, refused) do not fail the start:
  // those mappings stay pending and Reconcile() retries them.
  Status Start(const DesiredState& desired);
  // Retries pending configured mappings, unconfirmed ones found at start, and
  // revocation notices peers have not acknowledged.
  Status Reconcile();

  // A neighbour entry appeared or changed: peers whose frames go to ip get
  // the new MAC in place (PCID VALID=0, fields, VALID=1). True when a peer
  // got its first MAC: mappings waiting for it can go ahead (Reconcile).
  StatusOr<bool> OnNeighbour(uint32_t ip, const MacAddr& mac);

  // Operator requests.
  Status AddExport(const ExportSpec& e);
  // Invalidates the REGION, then tells every peer the export's ACL admits to
  // unmap. Returns the peers that have not acknowledged yet: Reconcile()
  // tells them again until they do (meanwhile the NIC drops their writes).
  StatusOr<std::vector<std::string>> RemoveExport(const std::string& name);
  Status AddMapping(const MappingSpec& m);
  Status RemoveMapping(const std::string& name);

  // A request from the peer whose NIC address is from_ip (already authenticated).
  StatusOr<nlohmann::json> HandlePeer(const std::string& path, uint32_t from_ip, const nlohmann::json& body);
  // The peer a request claims to come from, for the authenticator.
  std::optional<PeerSpec> PeerByIp(uint32_t ip);

  // peers, exports, mappings, counters, pending work: what the API shows.
  nlohmann::json Snapshot();
  nlohmann::json Counters();
  // What ipnumad did on its own since the last call, for the log.
  std::vector<std::string> TakeNotices();

 private:
  Status ResolveAll();  // lock held
  Status CreateMapping(const MappingSpec& m);
  Status ConfirmMapping(const std::string& name);
  StatusOr<Grant> AskGrant(const PeerSpec& peer, const std::string& export_name, uint64_t offset, uint64_t length);

  // A revoked export some peers have not acknowledged yet.
  struct PendingRevoke {
    uint64_t id = 0;
    nlohmann::json notice;            // {export, base, length}
    std::vector<std::string> peers;   // not acknowledged yet
  };
  // Tells the revocation's peers (lock not held); keeps the ones that did not
  // acknowledge and returns their errors.
  std::vector<std::string> TellRevoke(const PendingRevoke& r);

  std::mutex mu_;
  std::unique_ptr<Provisioner> prov_;
  PeerTransport& transport_;
  MacLookup lookup_;
  std::vector<MappingSpec> pending_;       // configured, not yet granted
  std::vector<std::string> unconfirmed_;   // found on the NIC, peer not asked yet
  std::vector<std::string> last_errors_;   // of the latest start/reconcile, for the API
  std::vector<PendingRevoke> revokes_;     // REGION already invalid, peers still to acknowledge
  uint64_t next_revoke_id_ = 1;
};

// JSON error body {"error":{"code":"NOT_FOUND","message":"..."}} and back.
nlohmann::json ErrorJson(const Status& st);
Status StatusFromErrorJson(const nlohmann::json& j, const std::string& context);

}  // namespace fibnic::ipnuma
