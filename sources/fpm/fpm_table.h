// What zebra has told us over FPM: its routes and next-hop groups, turned
// into RIB upserts/deletes. Independent of sockets so that tests, the fuzz
// target and the bench drive it directly.
//
// One frame is one atomic unit: every message of a frame is parsed before
// anything is applied (a malformed frame changes nothing), and each prefix a
// frame touches is emitted once, with its final state — zebra's DEL+NEW
// pair for a route update becomes a single upsert, never a moment without
// the route.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "sources/fpm/fpm_flux.h"
#include "sources/fpm/fpm_route_refs.h"
#include "sources/netlink/kernel_route_view.h"
#include "sources/netlink/netlink_paths.h"
#include "sources/netlink/netlink_route.h"
#include "sources/netlink/nexthop_objects.h"
#include "rib/route.h"

namespace fibnic {

struct FpmTableOptions {
  uint32_t table = 254;  // zebra's table id to take (254 = main / default VRF)
  uint8_t distance = 20;
  // zebra sends its "system" routes (connected, and routes it learned from
  // the kernel) with rtm_protocol RTPROT_KERNEL when they appear, but never
  // their deletion (FRR issue #19637): taking them would leave stale routes
  // behind. They are the kernel source's. A route of an ignored protocol
  // replacing one we hold counts as its deletion.
  std::set<uint8_t> ignore_protocols = {2};  // RTPROT_KERNEL
  // Offload replies (fpm_offload.h): remember which routes zebra sent, up to
  // this many between two TakeSent() calls (0 = none are remembered).
  size_t sent_max = 0;
  // Prefixes in flux (the kernel and FPM disagree, fpm_flux.h) kept at most;
  // ~80 bytes each. Beyond, a disagreeing prefix gets a punting placeholder.
  size_t flux_max = 131072;
  // Whether the kernel holds next-hop object `id` (the kernel source's
  // objects; unset without it). A group zebra sends naming an object the
  // kernel removed is then told apart: one the kernel holds was made before
  // the removal and forwards along its other members; one it does not hold
  // was refused (fpm_links.cc).
  std::function<bool(uint32_t id)> kernel_holds_object;
  // What the kernel's next-hop object `id` forwards along now (the kernel
  // source's objects; nullopt when it holds no such object, unset without a
  // kernel source). A prefix in flux whose kernel route is by an object
  // forwards as the kernel does: along these paths (fpm_flux.h).
  std::function<std::optional<NexthopObjects::Resolved>(uint32_t id)> kernel_object;
};

struct FpmTableCounts {
  uint64_t messages = 0;         // netlink messages applied
  uint64_t ignored = 0;          // other types, families or tables
  uint64_t route_updates = 0;    // upserts + deletes given to the RIB
  uint64_t punted_updates = 0;   // of those, upserts with the ToHost path
  uint64_t stale_swept = 0;      // routes + groups removed by sweeps
  // Routes and groups a frame brought that the table did not hold, or held
  // stale: the progress of a replay (updates of what is held are not).
  uint64_t replayed = 0;
  uint64_t kernel_dropped = 0;   // stale routes dropped because the kernel deleted them
  uint64_t kernel_kept = 0;      // stale routes punted by sweeps because the kernel still has them
  uint64_t flux_entered = 0;     // prefixes punted because the kernel and FPM disagreed (fpm_flux.h)
  uint64_t flux_overflows = 0;   // disagreeing prefixes given a placeholder instead: the flux map was full
  uint64_t kernel_dump_gone = 0;  // believed in the kernel, not in its complete re-dump: taken as deleted there
};

class FpmTable {
 public:
  FpmTable(RouteSink& sink, PortLookup port_of, FpmTableOptions options);

  // Parses and applies one frame's payload (back-to-back netlink messages).
  Status ApplyFrame(const uint8_t* payload, size_t len);

