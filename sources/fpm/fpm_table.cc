#include "sources/fpm/fpm_table.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <utility>

namespace fibnic {
namespace {

uint64_t EmittedKey(uint32_t set, Family fam) { return (uint64_t{set} << 1) | (fam == Family::kV6 ? 1 : 0); }

// A byte string naming an inline description exactly (its intern key).
std::string InlineKey(uint8_t type, const std::vector<NlPath>& paths, const std::string& unsupported) {
  std::string k;
  k.push_back(static_cast<char>(type));
  for (const NlPath& p : paths) {
    k.push_back(p.gateway ? static_cast<char>(p.gateway->family()) : '-');
    if (p.gateway) {
      const auto b = p.gateway->bytes();
      k.append(reinterpret_cast<const char*>(b.data()), p.gateway->is_v4() ? 4 : 16);
    }
    k.append(reinterpret_cast<const char*>(&p.ifindex), sizeof p.ifindex);
    k.push_back(static_cast<char>(p.flags));
    k.append(reinterpret_cast<const char*>(&p.weight), sizeof p.weight);
  }
  k.push_back('|');
  k += unsupported;
  return k;
}

}  // namespace

FpmTable::FpmTable(RouteSink& sink, PortLookup port_of, FpmTableOptions options)
    : sink_(sink), port_of_(std::move(port_of)), options_(options) {}

Status FpmTable::ApplyFrame(const uint8_t* payload, size_t len) {
  std::vector<NlMessage> msgs;
  RETURN_IF_ERROR(ForEachNetlinkMessage(payload, len, [&](const nlmsghdr* h, size_t off) -> Status {
    auto m = ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(h), h->nlmsg_len);
    if (!m.ok()) return m.status().WithContext("netlink message at payload byte " + std::to_string(off));
    msgs.push_back(std::move(m).value());
    return OkStatus();
  }));
  FrameWork work;
  work.fpm_frame = true;
  for (NlMessage& m : msgs) {
    if (m.kind == NlMessage::Kind::kRoute && m.route.table == options_.table) {
      if (options_.ignore_protocols.count(m.route.protocol)) {
        ++counts_.ignored;
        m.route.del = true;
      }
      ApplyRoute(m.route, work);
    } else if (m.kind == NlMessage::Kind::kNexthop) {
      ApplyNexthop(std::move(m.nexthop), work);
    } else {
      ++counts_.ignored;
      continue;
    }
    ++counts_.messages;
  }
  Finish(work);
  return OkStatus();
}

uint32_t FpmTable::SetOf(const NlRoute& r) {
  // zebra's next-hop objects are named by id; an id in the inline range
  // (never handed out by zebra) is treated as what it is: unusable.
  if (r.nh_id != 0 && r.type == RTN_UNICAST && r.unsupported.empty() && r.nh_id < kInlineBit) {
    ++users_[r.nh_id];  // counted whether or not zebra has sent the object yet
    return r.nh_id;
  }
  std::string why = r.unsupported;
  if (r.nh_id >= kInlineBit && r.type == RTN_UNICAST && why.empty()) why = "next-hop id " + std::to_string(r.nh_id) + " out of range";
  const bool by_id = r.nh_id != 0 && r.type == RTN_UNICAST;
  std::string key = InlineKey(r.type, by_id ? std::vector<NlPath>{} : r.paths, why);
  if (auto it = inline_index_.find(key); it != inline_index_.end()) {
    ++inline_[it->second].refs;
    return it->second | kInlineBit;
  }
  uint32_t index;
  if (!inline_free_.empty()) {
    index = inline_free_.back();
    inline_free_.pop_back();
  } else {
    index = static_cast<uint32_t>(inline_.size());
    inline_.emplace_back();
  }
  InlineSet& s = inline_[index];
  s.type = r.type;
  s.paths = by_id ? std::vector<NlPath>{} : r.paths;
  s.unsupported = std::move(why);
  s.refs = 1;
  s.key = key;
  inline_index_.emplace(std::move(key), index);
  return index | kInlineBit;
}

void FpmTable::Release(uint32_t set) {
  if (set & kInlineBit) {
    --inline_[set & ~kInlineBit].refs;  // freed at the frame's end (Finish), never reused within it
    return;
  }
  if (auto u = users_.find(set); u != users_.end() && --u->second == 0) users_.erase(u);
}

