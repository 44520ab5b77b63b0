// KernelTable (kernel_table.h): messages in, routes chosen per prefix and
// given to the RIB, resyncs. Links: kernel_table_link.cc; neighbours,
// next-hop objects, addresses: kernel_table_{neigh,nexthop,addr}.cc.
#include "sources/kernel/kernel_table.h"

#include <linux/neighbour.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <netlink/addr.h>
#include <netlink/msg.h>
#include <netlink/route/neighbour.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "common/hash_mix.h"

namespace fibnic {


KernelTable::KernelTable(RibSink& sink, PortNames ports, KernelTableOptions options, ResolveFn resolve)
    : sink_(sink),
      ports_(std::move(ports)),
      options_(std::move(options)),
      resolve_(std::move(resolve)),
      routes_(&KernelTable::KeyOf, [this](const NlRoute& r, int delta) { AddGateways(r, delta); }) {}

Status KernelTable::Apply(const nlmsghdr* msg) {
  ++counts_.messages;
  switch (msg->nlmsg_type) {
    case RTM_NEWROUTE:
    case RTM_DELROUTE:
      return ApplyRoute(msg);
    case RTM_NEWNEIGH:
    case RTM_DELNEIGH:
      return ApplyNeigh(msg);
    case RTM_NEWLINK:
    case RTM_DELLINK:
      return ApplyLink(msg);
    case RTM_NEWRULE:
    case RTM_DELRULE:
      return ApplyRule(msg);
    case RTM_NEWADDR:
    case RTM_DELADDR:
      return ApplyAddr(msg);
    case RTM_NEWNEXTHOP:
    case RTM_DELNEXTHOP:
      return ApplyNexthop(msg);
    default:
      ++counts_.ignored;
      return OkStatus();
  }
}

int KernelTable::TableRank(uint32_t table) const {
  auto it = std::find(options_.tables.begin(), options_.tables.end(), table);
  if (it == options_.tables.end()) return -1;
  return table == RT_TABLE_LOCAL ? 0 : 1 + static_cast<int>(it - options_.tables.begin());
}

Status KernelTable::ApplyRoute(const nlmsghdr* msg) {
  ASSIGN_OR_RETURN(NlMessage m, ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(msg), msg->nlmsg_len));
  const int rank = m.kind == NlMessage::Kind::kRoute ? TableRank(m.route.table) : -1;
  if (rank < 0 || (m.route.flags & RTM_F_CLONED)) {
    ++counts_.ignored;
    return OkStatus();
  }
  NlRoute& r = m.route;
  // A route by next-hop object forwards along the object as it is now
  // (kernel_table_nexthop.cc). The paths nexthop_compat_mode=1 adds to the
  // message are a copy of the object's at that moment: dropped, so the route
  // is one route (one Key) in both modes.
  if (r.nh_id != 0) r.paths.clear();
  ForgetLinkStateFlags(r);
  const Prefix p = r.prefix;
  if (options_.ignore_protocols.count(r.protocol)) return ApplyIgnoredRoute(msg, r, KeyOf(rank, r));
  // A dump's (or a replace's) word on a prefix whose only route it is
  // already: nothing changes but the mark of the dump.
  const bool dump = (msg->nlmsg_flags & NLM_F_MULTI) != 0;
  if (!r.del && (dump || (msg->nlmsg_flags & NLM_F_REPLACE)) && routes_.TouchIfSame(p, rank, r, dump)) {
    return OkStatus();
  }
  const Key key = KeyOf(rank, r);
  ChangeRoutes(p, [&](Entries& entries) { ApplyRouteTo(entries, r, key, msg->nlmsg_flags); });
  return OkStatus();
}