  // zebra replays everything on reconnect but never says "done" nor what
  // it no longer has: mark all stale on connect, sweep after the replay.
  void MarkAllStale();
  // Returns routes + groups removed. A stale route for which `kernel_holds`
  // (prefix, zebra's protocol) says the kernel still has it — zebra left it
  // there without replaying it — is not removed but punted, and stays stale:
  // the kernel's deletion (KernelRoute) or zebra's word on it ends that.
  using KernelHolds = std::function<bool(const Prefix&, uint8_t protocol)>;
  size_t SweepStale(const KernelHolds& kernel_holds = {});
  // Routes + groups marked stale (a running count, for the status API):
  // not yet replayed nor swept, and the routes a sweep punted because the
  // kernel still had them (they stay stale, see SweepStale).
  size_t stale_count() const { return stale_routes_ + stale_groups_; }
  // The same by walking the table (tests check the count against it).
  size_t stale_walked() const;
  // The kernel deleted zebra's next-hop objects `ids`, and with them, silently,
  // the kernel routes using them: their stale routes are dropped (one pass
  // over the routes, only when a route names one). Returns how many.
  size_t DropStaleUsing(const std::set<uint32_t>& ids);
  // The kernel's state of one of zebra's routes changed (fpm_flux.h). A
  // deletion drops a stale copy (zebra away, or not replayed since it came
  // back: the host no longer forwards along it, and zebra will not send the
  // delete) or a placeholder; a copy zebra has sent since it (re)connected
  // stays, zebra's own word on it follows over FPM. A state that disagrees
  // with FPM's puts the prefix in flux (punted), one that agrees takes it out.
  void KernelRoute(const KernelRouteView& k);
  // A dump of the kernel's routes (at start-up, and after the kernel
  // source's socket overran: events were lost). Between the two calls
  // KernelRoute hears only the routes the dump shows — the kernel source
  // holds its events meanwhile — and each is marked as shown. At a complete
  // end, every prefix this table believes the kernel holds (FPM's routes
  // not in flux, entries in flux the kernel had) that the dump did not show
  // is taken as deleted in the kernel, as by KernelRoute (fpm_flux.h). An
  // interrupted dump (NLM_F_DUMP_INTR) may have missed routes: it ends
  // incomplete, concludes nothing, and another dump follows.
  void KernelDumpBegins();
  void KernelDumpEnds(bool complete);
  size_t in_flux() const { return flux_.size(); }
  size_t flux_punting() const;  // of those, punted now (the others wait for FPM to catch up)

  size_t routes() const { return refs_.size(); }
  // For the offload replies (fpm_offload.h), which own FpmRouteRef::replied:
  // zebra's routes, and those it sent (added, changed or replayed; each waits
  // for a reply, `replied` is reset) since the last call — up to `sent_max`;
  // returns false when more came (then walk for `replied == 0`).
  FpmRouteRefs& refs() { return refs_; }
  bool TakeSent(std::vector<Prefix>& out);
  size_t nexthop_groups() const { return nhgs_.size(); }
  const FpmTableCounts& counts() const { return counts_; }
  // Re-evaluates every route (after a port-map change); emits what changed.
  void ReevaluateAll();
  // A link's state from the kernel source (fpm_links.cc): `carrier` false
  // when it is down, without carrier or gone. The kernel then holds no
  // next-hop object through it: zebra's go (their routes punt, groups keep
  // their other members), and so do the paths through it of inline routes
  // (zebra installs those with objects too); nothing comes back with the
  // carrier until zebra sends it again.
  void LinkState(uint32_t ifindex, bool carrier);
  // At a replay's end: zebra replays next-hop objects it failed to install
  // (its replay walks what it holds, its failed installs went nowhere), so
  // each object the kernel does not hold (options.kernel_holds_object) is
  // marked so, and routes naming it are not in the kernel; and a group the
  // kernel holds with fewer members (it dropped one with its link, zebra
  // never re-sent the group) keeps only those (options.kernel_object), or
  // punts. Not at arrival: fibnicd may read zebra's frame before the
  // kernel's message. Returns how many were marked or cut.
  size_t CheckKernelObjects();
  // The kernel added (or replaced) zebra's object `id`, or changed it (a
  // group that lost a member): one marked by CheckKernelObjects is used
  // again, and prefixes in flux whose kernel route is by it follow it.
  void KernelObjectAdded(uint32_t id);
  // The kernel deleted zebra's objects `ids`, and with them, silently, the
  // kernel routes using them: prefixes in flux whose kernel route was by one,
  // and FPM's routes by one that agreed with the kernel, have no kernel route
  // now (fpm_flux.h). One pass over the flux entries, and one over the routes
  // when a deleted object still has routes naming it.
  void KernelObjectsGone(const std::set<uint32_t>& ids);
  // Bytes held per structure (bench, status): routes, next-hop objects, inline sets.
  struct Memory {
    size_t routes = 0, groups = 0, inline_sets = 0, flux = 0;
  };
  Memory memory() const;

