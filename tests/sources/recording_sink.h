// A RibSink that records what a source told it: the current routes and
// neighbours, and every call in order (to check atomic replaces).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rib/route.h"

namespace fibnic::testing {

class RecordingSink : public RibSink {
 public:
  void UpsertRoute(const Route& r) override {
    std::lock_guard lk(mu_);
    routes_[r.prefix] = r;
    log_.push_back("upsert " + r.prefix.ToString());
    for (const NextHop& nh : r.paths) {
      if (nh.drop()) dropped_.insert(r.prefix);
    }
  }
  void DeleteRoute(const Prefix& p, RouteSource) override {
    std::lock_guard lk(mu_);
    routes_.erase(p);
    log_.push_back("delete " + p.ToString());
  }
  void UpsertNeighbor(const Neighbor& n) override {
    std::lock_guard lk(mu_);
    on_ports_[{n.addr, n.port}] = n;
    log_.push_back("neigh " + n.addr.ToString());
  }
  void DeleteNeighbor(const IpAddr& a, PortId port) override {
    std::lock_guard lk(mu_);
    on_ports_.erase({a, port});
    log_.push_back("neigh-delete " + a.ToString());
  }

  std::map<Prefix, Route> routes() const { std::lock_guard lk(mu_); return routes_; }
  // p's paths, or nullopt while the source has given no route for p.
  std::optional<std::vector<NextHop>> PathsOf(const Prefix& p) const {
    std::lock_guard lk(mu_);
    auto it = routes_.find(p);
    if (it == routes_.end()) return std::nullopt;
    return it->second.paths;
  }
  // A neighbour is (address, port); neighbors() shows one per address (the
  // highest port's), for tests where each address lives on one port.
  std::map<IpAddr, Neighbor> neighbors() const {
    std::lock_guard lk(mu_);
    std::map<IpAddr, Neighbor> out;
    for (const auto& [key, n] : on_ports_) out[key.first] = n;
    return out;
  }
  std::map<std::pair<IpAddr, PortId>, Neighbor> neighbors_on_ports() const { std::lock_guard lk(mu_); return on_ports_; }
  // Whether the source ever gave the prefix a drop path since the last
  // ForgetDrops (a state that may pass between two reads of routes()).
  bool EverDropped(const Prefix& p) const { std::lock_guard lk(mu_); return dropped_.count(p) != 0; }
  void ForgetDrops() { std::lock_guard lk(mu_); dropped_.clear(); }
  std::vector<std::string> TakeLog() {
    std::lock_guard lk(mu_);
    auto out = std::move(log_);
    log_.clear();
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::map<Prefix, Route> routes_;
  std::map<std::pair<IpAddr, PortId>, Neighbor> on_ports_;
  std::vector<std::string> log_;
  std::set<Prefix> dropped_;
};

}  // namespace fibnic::testing