void FpmTable::ApplyRoute(const NlRoute& r, FrameWork& work) {
  const Prefix& p = r.prefix;
  const std::optional<FpmRouteRef> now = refs_.Find(p);
  const std::optional<FpmRouteRef>& before = work.touched.emplace(p, now).first->second;  // the state before the frame
  if (r.del) {
    if (now) {
      EraseRef(p, *now);
      Release(now->set);
    }
    return;
  }
  if (!now || now->stale) ++counts_.replayed;
  // Taken before the old one is released: a replay keeps its set.
  const uint32_t set = SetOfLive(r);
  // The kernel's agreeing object goes along (also through zebra's DEL+NEW
  // pair) for Finish to compare the new set with (fpm_kernel_nh.cc).
  const uint32_t kernel_nh = before && (set & kInlineBit) ? before->kernel_nh : 0;
  PutRef(p, FpmRouteRef{set, false, r.protocol, 0, false, kernel_nh}, now);
  if (sent_.size() < options_.sent_max) {
    sent_.push_back(p);
  } else if (options_.sent_max != 0) {
    sent_overflow_ = true;
  }
  if (now) Release(now->set);
}

void FpmTable::ApplyNexthop(NlNexthop n, FrameWork& work) {
  const uint32_t id = n.id;
  auto it = nhgs_.find(id);
  if (!n.del && (it == nhgs_.end() || it->second.stale)) ++counts_.replayed;
  if (!n.del && it != nhgs_.end() && it->second.unheld) {  // zebra sends again an object the kernel did not hold
    FrameWork unheld;
    TouchObject(id, unheld);
    KeepRoutesOutOfTheKernel(unheld.groups);
  }
  if (it != nhgs_.end()) {
    stale_groups_ -= it->second.stale;
    for (const auto& m : it->second.nh.group) {
      auto p = parents_.find(m.id);
      if (p == parents_.end()) continue;
      p->second.erase(id);
      if (p->second.empty()) parents_.erase(p);
    }
    if (n.del) nhgs_.erase(it);
  }
  if (!n.del) {
    const bool refused = KernelRefuses(n);  // may drop members the kernel removed from it
    for (const auto& m : n.group) parents_[m.id].insert(id);
    nhgs_[id] = StoredNhg{std::move(n), false, refused};
  }
  // It and every group holding it (malformed input may nest a group in
  // itself: TouchObject walks with a visited set) now mean something else.
  TouchObject(id, work);
}

FpmTable::Singles FpmTable::SinglesOf(uint32_t id) const {
  auto unknown = [](uint32_t m) { return Singles{{}, "unknown next-hop id " + std::to_string(m)}; };
  auto removed = [](uint32_t m) {
    return Singles{{}, "next-hop id " + std::to_string(m) + " not in the kernel (its link went down or lost carrier)"};
  };
  auto it = nhgs_.find(id);
  if (it == nhgs_.end()) return unknown(id);
  if (it->second.removed) return removed(id);
  const NlNexthop& top = it->second.nh;
  if (top.group.empty()) return Singles{{&top}, ""};
  Singles out;
  for (const auto& m : top.group) {
    auto mi = nhgs_.find(m.id);
    if (mi == nhgs_.end()) return unknown(m.id);
    if (mi->second.removed) return removed(m.id);
    if (!mi->second.nh.group.empty()) return Singles{{}, "next-hop group " + std::to_string(m.id) + " nested in a group"};
    out.objects.push_back(&mi->second.nh);
  }
  return out;
}

FibPathsResult FpmTable::PathsOf(uint32_t set, Family fam) const {
  if (NotInKernel(set)) return FibPathsResult{{}, "not in the kernel"};  // no route: the cover, as the kernel
  if (set & kInlineBit) {
    const InlineSet& s = inline_[set & ~kInlineBit];
    return FibPaths(s.type, fam, s.paths, s.unsupported, port_of_);
  }
  const Singles singles = SinglesOf(set);
  if (!singles.none_why.empty()) return FibPathsResult{{NextHop::ToHost()}, singles.none_why};
  std::vector<NlPath> paths;
  std::string unsupported;
  for (const NlNexthop* s : singles.objects) {
    if (s->blackhole) return FibPaths(RTN_BLACKHOLE, fam, {}, "", port_of_);
    if (!s->unsupported.empty()) unsupported = s->unsupported;
    paths.push_back(s->path);
  }
  return FibPaths(RTN_UNICAST, fam, paths, unsupported, port_of_);
}