void KernelTable::ApplyRouteTo(Entries& entries, NlRoute& r, const Key& key, uint16_t nlmsg_flags) {
  const Prefix p = r.prefix;
  auto it = entries.find(key);
  // A dump lists each IPv6 route of an entry (the joined next-hops of one
  // metric) again: the paths it names are noted, and at the dump's end
  // those it did not name go (EndSweep) — a path the kernel no longer has
  // leaves with the dump instead of staying joined to those it still lists.
  // Not before the end: the entry keeps punting (several) until the dump
  // has listed all of it.
  // A prefix holding a route the last dump may have hidden changes: what
  // the kernel did to the hidden route is not known, so the kernel is asked
  // again (the re-dump sweeps it, or keeps it where it is still hidden).
  if (!(nlmsg_flags & NLM_F_MULTI) &&
      std::any_of(entries.begin(), entries.end(), [](const auto& e) { return e.second.unlisted; })) {
    redump_wanted_ = true;
  }
  if (!r.del && (nlmsg_flags & NLM_F_MULTI) && it != entries.end() && it->second.gen != gen_) {
    it->second.unlisted = false;  // listed by this dump (its end decides again)
  }
  // IPv6: this dump listed the route before: the kernel holds it twice.
  const bool listed_again = !r.del && p.family() == Family::kV6 && (nlmsg_flags & NLM_F_MULTI) &&
                            it != entries.end() && NoteDumpListing(p, key, it->second, r);
  if (r.del && p.family() == Family::kV6) {
    // A DELROUTE naming some next-hops removes those; the route goes with its last.
    if (it == entries.end()) return;
    if (Whole(it->second.route) && it->second.copies > 1) {
      --it->second.copies;  // the kernel deleted one copy
      return;
    }
    auto& have = it->second.route.paths;
    // A gateway names one multipath route's sibling; a path without one a
    // route of its own, of which the kernel deleted one (it may hold a copy).
    for (const NlPath& d : r.paths) {
      if (d.gateway) {
        std::erase_if(have, [&](const NlPath& x) { return x.SameHop(d); });
      } else if (auto x = std::find_if(have.begin(), have.end(), [&](const NlPath& y) { return y.SameHop(d); });
                 x != have.end()) {
        have.erase(x);
      }
    }
    if (r.paths.empty() || have.empty()) {
      entries.erase(it);
    } else {
      it->second.several = SeveralRoutes(have);
    }
  } else if (r.del) {
    // IPv4: a multipath route's next-hop may be named alone: find the entry holding it.
    auto holds_all = [&](const Entry& e) {
      return !r.paths.empty() && r.paths.size() < e.route.paths.size() &&
             std::all_of(r.paths.begin(), r.paths.end(), [&](const NlPath& d) {
               return std::find(e.route.paths.begin(), e.route.paths.end(), d) != e.route.paths.end();
             });
    };
    bool partial = false;
    if (it == entries.end()) {
      for (auto e = entries.begin(); e != entries.end(); ++e) {
        if (SameRank(e->first, key) && holds_all(e->second)) {
          it = e;
          partial = true;
          break;
        }
      }
    }
    if (it == entries.end()) return;
    if (partial) {
      auto& have = it->second.route.paths;
      std::erase_if(have, [&](const NlPath& x) { return std::find(r.paths.begin(), r.paths.end(), x) != r.paths.end(); });
    } else {
      entries.erase(it);
    }
  } else {
    // A next-hop object's change is announced as a replace of each route
    // using it, alone: an appended sibling of the same rank stays (found by
    // tests/kdiff).
    auto same_object = r.nh_id == 0 ? entries.end() : std::find_if(entries.begin(), entries.end(), [&](const auto& x) {
      return SameRank(x.first, key) && x.second.route.nh_id == r.nh_id;
    });
    std::optional<int64_t> place;  // IPv4: the place of the route it replaced
    // IPv6: the routes of the new route's entry a replace left (the other
    // kind's, or all when the kernel's choice is not known), and where among
    // them the replaced route stood.
    std::vector<NlPath> beside;
    size_t beside_at = 0;
    uint32_t copies = 1;
    if ((nlmsg_flags & NLM_F_REPLACE) && same_object != entries.end()) {
      place = same_object->second.order;
      copies = same_object->second.copies;
      // An object's change or `ip route replace P nhid N`, which takes the
      // first IPv6 route of its kind — maybe another entry's: asked again.
      if (p.family() == Family::kV6 && std::any_of(entries.begin(), entries.end(), [&](const auto& x) {
            return &x != &*same_object && SameRank(x.first, key) && !Ecmp(x.second.route);
          })) {
        ++counts_.unsure_replaces;
        redump_wanted_ = true;
      }
      entries.erase(same_object);
    } else if ((nlmsg_flags & NLM_F_REPLACE) && p.family() == Family::kV6) {
      beside_at = ReplaceSameRankV6(entries, key, r);
      if (auto left = entries.find(key); left != entries.end()) {
        if (Whole(r)) {
          copies = left->second.copies + 1;  // the replace took another route, not this one's copy
        } else {
          beside = std::move(left->second.route.paths);
        }
      }
    } else if (nlmsg_flags & NLM_F_REPLACE) {
      place = ReplaceFirstOfRankV4(entries, key);
    }
    if (p.family() == Family::kV4 && !place) place = PlaceV4(entries, key, nlmsg_flags);
    Entry& e = entries[key];
    if (place) e.order = *place;
    if (nlmsg_flags & NLM_F_REPLACE) {
      e.copies = copies;
    } else if (listed_again && Whole(r)) {
      ++e.copies;
    }
    // IPv6 names every next-hop of a multipath route in each notification;
    // one that does not name those already held is another route (IPv6
    // routes without a gateway are not joined into a multipath route).
    const bool replace = (nlmsg_flags & NLM_F_REPLACE) != 0;
    auto names = [&](const NlPath& x) { return NamesHop(r.paths, x); };
    // The paths are kept in the kernel's order of its routes (a new route
    // goes last, a replacing one where the replaced one stood): a replace
    // takes the first route of its kind (ReplaceSameRankV6).
    // A device route a dump lists again is a copy: a route of its own.
    const bool copy = listed_again && !Whole(r);
    const bool another = !replace && p.family() == Family::kV6 && !e.route.paths.empty() &&
                         (copy || !std::all_of(e.route.paths.begin(), e.route.paths.end(), names));
    if (copy) {
      r.paths.insert(r.paths.begin(), e.route.paths.begin(), e.route.paths.end());
    } else if (another) {
      std::vector<NlPath> held;
      for (const NlPath& x : e.route.paths) {
        if (!names(x)) held.push_back(x);
      }
      held.insert(held.end(), r.paths.begin(), r.paths.end());
      r.paths = std::move(held);
    }
    const bool kept_beside = !another && !beside.empty();
    if (kept_beside) {
      beside.insert(beside.begin() + static_cast<std::ptrdiff_t>(std::min(beside_at, beside.size())), r.paths.begin(),
                    r.paths.end());
      r.paths = std::move(beside);
    }
    e.several = another || kept_beside || (e.several && !replace);
    e.route = std::move(r);
    e.gen = gen_;
  }
}

