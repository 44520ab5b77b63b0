#include "sources/source.h"

namespace fibnic {

Status SourceRegistry::StartAll() {
  for (; started_ < sources_.size(); ++started_) {
    Source& s = *sources_[started_];
    RETURN_IF_ERROR(s.Start().WithContext(std::string(s.name()) + " source"));
  }
  return OkStatus();
}

void SourceRegistry::StopAll() {
  for (; started_ > 0; --started_) sources_[started_ - 1]->Stop();
}

bool SourceRegistry::initial_sync_done() const {
  for (const auto& s : sources_) {
    if (!s->initial_sync_done()) return false;
  }
  return true;
}

nlohmann::json SourceRegistry::StatsJson() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& s : sources_) {
    nlohmann::json j = s->StatsJson();
    j["state"] = s->State();
    out[s->name()] = std::move(j);
  }
  return out;
}

}  // namespace fibnic