void FpmTable::Give(const Prefix& p, const FibPathsResult& res) {
  ++counts_.route_updates;
  if (res.paths.empty()) {  // not in the kernel (NotInKernel): the RIB holds none
    sink_.DeleteRoute(p, RouteSource::kFpm);
    return;
  }
  sink_.UpsertRoute(Route{p, RouteSource::kFpm, options_.distance, res.paths});
  if (!res.punt_why.empty()) ++counts_.punted_updates;
}

const std::vector<NextHop>* FpmTable::EmittedOf(uint32_t set, Family fam) const {
  auto it = emitted_.find(EmittedKey(set, fam));
  return it == emitted_.end() ? nullptr : &it->second;
}

void FpmTable::Finish(FrameWork& work) {
  // This frame's answer per (set, family), computed once for all its routes.
  std::unordered_map<uint64_t, FibPathsResult> fresh;
  auto answer = [&](uint32_t set, Family fam) -> const FibPathsResult& {
    const uint64_t key = EmittedKey(set, fam);
    auto f = fresh.find(key);
    if (f == fresh.end()) f = fresh.emplace(key, PathsOf(set, fam)).first;
    return f->second;
  };
  if (!work.groups.empty()) TouchFluxOfGroups(work);
  // Each touched prefix once, with its final state; what its set was last
  // given to the RIB as decides whether the RIB needs to hear of it — unless
  // the prefix is in flux (fpm_flux.h): then the punt does.
  for (const auto& [p, before] : work.touched) {
    std::optional<FpmRouteRef> now = refs_.Find(p);
    if (work.fpm_frame && now && now->kernel_nh != 0 && before && before->set != now->set) {
      CheckFrameAgainstKernelNh(p, *now);
      now = refs_.Find(p);
    }
    switch (StepFlux(p, now, work.kernel_word)) {
      case FluxStep::kNone:
        break;
      case FluxStep::kStay:
        // The kernel's word may have changed what it does (FPM's cannot).
        if (work.kernel_word) Give(p, KernelAnswer(p, flux_.at(p)));
        continue;
      case FluxStep::kPunt:
        Give(p, KernelAnswer(p, flux_.at(p)));
        continue;
      case FluxStep::kBack:
        if (now) {
          Give(p, answer(now->set, p.family()));
        } else {
          sink_.DeleteRoute(p, RouteSource::kFpm);
          ++counts_.route_updates;
        }
        continue;
    }
    if (!now) {
      if (before) {
        sink_.DeleteRoute(p, RouteSource::kFpm);
        ++counts_.route_updates;
      }
      continue;
    }
    const FibPathsResult& res = answer(now->set, p.family());
    if (before) {
      const std::vector<NextHop>* had = EmittedOf(before->set, p.family());
      if (had && *had == res.paths) continue;
    } else if (res.paths.empty()) {
      continue;  // new, and not in the kernel: nothing to give
    }
    Give(p, res);
  }
  // Sets whose answer moved with no message about them (the port map
  // changed since their routes were given to the RIB): this frame's routes
  // of such a set are not the only ones that must follow.
  std::set<uint64_t> moved;
  for (const auto& [key, res] : fresh) {
    auto e = emitted_.find(key);
    if (e != emitted_.end() && e->second != res.paths) moved.insert(key);
  }
  // The other routes of next-hop objects that changed, and of moved sets.
  // The table keeps no index from sets to routes: one pass over the routes
  // finds them, and only when a changed object has users (zebra announces a
  // group before the routes that use it, and deletes it after they moved
  // away) or a set moved.
  bool used = !moved.empty();
  for (uint32_t id : work.groups) used = used || users_.count(id);
  if (used) {
    // A prefix waiting in flux (the kernel agreed with FPM's set as it was)
    // is compared with the kernel's word again: its set's change may make
    // it disagree (an object the kernel did not hold now held, while the
    // kernel still has no route for the prefix).
    std::vector<Prefix> waiting;
    refs_.ForEach([&](const Prefix& p, uint32_t set, bool) {
      if (work.touched.count(p) || Punted(p)) return;
      const bool group_changed = !(set & kInlineBit) && work.groups.count(set);
      if (!group_changed && !moved.count(EmittedKey(set, p.family()))) return;
      if (group_changed && !flux_.empty() && flux_.count(p)) {
        waiting.push_back(p);
        return;
      }
      const FibPathsResult& res = answer(set, p.family());
      const std::vector<NextHop>* had = EmittedOf(set, p.family());
      if (!had || *had != res.paths) Give(p, res);
    });
    for (const Prefix& p : waiting) {
      const std::optional<FpmRouteRef> now = refs_.Find(p);
      if (StepFlux(p, now, false) == FluxStep::kPunt) {
        Give(p, KernelAnswer(p, flux_.at(p)));
      } else if (now) {
        Give(p, answer(now->set, p.family()));
      }
    }
  }
  for (auto& [key, res] : fresh) emitted_[key] = std::move(res.paths);
  for (uint32_t id : work.groups) {
    if (!nhgs_.count(id)) {
      emitted_.erase(EmittedKey(id, Family::kV4));
      emitted_.erase(EmittedKey(id, Family::kV6));
    }
  }
  // Inline sets no route names any more go back to the free list.
  for (const auto& [p, before] : work.touched) {
    if (!before || !(before->set & kInlineBit)) continue;
    const uint32_t index = before->set & ~kInlineBit;
    InlineSet& s = inline_[index];
    if (s.refs != 0 || s.key.empty()) continue;
    inline_index_.erase(s.key);
    emitted_.erase(EmittedKey(before->set, Family::kV4));
    emitted_.erase(EmittedKey(before->set, Family::kV6));
    s = InlineSet{};
    inline_free_.push_back(index);
  }
}