// IPv4 replaces the first route of the rank (fib_table_insert: fa_first),
// whatever its type or paths, and leaves the others; the new route takes its
// place. Returns that place (none: there was no route of the rank).
std::optional<int64_t> KernelTable::ReplaceFirstOfRankV4(std::map<Key, Entry>& entries, const Key& key) {
  auto first = entries.end();
  for (auto e = entries.begin(); e != entries.end(); ++e) {
    if (SameRank(e->first, key) && (first == entries.end() || e->second.order < first->second.order)) first = e;
  }
  if (first == entries.end()) return std::nullopt;
  const int64_t place = first->second.order;
  entries.erase(first);
  return place;
}

// Where a new IPv4 route goes among those of its rank, told by the
// notification's flags (checked on 6.18): NLM_F_APPEND after them, none of
// NLM_F_EXCL/APPEND/REPLACE (`ip route prepend`) before them, NLM_F_EXCL the
// only one. A dump (NLM_F_MULTI) lists them in the kernel's order; a route
// announced again otherwise keeps its place.
int64_t KernelTable::PlaceV4(const std::map<Key, Entry>& entries, const Key& key, uint16_t nlmsg_flags) {
  auto it = entries.find(key);
  if (it != entries.end() && !(nlmsg_flags & NLM_F_MULTI)) return it->second.order;
  if (!(nlmsg_flags & (NLM_F_MULTI | NLM_F_APPEND | NLM_F_EXCL))) {
    std::optional<int64_t> first;
    for (const auto& [k, e] : entries) {
      if (k != key && SameRank(k, key) && (!first || e.order < *first)) first = e.order;
    }
    if (first) return *first - 1;
  }
  return ++last_order_;
}

