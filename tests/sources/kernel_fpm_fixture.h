// The kernel source feeding an FPM table as fibnicd wires them (the kernel's
// word on zebra's routes and its dumps, sources/fpm/fpm_flux.h), with k0 as
// FIBNIC port 0; the table lives on the source's thread, as in fibnicd.
#pragma once

#include <net/if.h>

#include <future>
#include <memory>
#include <optional>
#include <type_traits>

#include "sources/fpm/fpm_table.h"
#include "tests/sources/kernel_source_fixture.h"

namespace fibnic::testing {

class KernelFpmTest : public KernelSourceTest {
 protected:
  // On the source's thread, where the FPM table lives.
  template <typename Fn>
  auto OnIo(Fn fn) {
    std::promise<decltype(fn())> p;
    boost::asio::post(io, [&] {
      if constexpr (std::is_void_v<decltype(fn())>) {
        fn();
        p.set_value();
      } else {
        p.set_value(fn());
      }
    });
    return p.get_future().get();
  }
  void StartWithFpm(KernelSourceConfig cfg = {}) {
    k0 = if_nametoindex("k0");
    ASSERT_NE(k0, 0u);
    fpm = std::make_unique<FpmTable>(fpm_sink, [k0 = k0](uint32_t i) -> std::optional<PortId> {
      if (i == k0) return PortId{0};
      return std::nullopt;
    }, FpmTableOptions{});
    cfg.ignore_frr_routes = true;
    cfg.ignored_route = [this](const KernelRouteView& v) { fpm->KernelRoute(v); };
    cfg.ignored_dump_begins = [this] { fpm->KernelDumpBegins(); };
    cfg.ignored_dump_ends = [this](bool complete) { fpm->KernelDumpEnds(complete); };
    StartSource(cfg);
  }

  uint32_t k0 = 0;
  RecordingSink fpm_sink;
  std::unique_ptr<FpmTable> fpm;
};

}  // namespace fibnic::testing