bool FpmTable::TakeSent(std::vector<Prefix>& out) {
  out.swap(sent_);
  sent_.clear();
  const bool complete = !sent_overflow_;
  sent_overflow_ = false;
  return complete;
}

void FpmTable::MarkAllStale() {
  refs_.ForEach([](const Prefix&, uint32_t, bool& stale) { stale = true; });
  // A new zebra knows nothing of earlier replies.
  refs_.Walk(0, refs_.size(), [](const Prefix&, FpmRouteRef& ref) { ref.replied = 0; });
  for (auto& [id, n] : nhgs_) n.stale = true;
  stale_routes_ = refs_.size();
  stale_groups_ = nhgs_.size();
}

size_t FpmTable::stale_walked() const {
  size_t n = 0;
  refs_.ForEach([&](const Prefix&, uint32_t, bool stale) { n += stale; });
  for (const auto& [id, g] : nhgs_) n += g.stale;
  return n;
}

size_t FpmTable::SweepStale(const KernelHolds& kernel_holds) {
  size_t removed = 0;
  // Stale routes the kernel still forwards along: their paths are zebra's
  // old word (the kernel may have changed them since, e.g. a group lost a
  // member), so they are punted, kept stale, and left out of the rounds.
  std::set<Prefix> kept;
  if (kernel_holds) {
    std::vector<std::pair<Prefix, FpmRouteRef>> held;
    refs_.Walk(0, refs_.size(), [&](const Prefix& p, FpmRouteRef& ref) {
      if (ref.stale && kernel_holds(p, ref.protocol)) held.emplace_back(p, ref);
    });
    NlRoute punt;
    punt.type = RTN_UNICAST;
    punt.unsupported = "in the kernel, not replayed by zebra";
    FrameWork work;
    for (const auto& [p, before] : held) {
      work.touched.emplace(p, before);
      PutRef(p, FpmRouteRef{SetOf(punt), true, before.protocol, before.replied}, before);
      Release(before.set);
      kept.insert(p);
    }
    Finish(work);
    counts_.kernel_kept += held.size();
  }
  // In rounds of bounded size: a sweep after zebra went away for good
  // removes every route, and a list of a million prefixes would cost more
  // than the table itself.
  constexpr size_t kRound = 16384;
  for (;;) {
    std::vector<std::pair<Prefix, uint32_t>> round;
    refs_.ForEach([&](const Prefix& p, uint32_t set, bool& stale) {
      if (stale && round.size() < kRound && !kept.count(p)) round.emplace_back(p, set);
    });
    if (round.empty()) break;
    FrameWork work;
    for (const auto& [p, set] : round) {
      work.touched.emplace(p, FpmRouteRef{set, true});
      EraseRef(p, FpmRouteRef{set, true});
      Release(set);
    }
    removed += round.size();
    Finish(work);
  }
  FrameWork work;
  std::vector<uint32_t> stale_ids;
  for (const auto& [id, g] : nhgs_) {
    if (g.stale) stale_ids.push_back(id);
  }
  for (uint32_t id : stale_ids) {
    NlNexthop del;
    del.del = true;
    del.id = id;
    ApplyNexthop(std::move(del), work);
    ++removed;
  }
  Finish(work);
  counts_.stale_swept += removed;
  return removed;
}

