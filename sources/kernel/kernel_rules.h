// Policy rules (`ip rule`) as the kernel table sees them (found by
// tests/kdiff). The FIBNIC has no rule lookup: a rule that may decide its
// destinations elsewhere than the followed tables makes its destination
// prefix, and every route inside it, punt. This keeps which rules do that —
// the rule messages' own parsing and bookkeeping — apart from the routes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "rib/route.h"

struct nlmsghdr;

namespace fibnic {

class PolicyRules {
 public:
  struct Change {
    bool ignored = false;             // not an IPv4/IPv6 rule
    std::optional<Prefix> reevaluate;  // the destination whose punting rules changed
  };

  // One RTM_NEWRULE/RTM_DELRULE; tables are the followed ones. A malformed
  // message changes nothing and comes back as an error.
  StatusOr<Change> Apply(const nlmsghdr* msg, uint64_t gen, const std::vector<uint32_t>& tables);

  // A punting rule's destination contains p (or is p).
  bool Covers(const Prefix& p) const;
  bool IsDestination(const Prefix& p) const;
  std::vector<Prefix> Destinations() const;

  // Removes the rules not seen since generation gen; returns their destinations.
  std::vector<Prefix> Sweep(uint64_t gen);

 private:
  struct Rule {
    Prefix dst;
    uint64_t gen = 0;
  };
  // By the message payload: the kernel's identity of a rule.
  std::map<std::string, Rule> rules_;
};

}  // namespace fibnic
