#include "web/http/admission.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace fibnic::web {
namespace {

// Clients remembered for the auth throttle; an attacker with many addresses
// cannot grow the table past this (the oldest failures are forgotten first).
constexpr size_t kMaxThrottledClients = 4096;

bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsIpv4Literal(const std::string& s) {
  in_addr a;
  return inet_pton(AF_INET, s.c_str(), &a) == 1;
}

bool IsIpv6Literal(const std::string& s) {
  in6_addr a;
  return inet_pton(AF_INET6, s.c_str(), &a) == 1;
}

bool IsPort(std::string_view p) {
  return !p.empty() && p.size() <= 5 && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

ClientKey ClientKeyOf(const std::string& address) {
  ClientKey k{};
  in_addr v4;
  in6_addr v6;
  if (inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    k[10] = k[11] = 0xff;
    std::memcpy(&k[12], &v4, 4);
  } else if (inet_pton(AF_INET6, address.c_str(), &v6) == 1) {
    std::memcpy(k.data(), &v6, 16);
    const bool mapped_v4 = std::all_of(k.begin(), k.begin() + 10, [](uint8_t b) { return b == 0; }) &&
                           k[10] == 0xff && k[11] == 0xff;
    if (!mapped_v4) std::fill(k.begin() + 8, k.end(), 0);  // the /64
  }
  return k;
}

bool ClientTable::TryConnect(const ClientKey& key) {
  Counts& c = clients_[key];
  if (c.connections >= limits_.max_connections_per_client) {
    if (c.connections == 0) clients_.erase(key);
    return false;
  }
  ++c.connections;
  return true;
}

void ClientTable::Disconnect(const ClientKey& key) {
  auto it = clients_.find(key);
  if (it == clients_.end() || it->second.connections == 0) return;
  --it->second.connections;
  Forget(key);
}

bool ClientTable::TryStream(const ClientKey& key) {
  auto it = clients_.find(key);
  if (it == clients_.end() || streams_total_ >= limits_.max_streams ||
      it->second.streams >= limits_.max_streams_per_client) {
    return false;
  }
  ++it->second.streams;
  ++streams_total_;
  return true;
}

void ClientTable::EndStream(const ClientKey& key) {
  auto it = clients_.find(key);
  if (it == clients_.end() || it->second.streams == 0) return;
  --it->second.streams;
  --streams_total_;
  Forget(key);
}

void ClientTable::Forget(const ClientKey& key) {
  auto it = clients_.find(key);
  if (it != clients_.end() && it->second.connections == 0 && it->second.streams == 0) clients_.erase(it);
}

void ClientTable::AuthFailed(const ClientKey& key, Clock::time_point now) {
  if (limits_.auth_failure_limit == 0) return;
  if (!failures_.count(key) && failures_.size() >= kMaxThrottledClients) PruneFailures(now);
  auto& times = failures_[key];
  times.push_back(now);
  while (times.size() > limits_.auth_failure_limit) times.pop_front();
}

std::chrono::milliseconds ClientTable::AuthRetryAfter(const ClientKey& key, Clock::time_point now) const {
  auto it = failures_.find(key);
  if (limits_.auth_failure_limit == 0 || it == failures_.end() || it->second.size() < limits_.auth_failure_limit) {
    return std::chrono::milliseconds(0);
  }
  const auto age = now - it->second.front();
  if (age >= limits_.auth_failure_window) return std::chrono::milliseconds(0);
  return std::chrono::ceil<std::chrono::milliseconds>(limits_.auth_failure_window - age);
}

void ClientTable::PruneFailures(Clock::time_point now) {
  for (auto it = failures_.begin(); it != failures_.end();) {
    if (now - it->second.back() >= limits_.auth_failure_window) {
      it = failures_.erase(it);
    } else {
      ++it;
    }
  }
  if (failures_.size() < kMaxThrottledClients) return;
  auto oldest = std::min_element(failures_.begin(), failures_.end(),
                                 [](const auto& a, const auto& b) { return a.second.back() < b.second.back(); });
  failures_.erase(oldest);
}

bool HostAllowed(std::string_view host, const std::vector<std::string>& allowed) {
  if (host.empty()) return true;
  std::string name;
  if (host.front() == '[') {
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    std::string_view rest = host.substr(close + 1);
    if (!rest.empty() && (rest.front() != ':' || !IsPort(rest.substr(1)))) return false;
    return IsIpv6Literal(std::string(host.substr(1, close - 1)));
  }
  const size_t colon = host.find(':');
  if (colon != std::string_view::npos) {
    if (!IsPort(host.substr(colon + 1))) return false;
    host = host.substr(0, colon);
  }
  name.assign(host);
  if (!name.empty() && name.back() == '.') name.pop_back();  // "localhost." is the same name
  if (IsIpv4Literal(name) || IEquals(name, "localhost")) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return IEquals(a, name); });
}

}  // namespace fibnic::web