 private:
  // A route names a next-hop set: zebra's next-hop object (its id, below
  // kInlineBit), or a description of inline paths interned here (index |
  // kInlineBit) — routes of one BGP peer share one.
  static constexpr uint32_t kInlineBit = 0x80000000u;
  struct InlineSet {
    uint8_t type = 0;  // RTN_*
    std::vector<NlPath> paths;
    std::string unsupported;
    uint32_t refs = 0;
    std::string key;
  };
  struct StoredNhg {
    NlNexthop nh;
    bool stale = false;
    // The kernel does not hold it: it removed it (its link went down, lost
    // carrier or went away; a group, its last member) or refused it (made
    // while that was so). Its routes punt until zebra sends it again.
    bool removed = false;
    // The kernel did not hold it at a replay's end (CheckKernelObjects):
    // zebra failed to install it (and never retried) — routes naming it are
    // not in the kernel — until the kernel reports it or zebra sends it again.
    bool unheld = false;
  };
  // What one frame changed, applied at its end so each prefix is emitted once.
  struct FrameWork {
    std::map<Prefix, std::optional<FpmRouteRef>> touched;  // prefix → its ref before the frame
    std::set<uint32_t> groups;                             // next-hop objects whose meaning changed
    bool kernel_word = false;  // the kernel's change (KernelRoute), not FPM's or a sweep's
    bool fpm_frame = false;    // zebra's frame (ApplyFrame)
  };

