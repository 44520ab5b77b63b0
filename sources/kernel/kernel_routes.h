// The routes KernelTable holds, at Internet scale: a prefix is one 32-bit
// word in a PrefixWordMap, naming an interned *kind* — everything of a
// kernel route but its prefix (table rank, metric, type, protocol, paths or
// next-hop object, ...). A BGP peer's routes share a handful of kinds (one
// gateway, or zebra's one object per peer), so a full table costs ~10-12 B
// per IPv4 route, not the ~850 of a parsed message per prefix in node maps.
//
// A prefix holding several kernel routes (local and main, two metrics, an
// `ip route append`, IPv6 same-metric routes of different kinds) is rare and
// kept whole in a side map. KernelTable works on one prefix's routes as a
// plain map (Take ... Put), whichever way they are stored.
//
// Each kind's output — what the device is given for a route of that kind —
// is cached in it (KernelTable computes it): the dedupe of an update and the
// re-evaluation after a link or next-hop object change are per kind, and a
// walk of the words finds the prefixes of the kinds that changed.
//
// Each prefix also carries two 2-bit fields that live and die with it (a
// prefix taken and put back keeps them): a note for the offload replies to
// zebra (sources/route_notes.h: what zebra was last told about it), so FPM
// needs no table of its own; and KernelTable's record of what the device was
// given for it (its kind's output, to-host, nothing, or kept apart), so that
// a whole table punted (a VRF split) costs no map entry per prefix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/ip.h"
#include "common/prefix_word_map.h"
#include "rib/route.h"
#include "sources/netlink/netlink_route.h"

namespace fibnic {

// (table rank, priority, tos, next-hop object, path identity, IPv4
// identity): see KernelTable::KeyOf.
using KernelRouteKey = std::tuple<int, uint32_t, uint8_t, uint32_t, std::optional<IpAddr>, uint32_t, uint64_t>;

struct KernelRouteEntry {
  NlRoute route;
  uint64_t gen = 0;
  // IPv6: routes of one prefix and metric that are not one multipath route
  // (the kernel's own fe80::/64 on two links): the kernel uses one of them,
  // the device cannot tell which, so the prefix punts while there are two.
  bool several = false;
  // IPv6: kept though the last dump did not list it (or all of it), because
  // the kernel's dump may hide it beside a multipath route
  // (KernelTable::MayBeHiddenByTheDump): the prefix punts while it is held,
  // and the source asks the kernel again once the prefix changes.
  bool unlisted = false;
  // IPv4: the route's place among those of its rank — the kernel's order,
  // which `ip route replace` and a plain `ip route del` act on (the first).
  // A prefix's only route has none (0).
  int64_t order = 0;
  // IPv6: how many times the kernel holds this route, when it is a whole
  // route (a blackhole, unreachable or prohibit route, or one by next-hop
  // object; KernelTable::Whole). The kernel refuses to add a route identical
  // to one it holds, but a replace takes the first route of its kind, which
  // need not be the one the new route repeats. The copies answer alike; a
  // delete takes one of them.
  uint32_t copies = 1;
};
using KernelRouteEntries = std::map<KernelRouteKey, KernelRouteEntry>;

class KernelRoutes {
 public:
  struct Kind {
    NlRoute route;  // its prefix: the family's zero prefix
    int rank = 0;
    KernelRouteKey key;
    uint32_t users = 0;  // routes naming it; 0 = free
    // The device's paths for a route of this kind as last computed (by
    // Output or Recompute): what its routes were last given.
    std::vector<NextHop> out;
    bool out_known = false;
  };
  using KeyFn = KernelRouteKey (*)(int rank, const NlRoute& r);
  // kind_changes(route, +1 / -1): a kind is made / freed (gateway counts).
  KernelRoutes(KeyFn key_of, std::function<void(const NlRoute&, int delta)> kind_changes);

  size_t size() const { return words_.size(); }  // prefixes held
  bool Has(const Prefix& p) const { return words_.Find(p).has_value(); }
  // A copy of p's routes (each entry's gen: `gen` if the route was seen in
  // the current dump, else 0).
  KernelRouteEntries Get(const Prefix& p, uint64_t gen) const;
  // The same, and they leave the table until Put, which must follow (with
  // what is left of them, maybe nothing): the kinds they named are released
  // only then, so a route taken and put back unchanged keeps its kind (and
  // its gateways stay counted, never asked to be resolved again).
  KernelRouteEntries Take(const Prefix& p, uint64_t gen);
  void Put(const Prefix& p, KernelRouteEntries entries, uint64_t gen);
  // When p's only route is r (of rank `rank`) already: marks it seen in the
  // current dump and returns true — a re-dump's unchanged route costs a
  // lookup and a compare, no copy. A dump's second listing of it (`dump`
  // and seen already) returns false: the kernel holds it twice.
  bool TouchIfSame(const Prefix& p, int rank, const NlRoute& r, bool dump);
  // p's kind when it holds exactly one route (not `several`), else nullopt.
  std::optional<uint32_t> Single(const Prefix& p) const;
  const Kind& kind(uint32_t id) const { return kinds_[id]; }

