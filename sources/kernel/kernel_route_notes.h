// RouteNotes (sources/route_notes.h) over the kernel source's route store:
// the notes are two bits of each prefix's word in KernelRoutes.
#pragma once

#include "sources/kernel/kernel_routes.h"
#include "sources/route_notes.h"

namespace fibnic {

class KernelRouteNotes : public RouteNotes {
 public:
  explicit KernelRouteNotes(KernelRoutes& routes) : routes_(routes) {}
  std::optional<Held> Find(const Prefix& p, uint32_t table) const override;
  void SetNote(const Prefix& p, uint8_t note) override { routes_.SetNote(p, note); }
  void ClearNotes() override { routes_.ClearNotes(); }
  size_t Walk(size_t cursor, size_t max, uint32_t table,
              const std::function<void(const Prefix&, Held&)>& fn) override;

 private:
  KernelRoutes& routes_;
};

}  // namespace fibnic
