#include "fibnicd/packed_update.h"

#include "common/hash_mix.h"

namespace fibnic {
namespace {

void PutAddr(PackedUpdate& e, const IpAddr& a) {
  e.family = a.family();
  e.hi = a.is_v4() ? 0 : a.v6_hi();
  e.lo = a.is_v4() ? a.v4() : static_cast<uint64_t>(a.v6());
}

IpAddr AddrOf(const PackedUpdate& e) {
  return e.family == Family::kV4 ? IpAddr::V4(static_cast<uint32_t>(e.lo))
                                 : IpAddr::V6((static_cast<U128>(e.hi) << 64) | e.lo);
}

}  // namespace

uint64_t PackedUpdate::KeyHash() const {
  const uint64_t tag = uint64_t{is_route()} << 40 | uint64_t{static_cast<uint8_t>(source)} << 32 |
                       uint64_t{port} << 16 | uint64_t{static_cast<uint8_t>(family)} << 8 | len;
  return MixBits(hi ^ MixBits(lo ^ MixBits(tag)));
}

PackedUpdate PackRoute(PendingUpdate::Kind kind, const Prefix& prefix, RouteSource source, uint8_t distance) {
  PackedUpdate e;
  e.kind = kind;
  PutAddr(e, prefix.addr());
  e.len = static_cast<uint8_t>(prefix.len());
  e.source = source;
  e.small = distance;
  return e;
}

PackedUpdate PackNeighbor(PendingUpdate::Kind kind, const IpAddr& addr, PortId port, const MacAddr& mac,
                          NeighState state) {
  PackedUpdate e;
  e.kind = kind;
  PutAddr(e, addr);
  e.len = static_cast<uint8_t>(FamilyBits(addr.family()));
  e.port = port;
  e.mac = mac;
  e.small = static_cast<uint8_t>(state);
  return e;
}

void PackedUpdates::Decode(size_t i, PendingUpdate& out) const {
  const PackedUpdate& e = entries_[i];
  out.kind = e.kind;
  out.seq = e.seq;
  out.last_seq = e.last_seq;
  out.first_arrival = first_arrival(i);
  // The fields a kind does not use stay as a default-constructed update has them.
  out.route.source = RouteSource::kStatic;
  out.route.distance = 1;
  out.route.paths.clear();
  out.neighbor = Neighbor{};
  if (e.is_route()) {
    out.route.prefix = e.family == Family::kV4 ? Prefix::V4(static_cast<uint32_t>(e.lo), e.len)
                                               : Prefix::V6((static_cast<U128>(e.hi) << 64) | e.lo, e.len);
    out.route.source = e.source;
    if (e.kind == PendingUpdate::Kind::kUpsertRoute) {
      out.route.distance = e.small;
      out.route.paths.assign(paths_[e.paths].begin(), paths_[e.paths].end());
    }
  } else {
    out.route.prefix = Prefix{};
    out.neighbor.addr = AddrOf(e);
    out.neighbor.port = e.port;
    if (e.kind == PendingUpdate::Kind::kUpsertNeighbor) {
      out.neighbor.mac = e.mac;
      out.neighbor.state = static_cast<NeighState>(e.small);
    }
  }
}

}  // namespace fibnic
