#include "sources/kernel/kernel_rules.h"

#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace fibnic {

// A rule is harmless when it only looks up a followed table (the local
// table's, main's own rule), comes after main's, or is the VRF rule (l3mdev: see the VRF notes in
// docs/sources.md); any other — another table, blackhole/unreachable/
// prohibit/goto, suppress_prefixlength — may decide its destinations
// elsewhere, so they punt. Its other selectors (from, iif, fwmark, ...) are
// not modelled: punting is right whether or not they match.
constexpr uint32_t kMainRulePriority = 32766;

StatusOr<PolicyRules::Change> PolicyRules::Apply(const nlmsghdr* msg, uint64_t gen,
                                                 const std::vector<uint32_t>& tables) {
  const size_t hdr = NLMSG_ALIGN(sizeof(fib_rule_hdr));
  if (msg->nlmsg_len < NLMSG_LENGTH(sizeof(fib_rule_hdr))) {
    return InvalidArgument("rule message of " + std::to_string(msg->nlmsg_len) + " bytes: shorter than its header");
  }
  const auto* frh = static_cast<const fib_rule_hdr*>(NLMSG_DATA(msg));
  if (frh->family != AF_INET && frh->family != AF_INET6) return Change{.ignored = true, .reevaluate = std::nullopt};
  const Family fam = frh->family == AF_INET ? Family::kV4 : Family::kV6;
  uint32_t table = frh->table;
  uint32_t priority = 0;  // absent = 0
  bool l3mdev = false, suppress = false;
  std::optional<IpAddr> dst;
  int len = static_cast<int>(msg->nlmsg_len - NLMSG_LENGTH(hdr));
  for (auto* a = reinterpret_cast<const rtattr*>(static_cast<const uint8_t*>(NLMSG_DATA(msg)) + hdr); RTA_OK(a, len);
       a = RTA_NEXT(a, len)) {
    const auto* data = static_cast<const uint8_t*>(RTA_DATA(a));
    const size_t n = RTA_PAYLOAD(a);
    if (a->rta_type == FRA_TABLE && n == 4) std::memcpy(&table, data, 4);
    if (a->rta_type == FRA_PRIORITY && n == 4) std::memcpy(&priority, data, 4);
    if (a->rta_type == FRA_L3MDEV && n >= 1) l3mdev = data[0] != 0;
    if (a->rta_type == FRA_SUPPRESS_PREFIXLEN && n == 4) {  // always sent; ~0 = not set
      uint32_t v = 0;
      std::memcpy(&v, data, 4);
      suppress = v != UINT32_MAX;
    }
    if (a->rta_type == FRA_DST && n == (fam == Family::kV4 ? 4u : 16u)) dst = IpAddr::FromBytes(fam, data);
  }
  if (frh->dst_len > FamilyBits(fam) || (frh->dst_len != 0 && !dst)) {
    return InvalidArgument("rule message: destination length " + std::to_string(frh->dst_len) + " without a matching FRA_DST");
  }
  // Rules after main's (32766, like the kernel's `default` rule 32767) only
  // see destinations main has no usable route for, and the device has none
  // for them either: it punts them.
  const bool followed = std::find(tables.begin(), tables.end(), table) != tables.end();
  const bool harmless =
      l3mdev || priority > kMainRulePriority || (frh->action == FR_ACT_TO_TBL && !suppress && followed);
  const std::string key(reinterpret_cast<const char*>(NLMSG_DATA(msg)), msg->nlmsg_len - NLMSG_HDRLEN);
  if (harmless) return Change{};
  const uint8_t zero[16] = {};
  auto made = Prefix::Make(dst ? *dst : IpAddr::FromBytes(fam, zero), frh->dst_len);
  if (!made.ok()) return made.status().WithContext("rule message");
  const Prefix p = *made;
  if (msg->nlmsg_type == RTM_DELRULE) {
    if (!rules_.erase(key)) return Change{};
  } else {
    auto [it, added] = rules_.try_emplace(key, Rule{p, gen});
    it->second.gen = gen;
    if (!added) return Change{};
  }
  return Change{.ignored = false, .reevaluate = p};
}

bool PolicyRules::Covers(const Prefix& p) const {
  return std::any_of(rules_.begin(), rules_.end(), [&](const auto& r) { return r.second.dst.Contains(p); });
}

bool PolicyRules::IsDestination(const Prefix& p) const {
  return std::any_of(rules_.begin(), rules_.end(), [&](const auto& r) { return r.second.dst == p; });
}

std::vector<Prefix> PolicyRules::Destinations() const {
  std::vector<Prefix> out;
  for (const auto& [k, r] : rules_) out.push_back(r.dst);
  return out;
}

std::vector<Prefix> PolicyRules::Sweep(uint64_t gen) {
  std::vector<Prefix> swept;
  for (auto it = rules_.begin(); it != rules_.end();) {
    if (it->second.gen == gen) {
      ++it;
      continue;
    }
    swept.push_back(it->second.dst);
    it = rules_.erase(it);
  }
  return swept;
}

}  // namespace fibnic
