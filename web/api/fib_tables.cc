// Table routes of the Fib REST API: routes, lookup, next-hops, neighbours,
// TCAM, SRAM. Each answer puts the RIB's view next to what the device holds.
#include <charconv>

#include "web/api/fib_api_impl.h"
#include "web/api/fib_json.h"

namespace fibnic::web {

using nlohmann::json;

StatusOr<Prefix> PrefixFromParams(const HttpRequest& r) {
  const std::string text = r.params.at("address") + "/" + r.params.at("length");
  auto p = Prefix::Parse(text);
  if (!p.ok()) return InvalidArgument("'" + text + "' is not a prefix: " + p.status().message());
  return p;
}

namespace {

// Routes a state-filtered page examines at most (tens of milliseconds).
constexpr uint64_t kStateScan = 20000;

Status FamilyParam(const HttpRequest& r, std::optional<Family>* out) {
  auto f = QueryString(r, "family");
  if (!f) return OkStatus();
  if (*f == "ipv4") *out = Family::kV4;
  else if (*f == "ipv6") *out = Family::kV6;
  else return InvalidArgument("query parameter 'family': '" + *f + "' is not ipv4 or ipv6");
  return OkStatus();
}

// Where a request names an address or a prefix ("10.1.2.3" = /32).
StatusOr<Prefix> PrefixOrAddress(const std::string& name, const std::string& text) {
  auto p = Prefix::Parse(text);
  if (!p.ok()) return InvalidArgument("query parameter '" + name + "': " + p.status().message());
  return p;
}

}  // namespace

StatusOr<HttpReply> FibApi::Impl::GetRoutes(const HttpRequest& r) {
  std::optional<Family> only;
  RETURN_IF_ERROR(FamilyParam(r, &only));
  ASSIGN_OR_RETURN(uint64_t limit, QueryUint(r, "limit", 100, 1, 1000));
  std::optional<Prefix> within, covering, after;
  if (auto s = QueryString(r, "prefix")) {
    ASSIGN_OR_RETURN(within, PrefixOrAddress("prefix", *s));
  }
  if (auto s = QueryString(r, "covering")) {
    ASSIGN_OR_RETURN(covering, PrefixOrAddress("covering", *s));
  }
  if (auto s = QueryString(r, "after")) {
    ASSIGN_OR_RETURN(after, PrefixOrAddress("after", *s));
  }
  std::optional<OffloadState> state;
  if (auto s = QueryString(r, "state")) {
    for (auto st : {OffloadState::kOffloaded, OffloadState::kPartial, OffloadState::kPunted}) {
      if (*s == OffloadStateName(st)) state = st;
    }
    if (!state) return InvalidArgument("query parameter 'state': '" + *s + "' is not offloaded, partial or punted");
  }
  std::optional<RouteSource> source;
  if (auto s = QueryString(r, "source")) {
    for (int i = 0; i < kRouteSourceCount; ++i) {
      if (*s == RouteSourceName(static_cast<RouteSource>(i))) source = static_cast<RouteSource>(i);
    }
    if (!source) return InvalidArgument("query parameter 'source': '" + *s + "' is not static, kernel or fpm");
  }
  for (const auto& p : {within, covering}) {
    if (p && only && p->family() != *only) return InvalidArgument("query parameter 'family' contradicts the prefix family");
  }

  struct Page {
    std::vector<RouteInfo> routes;
    std::optional<Prefix> last;  // the cursor: the last route examined
    bool more = false;
    uint64_t scanned = 0;
  };
  // On the Fib's strand: only the page's RouteInfos are taken; JSON is built here.
  ASSIGN_OR_RETURN(Page page, view.OnStrand([&](const Fib& fib) {
    Page pg;
    for (Family fam : {Family::kV4, Family::kV6}) {
      if (only && fam != *only) continue;
      RouteQuery q;
      q.family = fam;
      q.after = after;
      q.within = within;
      q.covering = covering;
      q.source = source;
      // The Fib drops routes by prefix and source before their RouteInfo is
      // computed; the state needs it, so a rare state would examine the whole
      // table: a page stops after kStateScan routes and hands out its cursor.
      fib.ForEachRoute(q, [&](const RouteInfo& ri) {
        if (pg.routes.size() == limit || (state && pg.scanned == kStateScan)) {
          pg.more = true;
          return false;
        }
        ++pg.scanned;
        pg.last = ri.route.prefix;
        if (state && ri.state != *state) return true;
        pg.routes.push_back(ri);
        return true;
      });
      if (pg.more) break;
    }
    return pg;
  }));
  json out = json::array();
  for (const RouteInfo& ri : page.routes) out.push_back(ToJson(ri));
  return JsonReply({{"routes", std::move(out)},
                    {"next", page.more && page.last ? json(page.last->ToString()) : json(nullptr)},
                    {"scanned", page.scanned}});
}

StatusOr<HttpReply> FibApi::Impl::GetRoute(const HttpRequest& r) {
  ASSIGN_OR_RETURN(Prefix p, PrefixFromParams(r));
  ASSIGN_OR_RETURN(auto cands, view.OnStrand([&](const Fib& fib) { return fib.GetRoute(p); }));
  if (cands.empty()) return NotFound("no route for " + p.ToString());
  json arr = json::array();
  for (const auto& c : cands) arr.push_back(ToJson(c));
  return JsonReply({{"prefix", p.ToString()}, {"candidates", std::move(arr)}});
}

StatusOr<HttpReply> FibApi::Impl::PutStaticRoute(const HttpRequest& r) {
  ASSIGN_OR_RETURN(Prefix p, PrefixFromParams(r));
  if (r.content_type.rfind("application/json", 0) != 0) {
    return InvalidArgument("body must be application/json, got '" + r.content_type + "'");
  }
  json body = json::parse(r.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) return InvalidArgument("body is not a JSON object");
  for (const auto& [k, v] : body.items()) {
    if (k != "paths" && k != "distance" && k != "blackhole") {
      return InvalidArgument("body: unknown key '" + k + "' (allowed: paths, blackhole, distance)");
    }
  }
  Route route;
  route.prefix = p;
  route.source = RouteSource::kApi;
  if (body.contains("distance")) {
    if (!body["distance"].is_number_unsigned() || body["distance"].get<uint64_t>() > 255) {
      return InvalidArgument("body: 'distance' must be an integer 0..255");
    }
    route.distance = body["distance"].get<uint8_t>();
  }
  if (body.contains("blackhole")) {
    // A blackhole discards what it matches: it has no paths to go with.
    if (!body["blackhole"].is_boolean() || !body["blackhole"].get<bool>() || body.contains("paths")) {
      return InvalidArgument("body: 'blackhole' must be true, without 'paths'");
    }
    route.paths = {NextHop::Drop()};
  } else if (!body.contains("paths") || !body["paths"].is_array() || body["paths"].empty() ||
             body["paths"].size() > 16) {
    return InvalidArgument("body: 'paths' must be an array of 1..16 {\"gateway\"?, \"port\"}, or 'blackhole': true");
  }
  const int ports = view.config().caps.ports;
  const size_t listed = body.contains("blackhole") ? 0 : body["paths"].size();
  for (size_t i = 0; i < listed; ++i) {
    const json& jp = body["paths"][i];
    const std::string where = "body: paths[" + std::to_string(i) + "]";
    if (!jp.is_object()) return InvalidArgument(where + " is not an object");
    for (const auto& [k, v] : jp.items()) {
      if (k != "gateway" && k != "port") return InvalidArgument(where + ": unknown key '" + k + "'");
    }
    if (!jp.contains("port") || !jp["port"].is_number_unsigned() || jp["port"].get<uint64_t>() >= uint64_t(ports)) {
      return InvalidArgument(where + ": 'port' must be an integer 0.." + std::to_string(ports - 1));
    }
    NextHop nh;
    nh.port = jp["port"].get<PortId>();
    if (jp.contains("gateway")) {
      if (!jp["gateway"].is_string()) return InvalidArgument(where + ": 'gateway' must be an address string");
      auto gw = IpAddr::Parse(jp["gateway"].get<std::string>());
      if (!gw.ok()) return InvalidArgument(where + ": " + gw.status().message());
      if (gw->family() != p.family()) return InvalidArgument(where + ": gateway family differs from the prefix's");
      nh.gateway = *gw;
    }
    route.paths.push_back(nh);
  }
  std::sort(route.paths.begin(), route.paths.end());
  route.paths.erase(std::unique(route.paths.begin(), route.paths.end()), route.paths.end());
  ctx.static_sink->UpsertRoute(route);
  ctx.request_commit();
  if (ctx.telemetry) ctx.telemetry->Record(EventLevel::kInfo, "route", "static route " + p.ToString() + " set through the API");
  return JsonReply({{"prefix", p.ToString()}, {"applied", true}});
}

StatusOr<HttpReply> FibApi::Impl::DeleteStaticRoute(const HttpRequest& r) {
  ASSIGN_OR_RETURN(Prefix p, PrefixFromParams(r));
  ASSIGN_OR_RETURN(bool present, view.OnStrand([&](const Fib& fib) {
    bool api = false;
    for (const auto& c : fib.GetRoute(p)) api |= c.route.source == RouteSource::kApi;
    return api;
  }));
  if (!present) return NotFound("no route set through the API for " + p.ToString());
  ctx.static_sink->DeleteRoute(p, RouteSource::kApi);
  ctx.request_commit();
  if (ctx.telemetry) ctx.telemetry->Record(EventLevel::kInfo, "route", "static route " + p.ToString() + " deleted through the API");
  return JsonReply({{"prefix", p.ToString()}, {"deleted", true}});
}

StatusOr<HttpReply> FibApi::Impl::GetLookup(const HttpRequest& r) {
  auto dst = IpAddr::Parse(r.params.at("address"));
  if (!dst.ok()) return InvalidArgument("'" + r.params.at("address") + "' is not an IP address: " + dst.status().message());
  ASSIGN_OR_RETURN(const RibAnswer rib, view.OnStrand([&](const Fib& fib) { return fib.Lookup(*dst); }));
  json j = {{"address", dst->ToString()}, {"family", FamilyName(dst->family())}, {"rib", ToJson(rib)}};
  if (dst->is_v4()) {
    j["slash24"] = Prefix::V4(dst->v4() & 0xFFFFFF00u, 24).ToString();
    j["sram_word"] = regs::SramWordOf(dst->v4());
  }
  if (!device) {
    j["hardware"] = nullptr;
    j["verdict"] = "no-device";
    return JsonReply(j);
  }
  ASSIGN_OR_RETURN(HwDecision hw, device->Lookup(*dst));
  j["hardware"] = ToJson(hw);
  // Forwarding must match the RIB's answer exactly, and a drop may stand
  // only where the RIB drops; punting is always safe.
  const json& exp = j["rib"]["expected"];
  std::string verdict = "punt";
  if (hw.forward) {
    const bool same = !exp.is_null() && exp["mac"] == hw.dst_mac.ToString() && exp["port"] == hw.port;
    verdict = same ? "match" : "mismatch";
  } else if (hw.drop) {
    verdict = j["rib"]["drop"].get<bool>() ? "drop" : "mismatch";
  }
  j["verdict"] = verdict;
  return JsonReply(j);
}

namespace {

// What the table answers need from the strand, copied there (small: the
// slots, neighbours, TCAM and what the writer last put in those tables).
struct Tables {
  std::vector<SlotInfo> slots;
  std::vector<Neighbor> neighbors;
  std::vector<regs::Tcam6Entry> tcam;  // compiled
  struct Written {
    std::vector<regs::NexthopEntry> nexthop;
    std::vector<regs::Tcam6Entry> tcam;
    std::vector<regs::NeighEntry> neigh;
  };
  std::optional<Written> written;  // the writer's shadow of those tables; none without a device
};

StatusOr<Tables> TablesOnStrand(FibView& view, bool neighbors, bool tcam, const DeviceWriter* writer) {
  return view.OnStrand([&](const Fib& fib) {
    Tables t;
    t.slots = fib.Slots();
    if (neighbors) t.neighbors = fib.Neighbors();
    if (tcam) t.tcam = fib.image().tcam;
    if (writer && writer->in_sync()) {
      const DeviceImage& w = writer->shadow();
      t.written = Tables::Written{w.nexthop, w.tcam, w.neigh};
    }
    return t;
  });
}

}  // namespace

StatusOr<HttpReply> FibApi::Impl::GetNexthops(const HttpRequest&) {
  ASSIGN_OR_RETURN(Tables t, TablesOnStrand(view, false, false, view.writer()));
  const auto& hw = t.written;
  json arr = json::array();
  for (const SlotInfo& s : t.slots) {
    json next_hops = json::array();
    for (const NextHop& nh : s.next_hops) next_hops.push_back(ToJson(nh));
    json j = {{"code", s.code},
              {"owner", s.owner ? ToJson(*s.owner) : json(nullptr)},
              {"adjacency", s.adjacency ? json(s.adjacency->ToString()) : json(nullptr)},
              {"next_hops", std::move(next_hops)},
              {"weight", s.weight},
              {"entry", ToJson(s.entry)}};
    if (hw && s.code >= 0 && size_t(s.code) < hw->nexthop.size()) {
      j["device"] = ToJson(hw->nexthop[s.code]);
      j["in_sync"] = hw->nexthop[s.code] == s.entry;
    } else {
      j["device"] = nullptr;
      j["in_sync"] = nullptr;
    }
    arr.push_back(std::move(j));
  }
  return JsonReply({{"slots", std::move(arr)}});
}

StatusOr<HttpReply> FibApi::Impl::GetNeighbors(const HttpRequest&) {
  ASSIGN_OR_RETURN(Tables t, TablesOnStrand(view, true, false, view.writer()));
  const auto& hw = t.written;
  json arr = json::array();
  for (const Neighbor& n : t.neighbors) {
    json j = ToJson(n);
    j["cam_index"] = nullptr;
    if (hw) {
      const auto key = n.addr.mapped16();
      for (size_t i = 0; i < hw->neigh.size(); ++i) {
        if (hw->neigh[i].valid() && hw->neigh[i].addr == key) {
          j["cam_index"] = i;
          j["cam_mac"] = hw->neigh[i].mac.ToString();
          j["cam_port"] = hw->neigh[i].port;
          break;
        }
      }
    }
    arr.push_back(std::move(j));
  }
  json cam_used = nullptr;
  if (hw) {
    cam_used = std::count_if(hw->neigh.begin(), hw->neigh.end(), [](const regs::NeighEntry& e) { return e.valid(); });
  }
  return JsonReply({{"neighbors", std::move(arr)},
                    {"cam_used", cam_used},
                    {"cam_entries", view.config().caps.neigh_entries}});
}

StatusOr<HttpReply> FibApi::Impl::GetTcam(const HttpRequest&) {
  ASSIGN_OR_RETURN(Tables t, TablesOnStrand(view, false, true, view.writer()));
  const auto& hw = t.written;
  const auto& img = t.tcam;
  json arr = json::array();
  for (size_t i = 0; i < img.size(); ++i) {
    // Show what forwards: the device's entry when there is a device.
    const regs::Tcam6Entry& e = hw && i < hw->tcam.size() ? hw->tcam[i] : img[i];
    json j = ToJson(e);
    j["index"] = i;
    j["in_sync"] = hw ? json(i < hw->tcam.size() && hw->tcam[i] == img[i]) : json(nullptr);
    j["nexthop"] = nullptr;
    for (const auto& s : t.slots) {
      if (e.valid() && s.code == e.code && s.owner) j["nexthop"] = ToJson(*s.owner);
    }
    arr.push_back(std::move(j));
  }
  const auto used = std::count_if(img.begin(), img.end(), [](const regs::Tcam6Entry& e) { return e.valid(); });
  return JsonReply({{"entries", std::move(arr)}, {"used", used}, {"source", hw ? "device" : "image"}});
}

StatusOr<FibApi::Impl::SramViews*> FibApi::Impl::Sram() {
  if (sram.copy && std::chrono::steady_clock::now() < sram.keep_until) return &sram;
  ASSIGN_OR_RETURN(std::shared_ptr<const SramCopy> copy, view.Sram());
  if (copy != sram.copy) sram = SramViews{std::move(copy), std::nullopt, {}, {}};
  return &sram;
}

StatusOr<HttpReply> FibApi::Impl::GetSram(const HttpRequest&) {
  ASSIGN_OR_RETURN(SramViews * s, Sram());
  if (!s->summary) {
    const auto t0 = std::chrono::steady_clock::now();
    s->summary = SummarizeSram(s->copy->bytes.data(), s->copy->code_bits);
    const auto t1 = std::chrono::steady_clock::now();
    s->keep_until = t1 + 20 * (t1 - t0);
  }
  const SramSummary& sum = *s->summary;
  const int codes = 1 << sum.code_bits;
  auto counts = [codes](const auto& by_code) {
    json a = json::array();
    for (int c = 0; c < codes; ++c) a.push_back(by_code[c]);
    return a;
  };
  json regions = json::array();
  for (int r = 0; r < 256; ++r) {
    regions.push_back({{"prefix", Prefix::V4(uint32_t(r) << 24, 8).ToString()}, {"by_code", counts(sum.per_slash8[r])}});
  }
  ASSIGN_OR_RETURN(auto slot_list, view.OnStrand([](const Fib& fib) { return fib.Slots(); }));
  json slots = json::array();
  for (const auto& sl : slot_list) {
    slots.push_back({{"code", sl.code}, {"owner", sl.owner ? json(sl.owner->ToString()) : json(nullptr)}});
  }
  return JsonReply({{"source", s->copy->source},
                    {"code_bits", sum.code_bits},
                    {"words", uint64_t{1} << 22},
                    {"words_nonzero", sum.words_nonzero},
                    {"slash24s", uint64_t{1} << 24},
                    {"by_code", counts(sum.by_code)},
                    {"regions", std::move(regions)},
                    {"codes", std::move(slots)}});
}

StatusOr<HttpReply> FibApi::Impl::GetSramMap(const HttpRequest& r) {
  ASSIGN_OR_RETURN(uint64_t size, QueryUint(r, "size", 1024, 16, 4096));
  if (size & (size - 1)) return InvalidArgument("query parameter 'size': " + std::to_string(size) + " is not a power of two");
  PictureOrder order = PictureOrder::kHilbert;
  if (auto o = QueryString(r, "order")) {
    if (*o == "linear") order = PictureOrder::kLinear;
    else if (*o != "hilbert") return InvalidArgument("query parameter 'order': '" + *o + "' is not hilbert or linear");
  }
  ASSIGN_OR_RETURN(SramViews * s, Sram());
  auto key = std::make_pair(uint32_t(size), int(order));
  auto it = s->pictures.find(key);
  if (it == s->pictures.end()) {
    it = s->pictures.emplace(key, SramPicture(s->copy->bytes.data(), s->copy->code_bits, uint32_t(size), order)).first;
  }
  HttpReply rep;
  rep.content_type = "application/octet-stream";
  rep.body.assign(it->second.begin(), it->second.end());
  rep.headers.emplace_back("X-Fibnic-Size", std::to_string(size));
  rep.headers.emplace_back("X-Fibnic-Order", order == PictureOrder::kHilbert ? "hilbert" : "linear");
  rep.headers.emplace_back("X-Fibnic-Source", s->copy->source);
  return rep;
}

}  // namespace fibnic::web
