// The Fib's IPv6 side: every best IPv6 route kept in the TCAM compiler
// (fib/tcam6/) with its group's code at each commit, and the IPv6 routes each
// group answers (its IPv6 slot weight). Martian ranges (fib/martians.h) are
// code-0 routes, and every route inside them reaches the compiler with code 0.
#pragma once

#include <cstdint>
#include <vector>

#include "fib/codes.h"
#include "fib/resolver.h"
#include "fib/tcam6/tcam6_compiler.h"
#include "rib/rib.h"

namespace fibnic {

class Tcam6Feed {
 public:
  explicit Tcam6Feed(uint32_t capacity);

  // The RIB's best route for an IPv6 prefix changed from group old_best to
  // new_best (kNoGroup = none).
  void BestChanged(const Prefix& p, NhgId old_best, NhgId new_best);
  // IPv6 best routes up to /64 that use group g (what the TCAM can answer).
  uint32_t ShortRoutes(NhgId g) const { return g < use_.size() ? use_[g].short_routes : 0; }

  // Brings the compiler to the RIB's best IPv6 routes with this commit's
  // codes. Only routes whose best route changed or whose group's code moved
  // are re-upserted. With retired codes, the retire delta first takes every
  // route off the codes that change owner (code 0: they punt) before their
  // NEXTHOP entries retire; the final codes follow in the main delta, after
  // activation. With protect, each delta's TCAM writes only punt the entries
  // its routes make wrong (Tcam6Compiler::Protect) and CompileBest() chooses
  // the entries; without, each delta holds the chosen entries.
  // Returns whether it dropped a large change list (worth a malloc_trim).
  bool Compile(const Rib& rib, const Resolver& resolver, const CommitCodes& codes, DeviceDelta& retire,
               DeviceDelta& main, bool protect);
  // The best entries for the routes as Compile() left them (every choice,
  // until each change is in a finished one).
  std::vector<TcamWrite> CompileBest() { return tcam6_.Commit(); }
  // In steps: nullopt while the choice is unfinished (Tcam6Compiler::Commit).
  std::optional<std::vector<TcamWrite>> CompileBest(tcam6::Optimizer::Clock::time_point deadline) {
    return tcam6_.Commit(deadline);
  }

  const Tcam6Compiler& compiler() const { return tcam6_; }
  // Warm start, before the first Compile: Tcam6Compiler::Adopt.
  int AdoptDevice(const std::vector<regs::Tcam6Entry>& device) { return tcam6_.Adopt(device); }

 private:
  // An IPv6 prefix (and a group) in half the bytes of a Prefix: a table load
  // queues 160k of them.
  struct Key {
    uint64_t hi = 0, lo = 0;
    uint8_t len = 0;
    NhgId group = kNoGroup;
    static Key Of(const Prefix& p, NhgId g) {
      const U128 a = p.addr().v6();
      return {static_cast<uint64_t>(a >> 64), static_cast<uint64_t>(a), static_cast<uint8_t>(p.len()), g};
    }
    Prefix prefix() const { return Prefix::V6((U128{hi} << 64) | lo, len); }
    auto operator<=>(const Key&) const = default;
  };
  struct GroupUse {
    uint32_t routes = 0;        // IPv6 best routes using the group
    uint32_t short_routes = 0;  // ... of them up to /64
    int16_t pushed = -1;        // the code its routes hold in the compiler (-1: none there)
  };
  GroupUse& Use(NhgId g) {
    if (use_.size() <= g) use_.resize(g + 1);
    return use_[g];
  }

  Tcam6Compiler tcam6_;
  std::vector<Key> dirty_;       // prefixes whose best route changed since the last commit
  std::vector<GroupUse> use_;    // by group
};

}  // namespace fibnic
