// What the FPM source keeps per zebra route beside the RIB: which next-hop
// set the route names (zebra's next-hop group id, or an interned inline path
// set), the rtm_protocol zebra sent, the offload reply last sent, whether
// the current replay has re-sent it and whether the kernel's re-dump in
// progress showed it. Everything else about the route (its paths as the RIB
// sees them) lives once, in the RIB.
//
// Not in the RIB's own slots: the RIB lives on the pipeline thread behind the
// coalescing update queue, while the FPM source needs each route's set and
// stale mark at once on the sources' thread (a frame's old set, the marks of
// a replay, a sweep, the users of a changed group) — reading the RIB there
// would make a source wait for the Fib's strand and see a state the queue
// has not yet reached (docs/architecture.md).
//
// A route is its prefix and one 32-bit word: the length, the stale and
// kernel-seen marks, the reply and a *kind*, an interned (set, protocol,
// kernel object) triple — the routes of one BGP peer share one (zebra
// installs one peer's routes by one kernel object). IPv4: 8 bytes; IPv6 up to /64 (whose low half is
// zero): 12; longer IPv6: 20. Three open-addressing tables kept 64-80% full
// (linear probing, backward-shift deletion; grown by a quarter): 10-12.5 B
// per IPv4 route and 15-19 per IPv6 route up to /64, against ~1 KB when each
// route was a node-based map entry holding zebra's whole message.
// More kinds at once than the word can name (2^21: routes naming millions of
// distinct sets) are not refused: such routes go whole into a side map.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/hash_mix.h"
#include "common/ip.h"

namespace fibnic {

struct FpmRouteRef {
  uint32_t set = 0;       // FpmSetId (fpm_table.h)
  bool stale = false;     // marked at a reconnect, cleared when zebra re-sends it
  uint8_t protocol = 0;   // rtm_protocol zebra sent (its replies must carry it)
  uint8_t replied = 0;    // FpmOffload last replied (0-3); 0 = zebra waits for one
  // The kernel's re-dump in progress showed a route at this prefix (FpmTable::KernelDumpBegins).
  bool kernel_seen = false;
  // The kernel's next-hop object of the kernel's last word on the route
  // that agreed with an inline route of FPM's (0 = none or not known; always
  // 0 for routes by object: their set is the kernel's id). zebra installs
  // inline routes by objects in the kernel too, and a later frame changing
  // the route's paths is compared with that object (fpm_flux.h).
  uint32_t kernel_nh = 0;
  bool operator==(const FpmRouteRef&) const = default;
};

class FpmRouteRefs {
 public:
  static constexpr uint32_t kMaxKinds = 1u << 21;
  // max_kinds: kinds named in the slots at most (tests lower it to reach the side map).
  explicit FpmRouteRefs(uint32_t max_kinds = kMaxKinds) : max_kinds_(max_kinds) {}

  size_t size() const { return v4_.size + v6_.size + v6_long_.size + wide_.size(); }
  std::optional<FpmRouteRef> Find(const Prefix& p) const;
  void Put(const Prefix& p, FpmRouteRef ref);  // inserts or replaces
  bool Erase(const Prefix& p);                 // false when absent