  bool FollowKernelMembers(uint32_t id, StoredNhg& g);  // CheckKernelObjects: a held group's members
  uint32_t SetOf(const NlRoute& r);  // interns; takes a reference
  void Release(uint32_t set);
  void ApplyRoute(const NlRoute& r, FrameWork& work);
  void ApplyNexthop(NlNexthop n, FrameWork& work);
  void Finish(FrameWork& work);
  // The single objects next-hop object `id` forwards along (itself, or a
  // group's members), or why there are none to use: unknown, nested, or not
  // in the kernel (`removed`). PathsOf and DigestOf both read a set by it.
  struct Singles {
    std::vector<const NlNexthop*> objects;
    std::string none_why;  // non-empty: the set punts, for this reason
  };
  Singles SinglesOf(uint32_t id) const;
  FibPathsResult PathsOf(uint32_t set, Family fam) const;  // no paths: no route (NotInKernel)
  void Give(const Prefix& p, const FibPathsResult& res);  // to the RIB: an upsert, or with no paths a delete
  // Flux (fpm_flux.cc). What Finish does with a touched prefix in flux:
  enum class FluxStep {
    kNone,   // not in flux, or agreeing and not punted: as usual
    kPunt,   // just went into flux: give the RIB the punt
    kStay,   // still in flux, already punted: nothing
    kBack,   // left flux after a punt: give the RIB FPM's state, whatever it was
  };
  FluxStep StepFlux(const Prefix& p, const std::optional<FpmRouteRef>& now, bool kernel_word);
  // What the kernel does for a prefix in flux, for the RIB: no route where
  // it holds none (the cover), its object's paths where its route is by an
  // object it holds, a punt where neither is known (fpm_flux.h).
  FibPathsResult KernelAnswer(const Prefix& p, const FpmFluxEntry& kernel) const;
  // The prefixes in flux whose kernel route is by one of `ids` get the
  // kernel's new word (`gone`: the kernel deleted the objects, and the routes with them).
  void FluxOfKernelObjects(const std::set<uint32_t>& ids, bool gone);
  // FPM's routes by one of `ids` that agreed with the kernel: the kernel
  // deleted them with the object (zebra deleted it after a move the kernel
  // refused), so they are in flux with no kernel route (fpm_flux.cc).
  void KernelRoutesGoneWith(const std::set<uint32_t>& ids);
  bool Agrees(const std::optional<FpmRouteRef>& fpm, const FpmFluxEntry& kernel) const;
  uint64_t DigestOf(uint32_t set) const;
  bool IsPlaceholder(uint32_t set) const;
  // Prefixes in flux whose FPM group changed (compared by paths): to Finish.
  void TouchFluxOfGroups(FrameWork& work);
  bool Punted(const Prefix& p) const {
    if (flux_.empty()) return false;
    auto f = flux_.find(p);
    return f != flux_.end() && f->second.punted;
  }
  bool EvictWaiting();  // frees a slot held by an entry that does not punt
  // The kernel's object of its last word agreeing with FPM's inline route
  // (FpmRouteRef::kernel_nh; fpm_kernel_nh.cc). Noted at each agreement
  // (`nh` 0: no route, or an inline kernel route) for inline routes only.
  void NoteKernelNh(const Prefix& p, const std::optional<FpmRouteRef>& now, uint32_t nh);
  // FPM's frame gave p's inline route a new set: compared with the kernel's
  // object of the last agreeing word, the prefix goes into flux (the
  // kernel's route by that object) where they differ.
  void CheckFrameAgainstKernelNh(const Prefix& p, const FpmRouteRef& now);
  bool FollowKernelObject(const Prefix& p, const FpmRouteRef& ref, const std::optional<FpmFluxEntry>& kernel,
                          bool by_frame);
  // The kernel changed (or deleted, `gone`) objects `ids` without a route
  // message: FPM's inline routes that agreed with a route by one of them are
  // compared again (a group that lost a member, a deleted object's routes).
  void RecheckKernelNhUsers(const std::set<uint32_t>& ids, bool gone);
  // Several IPv6 routes of one prefix and metric in the kernel
  // (fpm_flux_several.cc): true when k's word was about them and is done.
  bool SeveralRoutesWord(const KernelRouteView& k);
  FpmFluxEntry FrontOf(const std::optional<FpmRouteRef>& now) const;  // the kernel's route FPM's agrees with
  void FrontGone(FpmFluxEntry& e) const;  // the first route went: the next one forwards
  bool ShownInThisDump(const Prefix& p) const;
  // A flux entry for the kernel's route by its object `id` as it is now
  // (nullopt when the kernel source holds no such object).
  std::optional<FpmFluxEntry> KernelObjectEntry(uint32_t id) const;
  void KernelWord(const KernelRouteView& k);  // KernelRoute's work
  void KernelWordGone(const Prefix& p, uint8_t protocol);  // KernelWord: the kernel holds no route for p
  // The kernel dump in progress showed p: its ref and flux entry are marked.
  void MarkDumpShown(const Prefix& p);
  // Whether a ref FPM creates for p now starts marked: the dump showed p
  // before FPM erased its ref, or while only a flux entry held it.
  bool DumpShownBefore(const Prefix& p);
  void DumpDidNotShow(const Prefix& p, uint8_t protocol);
  // The kernel's view of links (fpm_links.cc).
  // Whether the kernel refused n: an object through a link without carrier,
  // a group naming an object it removed — unless it holds the group (made
  // before the removal): then n loses those members, as the kernel's did.
  bool KernelRefuses(NlNexthop& n) const;
  uint32_t SetOfLive(const NlRoute& r);  // SetOf, as the kernel holds r now
  // The set of routes the kernel removed or refused (fpm_links.cc). The
  // kernel holds no such route and forwards by what covers it, so neither
  // does the device: the RIB holds no FPM route for them (PathsOf answers
  // no paths), and to flux they are as absent. Punting them instead would
  // differ from a restarted fibnicd whenever zebra replays a route whose
  // install the kernel refused (zebra 8.4 sends a refused install nowhere
  // but in its replays).
  uint32_t RemovedRouteSet();
  bool NotInKernel(uint32_t set) const;  // RemovedRouteSet, or an object (or member) marked unheld
  void TouchObject(uint32_t id, FrameWork& work);  // it and every group holding it changed meaning
  // Routes naming one of `ids` that are not in the kernel because an object
  // is marked unheld stay so (in flux, no kernel route) when it is unmarked.
  void KeepRoutesOutOfTheKernel(const std::set<uint32_t>& ids);
  void RemoveObjectsVia(uint32_t ifindex, FrameWork& work);
  void RemoveInlinePathsVia(uint32_t ifindex, FrameWork& work);
  void PutRef(const Prefix& p, const FpmRouteRef& ref, const std::optional<FpmRouteRef>& before);
  void EraseRef(const Prefix& p, const FpmRouteRef& before);
  const std::vector<NextHop>* EmittedOf(uint32_t set, Family fam) const;