// IPv6 replaces the first route of the metric that is, like the new one, a
// multipath candidate (unicast via a gateway) or not; without one, the first
// of the metric (fib6_add_rt2node), and routes of the other kind stay (an
// `ip -6 route replace P via G` leaves `P dev X` of the same metric). The
// routes of one entry are in the kernel's order (ApplyRoute), so the first
// is known among them; among routes of several entries (other types, next-hop
// objects) it is not told, and then none is erased and the prefix punts
// (several routes of one rank) rather than guess (found by
// the kdiff soak). An entry holding several routes (`several`: its gateway
// paths are one multipath route, each path without a gateway a route of its
// own) offers each of them: the kernel's replace takes one and leaves the
// others (checked against the kernel: `KernelSourceTest.FrrReplaceTakesOneRouteOfItsRank`,
// `KernelV6ReplaceTest.*`). Returns where
// in the new route's entry the replaced route stood (SIZE_MAX: last).
bool KernelTable::Ecmp(const NlRoute& x) {
  return x.type == RTN_UNICAST && x.nh_id == 0 && !x.paths.empty() &&
         std::all_of(x.paths.begin(), x.paths.end(), [](const NlPath& y) { return y.gateway.has_value(); });
}

bool KernelTable::Whole(const NlRoute& r) { return r.type != RTN_UNICAST || r.nh_id != 0; }

size_t KernelTable::ReplaceSameRankV6(std::map<Key, Entry>& entries, const Key& key, const NlRoute& r) {
  // A route of the rank: a whole entry, or part of a `several` one (at: its
  // first path's place in the entry).
  struct Held {
    std::map<Key, Entry>::iterator e;
    std::vector<NlPath> part;  // empty: the whole entry
    bool ecmp = false;
    size_t at = 0;
  };
  std::vector<Held> same, like;
  for (auto e = entries.begin(); e != entries.end(); ++e) {
    if (!SameRank(e->first, key)) continue;
    const NlRoute& x = e->second.route;
    if (!e->second.several || x.type != RTN_UNICAST || x.nh_id != 0) {
      same.push_back({e, {}, Ecmp(x), 0});
      continue;
    }
    Held gateways{e, {}, true, 0};
    for (size_t i = 0; i < x.paths.size(); ++i) {
      const NlPath& y = x.paths[i];
      if (!y.gateway) {
        same.push_back({e, {y}, false, i});
      } else {
        if (gateways.part.empty()) gateways.at = i;
        gateways.part.push_back(y);
      }
    }
    if (!gateways.part.empty()) same.push_back(std::move(gateways));
  }
  for (const Held& h : same) {
    if (h.ecmp == Ecmp(r)) like.push_back(h);
  }
  const std::vector<Held>& candidates = like.empty() ? same : like;
  constexpr size_t kLast = SIZE_MAX;
  if (candidates.empty()) return kLast;
  const bool one_entry = std::all_of(candidates.begin(), candidates.end(), [&](const Held& h) { return h.e == candidates[0].e; });
  if (!one_entry) {
    // The kernel took one of them, and never says which: the routes kept
    // here may now hold one it no longer has, which would forward once the
    // others go. Only the kernel knows: ask it again (a re-dump rebuilds
    // the prefix, RedumpWanted); the prefix punts meanwhile (several).
    ++counts_.unsure_replaces;
    redump_wanted_ = true;
    return kLast;
  }
  const Held* gone = &*std::min_element(candidates.begin(), candidates.end(),
                                         [](const Held& a, const Held& b) { return a.at < b.at; });
  Entry& e = gone->e->second;
  if (gone->part.empty() && Whole(e.route) && e.copies > 1) {
    --e.copies;  // it took the first copy
    return kLast;
  }
  auto& paths = e.route.paths;
  if (gone->part.size() == 1 && !gone->part[0].gateway) {
    paths.erase(paths.begin() + static_cast<std::ptrdiff_t>(gone->at));  // that route, not a copy of it
  } else {
    std::erase_if(paths, [&](const NlPath& y) { return std::find(gone->part.begin(), gone->part.end(), y) != gone->part.end(); });
  }
  if (gone->part.empty() || paths.empty()) {
    entries.erase(gone->e);
    return kLast;
  }
  // Left: its gateway paths (one route) and each path without a gateway.
  e.several = SeveralRoutes(paths);
  return gone->e->first == key ? gone->at : kLast;
}