  // Every route: fn(prefix, set, bool& stale) may change the stale mark.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    auto each = [&](auto& t) {
      for (auto& e : t.slots) {
        if (Empty(e.word)) continue;
        bool stale = e.word & kStaleBit;
        fn(PrefixOf(e), kinds_[KindOf(e.word)].set, stale);
        e.word = stale ? e.word | kStaleBit : e.word & ~kStaleBit;
      }
    };
    each(v4_), each(v6_), each(v6_long_);
    for (auto& [p, r] : wide_) fn(p, r.set, r.stale);
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    auto each = [&](const auto& t) {
      for (const auto& e : t.slots) {
        if (!Empty(e.word)) fn(PrefixOf(e), kinds_[KindOf(e.word)].set, (e.word & kStaleBit) != 0);
      }
    };
    each(v4_), each(v6_), each(v6_long_);
    for (const auto& [p, r] : wide_) fn(p, r.set, r.stale);
  }
  // Up to `max` routes from position `cursor` on (0 = the start), with their
  // refs (fn(prefix, FpmRouteRef&) may change `replied` and `kernel_seen`); returns where the
  // next call goes on, 0 once the walk is through. For walks spread over
  // time: routes put or erased meanwhile may be missed or seen twice.
  template <typename Fn>
  size_t Walk(size_t cursor, size_t max, Fn&& fn) {
    const size_t a = v4_.slots.size(), b = a + v6_.slots.size(), c = b + v6_long_.slots.size();
    const size_t end = c + wide_.size();
    size_t i = cursor;
    auto visit = [&](auto& e) {
      if (Empty(e.word)) return;
      --max;
      FpmRouteRef ref = RefOf(e.word);
      fn(PrefixOf(e), ref);
      e.word = (e.word & ~(kRepliedBits | kKernelSeenBit)) | (uint32_t{ref.replied & 3u} << kRepliedShift) |
               (ref.kernel_seen ? kKernelSeenBit : 0);
    };
    auto w = i > c ? std::next(wide_.begin(), static_cast<ptrdiff_t>(i - c)) : wide_.begin();
    for (; i < end && max != 0; ++i) {
      if (i < a) {
        visit(v4_.slots[i]);
      } else if (i < b) {
        visit(v6_.slots[i - a]);
      } else if (i < c) {
        visit(v6_long_.slots[i - b]);
      } else {
        --max;
        const uint32_t kernel_nh = w->second.kernel_nh;  // as in the slots: only Put changes it
        fn(w->first, w->second);
        w->second.kernel_nh = kernel_nh;
        ++w;
      }
    }
    return i == end ? 0 : i;
  }
  // Bytes held: the slots, the kinds and the side map.
  size_t memory() const;
  // Slots of the three tables (their load: size() / slots()).
  size_t slots() const { return v4_.slots.size() + v6_.slots.size() + v6_long_.slots.size(); }
  size_t kinds() const { return kind_index_.size(); }
  // Whether a route names kernel object `id` as its kernel_nh (one lookup;
  // a walk of the routes finds them).
  bool NamesKernelNh(uint32_t id) const { return id != 0 && kernel_nh_kinds_.count(id) != 0; }

 private:
  // The word: bits 0-6 the length code (kEmptyCode: a free slot), 7 the
  // stale mark, 8-9 the reply, 10 the kernel-seen mark, 11-31 the kind.
  static constexpr uint32_t kEmptyCode = 0x7F;
  static constexpr uint32_t kStaleBit = 1u << 7;
  static constexpr int kRepliedShift = 8;
  static constexpr uint32_t kRepliedBits = 3u << kRepliedShift;
  static constexpr uint32_t kKernelSeenBit = 1u << 10;
  static constexpr int kKindShift = 11;
  static bool Empty(uint32_t word) { return (word & kEmptyCode) == kEmptyCode; }
  static uint32_t KindOf(uint32_t word) { return word >> kKindShift; }
  // A slot: the prefix's address in N 32-bit words (the first N of it, most
  // significant first) and the word. N = 1 IPv4, 2 IPv6 up to /64 (length
  // code = length), 4 longer IPv6 (code = length - 64).
  template <int N>
  struct Slot {
    uint32_t key[N] = {};
    uint32_t word = kEmptyCode;
  };
  static_assert(sizeof(Slot<1>) == 8 && sizeof(Slot<2>) == 12 && sizeof(Slot<4>) == 20);
  template <int N>
  struct Table {
    std::vector<Slot<N>> slots;
    size_t size = 0;
  };
  static uint64_t Join(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }
  template <int N>
  static Prefix PrefixOf(const Slot<N>& e) {
    const int code = static_cast<int>(e.word & kEmptyCode);
    if constexpr (N == 1) {
      return Prefix::V4(e.key[0], code);
    } else if constexpr (N == 2) {
      return Prefix::V6(static_cast<U128>(Join(e.key[0], e.key[1])) << 64, code);
    } else {
      return Prefix::V6((static_cast<U128>(Join(e.key[0], e.key[1])) << 64) | Join(e.key[2], e.key[3]), code + 64);
    }
  }
  template <int N>
  static Slot<N> KeyOf(const Prefix& p);  // the slot of p, empty but for its key
  FpmRouteRef RefOf(uint32_t word) const {
    const Kind& k = kinds_[KindOf(word)];
    return {k.set, (word & kStaleBit) != 0, k.protocol, static_cast<uint8_t>((word & kRepliedBits) >> kRepliedShift),
            (word & kKernelSeenBit) != 0, k.kernel_nh};
  }
  // Kinds: (set, protocol, kernel_nh) triples named by routes in the slots, counted.
  struct Kind {
    uint32_t set = 0;
    uint8_t protocol = 0;
    uint32_t kernel_nh = 0;
    uint32_t routes = 0;  // 0 = free
  };
  struct KindKey {
    uint64_t set_protocol = 0;  // set << 8 | protocol
    uint32_t kernel_nh = 0;
    bool operator==(const KindKey&) const = default;
  };
  struct KindKeyHash {
    size_t operator()(const KindKey& k) const { return MixBits(k.set_protocol ^ MixBits(k.kernel_nh)); }
  };
  static KindKey KeyOfKind(uint32_t set, uint8_t protocol, uint32_t kernel_nh) {
    return {(uint64_t{set} << 8) | protocol, kernel_nh};
  }
  std::optional<uint32_t> Intern(const FpmRouteRef& ref);
  void Release(uint32_t kind);
  void CountKernelNh(uint32_t id, int delta);  // kernel_nh_kinds_
  bool EraseWide(const Prefix& p);
  template <int N>
  void PutIn(Table<N>& t, const Slot<N>& key, const Prefix& p, const FpmRouteRef& ref);
  template <int N>
  bool EraseIn(Table<N>& t, const Slot<N>& key);
  template <int N>
  std::optional<FpmRouteRef> FindIn(const Table<N>& t, const Slot<N>& key) const;

  uint32_t max_kinds_;
  Table<1> v4_;
  Table<2> v6_;
  Table<4> v6_long_;
  std::vector<Kind> kinds_;
  std::vector<uint32_t> kinds_free_;
  std::unordered_map<KindKey, uint32_t, KindKeyHash> kind_index_;
  uint32_t last_kind_ = 0;  // the kind interned last (a peer's routes come in runs)
  std::unordered_map<Prefix, FpmRouteRef> wide_;  // routes whose kind the word could not name
  // Non-zero kernel_nh → kinds and side-map routes naming it (NamesKernelNh).
  std::unordered_map<uint32_t, uint32_t> kernel_nh_kinds_;
};

}  // namespace fibnic