  RouteSink& sink_;
  PortLookup port_of_;
  FpmTableOptions options_;
  FpmRouteRefs refs_;
  std::unordered_map<uint32_t, StoredNhg> nhgs_;
  std::unordered_map<uint32_t, std::set<uint32_t>> parents_;  // member id → groups holding it
  std::unordered_map<uint32_t, uint32_t> users_;              // object id → routes naming it (sent or not)
  bool AnyUsed(const std::set<uint32_t>& ids) const {  // some route names one of them
    return std::any_of(ids.begin(), ids.end(), [&](uint32_t id) { return users_.count(id) != 0; });
  }
  std::vector<InlineSet> inline_;                             // by index; refs == 0 = free
  std::vector<uint32_t> inline_free_;
  std::unordered_map<std::string, uint32_t> inline_index_;    // InlineSet::key → index
  // What each set's routes were last given to the RIB as, per family
  // (key: set << 1 | v6): all routes of a set carry the same paths.
  std::unordered_map<uint64_t, std::vector<NextHop>> emitted_;
  std::unordered_map<Prefix, FpmFluxEntry> flux_;  // prefixes in flux (fpm_flux.h)
  // Entries whose kernel route has inline paths: compared with FPM's by
  // paths, so a change of FPM's group may change the answer.
  static bool ByPaths(const FpmFluxEntry& e) { return e.present && e.nh_id == 0; }
  size_t flux_by_paths_ = 0;
  std::deque<Prefix> flux_waiting_;                // entries that stopped punting, oldest first (may be gone)
  bool kernel_dump_ = false;  // between KernelDumpBegins and KernelDumpEnds
  // During a kernel dump: prefixes it showed whose ref FPM erased since (the
  // mark went with the ref; a new one takes it back). At most flux_max: a
  // prefix beyond loses the mark, and the dump's end punts it (safe).
  std::unordered_set<Prefix> dump_shown_erased_;
  std::vector<Prefix> sent_;  // see TakeSent
  bool sent_overflow_ = false;
  FpmTableCounts counts_;
  size_t stale_routes_ = 0, stale_groups_ = 0;  // see stale_count()
  std::unordered_set<uint32_t> no_carrier_;      // links down, without carrier or gone (LinkState)
};

}  // namespace fibnic