// Routes of an ignored protocol are not kept. What they still do: a
// replacing one removes the route of its rank it replaced — by the kernel's
// rule for any replace (ReplaceFirstOfRankV4, ReplaceSameRankV6; checked
// against the kernel: `KernelSourceTest.FrrReplaceTakesOneRouteOfItsRank`),
// and their gateways are asked to be resolved. Their own deletions find
// nothing.
Status KernelTable::ApplyIgnoredRoute(const nlmsghdr* msg, const NlRoute& r, const Key& key) {
  if (r.del) return OkStatus();
  if ((msg->nlmsg_flags & NLM_F_REPLACE) && routes_.Has(r.prefix)) {
    ChangeRoutes(r.prefix, [&](Entries& entries) {
      if (r.prefix.family() == Family::kV6) {
        ReplaceSameRankV6(entries, key, r);
      } else {
        ReplaceFirstOfRankV4(entries, key);
      }
    });
  }
  // Their gateways stay wanted for as long as the process runs (a few
  // addresses: the peers), instead of a count per route.
  for (const NlPath& path : r.paths) {
    if (path.gateway && path.ifindex != 0 && !gateways_.count(NeighKey{path.ifindex, *path.gateway})) {
      NlRoute one;
      one.paths = {path};
      AddGateways(one, +1);
    }
  }
  return OkStatus();
}

KernelTable::Key KernelTable::KeyOf(int rank, const NlRoute& r) {
  // IPv6 keeps one route per table, metric and prefix: a second next-hop of
  // the same metric joins it (each notification then names them all), and a
  // delete may name some of them.
  // A route by next-hop object is never joined with another (IPv6 keeps two
  // of one metric apart, each naming its object): its object is its identity.
  // A blackhole/unreachable/prohibit route never joins one: the kernel keeps
  // it beside a unicast route of the same metric (the last field, an ifindex
  // for IPv4, holds its type).
  // IPv4 keeps apart any two routes the kernel keeps apart (fib_info and
  // type differ: `ip route append` of a blackhole beside an unreachable, of
  // `via G mtu 1400` beside `via G`): the last field hashes what tells them
  // apart; a delete names the route it removed with all of it.
  if (r.prefix.family() == Family::kV6) {
    return Key{rank, r.priority, r.tos, r.nh_id, std::nullopt, r.type == RTN_UNICAST ? 0u : r.type, 0};
  }
  uint64_t v4 = MixBits(uint64_t{r.type} | uint64_t{r.protocol} << 8 | uint64_t{r.scope} << 16);
  for (const NlPath& x : r.paths) {
    const uint64_t gw = x.gateway ? static_cast<uint64_t>(x.gateway->v6()) ^ static_cast<uint64_t>(x.gateway->v6() >> 64) : ~0ull;
    v4 = MixBits(v4 ^ MixBits(gw ^ (uint64_t{x.ifindex} << 32 | uint64_t{x.weight} << 8 | x.gateway.has_value())));
  }
  v4 ^= std::hash<std::string>()(r.metrics_and_src);
  if (r.nh_id != 0) return Key{rank, r.priority, r.tos, r.nh_id, std::nullopt, r.type == RTN_UNICAST ? 0u : r.type, v4};
  if (r.paths.size() == 1) return Key{rank, r.priority, r.tos, 0, r.paths[0].gateway, r.paths[0].ifindex, v4};
  return Key{rank, r.priority, r.tos, 0, std::nullopt, 0, v4};
}

bool KernelTable::SameRank(const Key& a, const Key& b) {
  return std::get<0>(a) == std::get<0>(b) && std::get<1>(a) == std::get<1>(b) && std::get<2>(a) == std::get<2>(b);
}

void KernelTable::ChangeRoutes(const Prefix& p, const std::function<void(Entries&)>& change) {
  const std::optional<std::vector<NextHop>> before = Emitted(p);
  Entries entries = routes_.Take(p, gen_);
  change(entries);
  routes_.Put(p, std::move(entries), gen_);
  EmitIfChanged(p, before);
}

