// Offload replies to zebra (FRR 8.5 and later read them; 8.4 discards them):
// per route one FPM frame holding an RTM_NEWROUTE with NLM_F_REQUEST, the
// route's family, prefix, table and the rtm_protocol zebra sent, and
// rtm_flags saying where the route stands. zebra's fpm_read takes only the
// first netlink message of a frame, so every reply is a frame of its own.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/ip.h"

namespace fibnic {

// What a route's reply says (and, as FpmZebraRoute::replied, what was said).
enum class FpmOffload : uint8_t {
  kNone = 0,       // no reply (yet): zebra waits for one
  kOffloaded = 1,  // the FIBNIC forwards it: RTM_F_OFFLOAD
  // The FIBNIC punts it (wholly or partly) and the host forwards it:
  // RTM_F_OFFLOAD | RTM_F_TRAP. Offload too, so that bgpd's
  // suppress-fib-pending advertises it (TRAP alone never would).
  kTrapped = 2,
  kFailed = 3,  // the device push failed: RTM_F_OFFLOAD_FAILED
};
uint32_t FpmOffloadFlags(FpmOffload s);  // rtm_flags of its reply

// Where the states come from (fibnicd: the Fib, behind the pipeline).
class FpmOffloadOracle {
 public:
  virtual ~FpmOffloadOracle() = default;
  // The state of each prefix's route on the device — the kernel's route zebra
  // installed, as the kernel source gave it (kNone: no such route) — once every
  // update handed to the RIB before the call is on the device — or kFailed
  // for all if the device push failed. `answer` may run on any thread.
  virtual void Ask(std::vector<Prefix> prefixes, std::function<void(std::vector<FpmOffload>)> answer) = 0;
  // Commits so far (any thread): when it moves, states may have changed
  // without a word from zebra.
  virtual uint64_t commits() const = 0;
};

struct FpmReplyCounts {
  uint64_t replies = 0;  // sent (queued for the socket)
  uint64_t offloaded = 0, trapped = 0, failed = 0;
  uint64_t questions = 0;  // asked of the oracle
  uint64_t walks = 0;      // over every route (after commits, or overruns)
  uint64_t overruns = 0;   // replies that did not fit the buffer
};

// Bytes of one reply frame for a prefix of this family.
size_t FpmReplySize(Family family);
// Appends one reply frame to `out`.
void AppendFpmReply(std::vector<uint8_t>& out, const Prefix& prefix, uint32_t table, uint8_t protocol, FpmOffload state);

}  // namespace fibnic