size_t FpmTable::DropStaleUsing(const std::set<uint32_t>& ids) {
  if (!AnyUsed(ids)) return 0;
  std::vector<std::pair<Prefix, uint32_t>> gone;
  refs_.ForEach([&](const Prefix& p, uint32_t set, bool stale) {
    if (stale && !(set & kInlineBit) && ids.count(set)) gone.emplace_back(p, set);
  });
  FrameWork work;
  for (const auto& [p, set] : gone) {
    work.touched.emplace(p, FpmRouteRef{set, true});
    EraseRef(p, FpmRouteRef{set, true});
    Release(set);
  }
  Finish(work);
  counts_.kernel_dropped += gone.size();
  return gone.size();
}

// During a kernel dump a route's mark (the dump showed it) is the kernel's,
// whatever FPM does to the route meanwhile: kept through its changes, and
// through its deletion to its return (fpm_flux.cc).
void FpmTable::PutRef(const Prefix& p, const FpmRouteRef& ref, const std::optional<FpmRouteRef>& before) {
  FpmRouteRef put = ref;
  if (kernel_dump_) put.kernel_seen = before ? before->kernel_seen : DumpShownBefore(p);
  refs_.Put(p, put);
  stale_routes_ += ref.stale;
  if (before) stale_routes_ -= before->stale;
}

void FpmTable::EraseRef(const Prefix& p, const FpmRouteRef& before) {
  if (kernel_dump_ && dump_shown_erased_.size() < options_.flux_max) {
    if (const std::optional<FpmRouteRef> now = refs_.Find(p); now && now->kernel_seen) dump_shown_erased_.insert(p);
  }
  if (refs_.Erase(p)) stale_routes_ -= before.stale;
}

void FpmTable::ReevaluateAll() {
  // Answers depend on the port map only through each set: recompute the
  // sets, then give the RIB the routes of those whose answer changed.
  std::unordered_map<uint64_t, FibPathsResult> changed;
  for (const auto& [key, paths] : emitted_) {
    FibPathsResult res = PathsOf(static_cast<uint32_t>(key >> 1), (key & 1) ? Family::kV6 : Family::kV4);
    if (res.paths != paths) changed.emplace(key, std::move(res));
  }
  if (changed.empty()) return;
  refs_.ForEach([&](const Prefix& p, uint32_t set, bool) {
    auto c = changed.find(EmittedKey(set, p.family()));
    if (c == changed.end() || Punted(p)) return;
    Give(p, c->second);
  });
  for (auto& [key, res] : changed) emitted_[key] = std::move(res.paths);
  // Prefixes in flux forward as the kernel does, through the same port map.
  for (const auto& [p, e] : flux_) {
    if (e.punted && e.present) Give(p, KernelAnswer(p, e));
  }
}

FpmTable::Memory FpmTable::memory() const {
  Memory m;
  m.routes = refs_.memory();
  m.groups = nhgs_.size() * (sizeof(StoredNhg) + 32) + parents_.size() * 64 + users_.size() * 32;
  for (const InlineSet& s : inline_) m.inline_sets += sizeof s + s.paths.capacity() * sizeof(NlPath) + s.key.capacity();
  m.inline_sets += emitted_.size() * 64;
  // A node (prefix, entry, next pointer, cached hash) and a bucket per prefix in flux.
  m.flux = flux_.size() * (sizeof(Prefix) + sizeof(FpmFluxEntry) + 24) + flux_.bucket_count() * sizeof(void*);
  return m;
}

}  // namespace fibnic