// What a route of kind k forwards along on the device. A route by next-hop
// object (RTA_NH_ID) forwards along the object's paths as they are now; an
// unknown object, a resilient group, ... punt.
std::vector<NextHop> KernelTable::KindOutput(const KernelRoutes::Kind& k) {
  const NlRoute& r = k.route;
  uint8_t type = r.type;
  std::vector<NlPath> usable = r.paths;
  std::string unsupported = r.unsupported;
  // The local table is the host's: punted. The device has no TOS; a
  // TOS-specific route takes that TOS's traffic elsewhere, so its prefix
  // punts.
  if (k.rank == 0 || r.tos != 0) return {NextHop::ToHost()};
  if (r.nh_id != 0) {
    NexthopObjects::Resolved o = nexthops_.Resolve(r.nh_id);
    if (type == RTN_UNICAST) type = o.type;
    usable = std::move(o.paths);
    if (unsupported.empty()) unsupported = std::move(o.unsupported);
  }
  // A path over a link without carrier, or not operationally up (ApplyLink),
  // is used by the kernel only while ignore_routes_with_linkdown is 0, and
  // then its packets may be dropped: the device never uses it. The link's
  // state now decides, not a flag some message carried (see
  // ForgetLinkStateFlags).
  for (NlPath& x : usable) {
    if (no_carrier_.count(x.ifindex)) {
      x.flags |= RTNH_F_LINKDOWN;
    } else {
      x.flags &= static_cast<uint8_t>(~RTNH_F_LINKDOWN);
    }
  }
  return FibPaths(type, r.prefix.family(), usable, unsupported, [this](uint32_t ifindex) { return ports_.Port(ifindex); })
      .paths;
}

std::optional<std::vector<NextHop>> KernelTable::OutputOf(const Prefix& p) {
  // A policy rule may send p's traffic to a table not followed here.
  const bool policy = rules_.Covers(p);
  const bool rule_prefix = policy && rules_.IsDestination(p);
  const bool refusing = !counts_.refusing.empty();
  static const std::vector<NextHop> to_host{NextHop::ToHost()};
  auto kind_output = [this](const KernelRoutes::Kind& k) { return KindOutput(k); };
  if (const std::optional<uint32_t> single = routes_.Single(p)) {
    const KernelRoutes::Kind& k = routes_.kind(*single);
    if (!refusing && !RankActive(k.rank)) return rule_prefix ? std::optional(to_host) : std::nullopt;
    if (policy || refusing) return to_host;
    return routes_.Output(*single, kind_output);
  }
  const Entry* best = nullptr;
  const Key* best_key = nullptr;
  bool local = false, ambiguous = false, tos = false;
  const Entries entries = routes_.Get(p, gen_);
  for (const auto& [key, e] : entries) {
    if (!refusing && !RankActive(std::get<0>(key))) continue;
    if (std::get<0>(key) == 0) local = true;
    if (e.route.tos != 0) tos = true;
    if (e.several || e.unlisted) ambiguous = true;
    if (!best) {
      best = &e;
      best_key = &key;
    } else if (SameRank(*best_key, key)) {
      ambiguous = true;
    }
  }
  if (!best) return rule_prefix ? std::optional(to_host) : std::nullopt;
  if (local || ambiguous || tos || policy || refusing) return to_host;
  KernelRoutes::Kind k;
  k.route = best->route;
  k.rank = std::get<0>(*best_key);
  return KindOutput(k);
}

// What p was given, by the record in its word (Remember): its single kind's
// output, to-host, nothing, or kept in odd_. A prefix without routes (a
// policy rule's destination) is in odd_ or was given nothing.
std::optional<std::vector<NextHop>> KernelTable::Emitted(const Prefix& p) {
  const std::optional<uint8_t> given = routes_.given(p);
  if (!given || *given == kGivenOdd) {
    auto odd = odd_.find(p);
    return odd != odd_.end() ? odd->second : std::nullopt;
  }
  if (*given == kGivenToHost) return std::vector<NextHop>{NextHop::ToHost()};
  if (*given == kGivenNothing) return std::nullopt;
  const std::optional<uint32_t> single = routes_.Single(p);
  if (!single) return std::nullopt;
  return routes_.Output(*single, [this](const KernelRoutes::Kind& k) { return KindOutput(k); });
}