  // The output of kind `id`, computed by `compute` the first time.
  const std::vector<NextHop>& Output(uint32_t id, const std::function<std::vector<NextHop>(const Kind&)>& compute);
  // Recomputes the cached outputs of the kinds `pick` selects; returns the
  // ids of those whose output changed (or was not cached).
  std::vector<uint32_t> Recompute(const std::function<bool(const Kind&)>& pick,
                                  const std::function<std::vector<NextHop>(const Kind&)>& compute);

  // The prefixes with a route whose kind `pick(id, kind)` selects (one walk;
  // `pick` is asked once per kind).
  std::vector<Prefix> PrefixesOf(const std::function<bool(uint32_t id, const Kind&)>& pick) const;
  // Every prefix held.
  std::vector<Prefix> Prefixes() const;
  // Every held prefix with a route not seen at generation `gen` (a sweep).
  std::vector<Prefix> Unseen(uint64_t gen) const;
  // The same for the next `max` prefixes from `cursor` on (0 = the start);
  // returns where the next call goes on, 0 once the walk is through.
  size_t UnseenFrom(size_t cursor, size_t max, uint64_t gen, std::vector<Prefix>& out);
  // A dump begins: no route was seen in it yet.
  void ClearSeen();

  // The prefix's note (0 when not held or never set); setting it on a
  // prefix not held does nothing.
  uint8_t note(const Prefix& p) const;
  void SetNote(const Prefix& p, uint8_t note);
  void ClearNotes();
  // The same for KernelTable's record of what p was given (0-3; nullopt
  // when p is not held).
  std::optional<uint8_t> given(const Prefix& p) const;
  void SetGiven(const Prefix& p, uint8_t given);
  // Up to `max` prefixes from `cursor` on (0 = the start), as UnseenFrom:
  // fn(prefix, the kinds of its routes, uint8_t& note) may change the note.
  template <typename Fn>
  size_t WalkNotes(size_t cursor, size_t max, Fn&& fn) {
    std::vector<const Kind*> ks;
    return words_.Walk(cursor, max, [&](const Prefix& p, uint32_t& w) {
      ks.clear();
      ForEachKindOf(w, p, [&](uint32_t kind, bool, uint64_t) { ks.push_back(&kinds_[kind]); });
      uint8_t n = static_cast<uint8_t>((w & kNoteBits) >> kNoteShift);
      fn(p, static_cast<const std::vector<const Kind*>&>(ks), n);
      w = (w & ~kNoteBits) | ((uint32_t{n} << kNoteShift) & kNoteBits);
    });
  }
  // The kinds of p's routes (none when not held).
  std::vector<const Kind*> KindsOf(const Prefix& p) const;

  size_t kinds() const { return index_.size(); }
  size_t memory() const;

 private:
  // The word: bit 7 seen in the current dump, bits 8-9 the note, 10-11 what
  // was given, bits 12-31 the kind (kMulti: the prefix's routes are in
  // side_; so is a route of a kind past it — a million kinds, where a full
  // table has a few thousand).
  static constexpr uint32_t kSeenBit = 1u << 7;
  static constexpr int kNoteShift = 8;
  static constexpr uint32_t kNoteBits = 3u << kNoteShift;
  static constexpr int kGivenShift = 10;
  static constexpr uint32_t kGivenBits = 3u << kGivenShift;
  static constexpr int kKindShift = 12;
  static constexpr uint32_t kMulti = (1u << 20) - 1;
  struct Held {
    uint32_t kind = 0;
    uint64_t gen = 0;
    bool several = false;
    bool unlisted = false;
    uint32_t copies = 1;
    int64_t order = 0;
  };
  void PutOnly(const Prefix& p, KernelRouteEntries entries, uint64_t gen);
  uint32_t Intern(const NlRoute& r, int rank);
  void Release(uint32_t id);
  static uint64_t HashOf(const NlRoute& r, int rank);
  static bool Same(const Kind& k, const NlRoute& r, int rank);
  KernelRouteEntry EntryOf(const Prefix& p, uint32_t kind, uint64_t gen, const Held& flags) const;
  // fn(kind, seen, gen) for each route of the prefix whose word is `word`.
  template <typename Fn>
  void ForEachKindOf(uint32_t word, const Prefix& p, Fn&& fn) const {
    const uint32_t kind = word >> kKindShift;
    if (kind != kMulti) {
      fn(kind, (word & kSeenBit) != 0, uint64_t{0});
      return;
    }
    for (const Held& h : side_.at(p)) fn(h.kind, false, h.gen);
  }

  KeyFn key_of_;
  std::function<void(const NlRoute&, int)> kind_changes_;
  PrefixWordMap words_;
  std::unordered_map<Prefix, std::vector<Held>> side_;
  std::vector<uint32_t> taken_;  // kinds of the routes taken, released at the Put
  uint32_t taken_bits_ = 0;      // the note and given of the prefix taken, put back with it
  std::vector<Kind> kinds_;
  std::vector<uint32_t> free_;
  std::unordered_multimap<uint64_t, uint32_t> index_;  // hash of a kind → its id
  uint32_t last_ = 0;                                  // the kind interned last (a peer's routes come in runs)
};

}  // namespace fibnic