void KernelTable::EmitIfChanged(const Prefix& p, const std::optional<std::vector<NextHop>>& before) {
  std::optional<std::vector<NextHop>> now = OutputOf(p);
  if (now != before) Emit(p, now);
  Remember(p, std::move(now));
}

void KernelTable::EmitRoute(const Prefix& p) {
  std::optional<std::vector<NextHop>> now = OutputOf(p);
  Emit(p, now);
  Remember(p, std::move(now));
}

void KernelTable::Emit(const Prefix& p, const std::optional<std::vector<NextHop>>& now) {
  if (!now) {
    sink_.DeleteRoute(p, RouteSource::kKernel);
  } else {
    sink_.UpsertRoute(Route{p, RouteSource::kKernel, options_.distance, *now});
  }
  ++counts_.route_updates;
}

// Records what p was given: its single kind's output (the common case),
// to-host (a punted prefix, every one while the table is refused), nothing,
// or — rarely — the output itself in odd_.
void KernelTable::Remember(const Prefix& p, std::optional<std::vector<NextHop>> given) {
  odd_.erase(p);
  if (!routes_.Has(p)) {
    if (given) odd_[p] = std::move(given);
    return;
  }
  const std::optional<uint32_t> single = routes_.Single(p);
  uint8_t record = kGivenOdd;
  if (!given) {
    record = kGivenNothing;
  } else if (single && *given == routes_.Output(*single, [this](const KernelRoutes::Kind& k) { return KindOutput(k); })) {
    record = kGivenKind;
  } else if (given->size() == 1 && (*given)[0] == NextHop::ToHost()) {
    record = kGivenToHost;
  }
  routes_.SetGiven(p, record);
  if (record == kGivenOdd) odd_[p] = std::move(given);
}

Status KernelTable::ApplyRule(const nlmsghdr* msg) {
  ASSIGN_OR_RETURN(PolicyRules::Change change, rules_.Apply(msg, gen_, options_.tables));
  if (change.ignored) ++counts_.ignored;
  if (change.reevaluate) EmitInside(*change.reevaluate);
  return OkStatus();
}

// Re-evaluates outer and every prefix inside it.
void KernelTable::EmitInside(const Prefix& outer) {
  std::vector<Prefix> inside{outer};
  for (const Prefix& p : routes_.Prefixes()) {
    if (p != outer && outer.Contains(p)) inside.push_back(p);
  }
  for (const Prefix& p : rules_.Destinations()) {
    if (p != outer && outer.Contains(p) && !routes_.Has(p)) inside.push_back(p);
  }
  for (const Prefix& p : inside) EmitRoute(p);
}

// After a link or port change: the kinds whose output changed are
// re-emitted; a change of what every route depends on (the VRF context:
// which tables are active, whether everything punts) re-emits every prefix.
void KernelTable::ReevaluateAll() {
  std::string context = counts_.refusing + '|';
  for (size_t rank = 0; rank <= options_.tables.size(); ++rank) context += RankActive(static_cast<int>(rank)) ? '1' : '0';
  const std::vector<uint32_t> changed =
      routes_.Recompute([](const KernelRoutes::Kind&) { return true; }, [this](const KernelRoutes::Kind& k) { return KindOutput(k); });
  std::vector<Prefix> prefixes;
  if (context != context_) {
    context_ = std::move(context);
    prefixes = routes_.Prefixes();
  } else {
    prefixes = PrefixesOfKinds(changed);
  }
  for (const Prefix& p : rules_.Destinations()) {
    if (!routes_.Has(p)) prefixes.push_back(p);
  }
  for (const Prefix& p : prefixes) EmitRoute(p);
  std::vector<NeighKey> keys;
  for (const auto& [k, n] : neighs_) keys.push_back(k);
  for (const auto& [k, n] : neigh_emitted_) {
    if (!neighs_.count(k)) keys.push_back(k);
  }
  for (const NeighKey& k : keys) EmitNeigh(k);
  ResolvePending();
}

std::vector<Prefix> KernelTable::PrefixesOfKinds(const std::vector<uint32_t>& kinds) const {
  if (kinds.empty()) return {};
  const std::unordered_set<uint32_t> set(kinds.begin(), kinds.end());
  return routes_.PrefixesOf([&](uint32_t id, const KernelRoutes::Kind&) { return set.count(id) != 0; });
}

}  // namespace fibnic
