// The IPv6 TCAM compiler: keeps the best IPv6 routes (with their hardware
// next-hop codes) and, on Commit(), chooses the TCAM6 entries — never a wrong
// answer for any destination, the most offloaded route weight the capacity
// allows — and the write sequence that takes the device there safely.
//
//   Fib ──Upsert/Erase──▶ Tcam6Compiler ──Commit()──▶ [TcamWrite...] (DeviceDelta::tcam)
//
// Entry choice: tcam6_optimizer.h (tree DP, exact for entries on trie nodes;
//               incremental: a change redoes only the trie paths it touches).
// Write order:  tcam6_sequencer.h (every prefix of the sequence is safe).
// Model and arguments: docs/tcam6.md.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "common/ip.h"
#include "fib/offload_state.h"
#include "fib/tcam6/tcam6_optimizer.h"
#include "device/fibnic_image.h"

namespace fibnic {

struct Tcam6Route {
  uint8_t code = 0;                        // hardware next-hop code; 0 = the route must punt
  PuntReason reason = PuntReason::kNone;   // why, when code is 0
  uint32_t weight = 1;                     // what offloading the route is worth
  bool operator==(const Tcam6Route&) const = default;
};

class Tcam6Compiler {
 public:
  // capacity: TCAM entries (CAPS1[31:16]).
  explicit Tcam6Compiler(uint32_t capacity);

  // An IPv6 best route, any length 0..128 (IPv4 prefixes are ignored).
  void Upsert(const Prefix& p, const Tcam6Route& r);
  void Erase(const Prefix& p);

  // Warm start, before the first Commit(): the TCAM holds `device` (a
  // readback, capacity slots), so the next Commit() prefers its entries
  // among optimal answers and plans from its placement — an unchanged table
  // compiles to the device's own TCAM. A readback of another size or with
  // an entry no compiler writes (mask not a prefix, host bits set) is not
  // adopted. Returns the valid entries adopted.
  int Adopt(const std::vector<regs::Tcam6Entry>& device);

  // Recomputes and returns the writes that take the previous entries to the
  // new ones, in an order where applying any prefix of the sequence to the old
  // TCAM never misforwards. Empty when nothing changed.
  std::vector<TcamWrite> Commit();
  // Commit() in steps (tcam6::Optimizer::Solve with a deadline): nullopt
  // while the entry choice is unfinished (choosing()). The choice is for the
  // routes as they were when it began, so that every step gets on: changes
  // between steps wait for the next choice, and the step that finishes makes
  // the entries they make wrong punts (as Protect() does meanwhile). It
  // returns the writes from the slots as they are then; while changes wait
  // (!settled()) the next call begins the next choice.
  std::optional<std::vector<TcamWrite>> Commit(tcam6::Optimizer::Clock::time_point deadline);
  bool choosing() const { return choosing_; }
  // Every change is in a finished choice: StateOf and the covered totals are
  // for the routes as they are.
  bool settled() const { return !dirty_ && !choosing_; }

  // The writes that make the TCAM safe for the routes as they are now without
  // choosing entries (cheap: no optimizer work): every entry that a route
  // changed since the last Commit() overlaps and that names another code
  // than the route's new one (or any code, for a route that went) is made a
  // punt entry. Whatever address such a route governs is then punted or
  // answered by a longer entry it does not touch, so the device needs no
  // Commit() to stop sending it where the host would not. Commit() then puts
  // the best entries back; until then StateOf() is as of the last Commit().
  std::vector<TcamWrite> Protect();

  // The TCAM as of the last Commit() (capacity slots; unused ones invalid).
  const std::vector<regs::Tcam6Entry>& entries() const { return slots_; }
  uint32_t capacity() const { return capacity_; }
  size_t route_count() const { return opt_.route_count(); }

  struct State {
    OffloadState state;
    PuntReason reason;
  };
  // As of the last Commit(): offloaded / partial / punted and why. Unknown
  // prefixes are punted with reason kNone.
  // `walk` as for tcam6::Optimizer::StateOf (questions in ascending order).
  State StateOf(const Prefix& p, std::vector<int>* walk = nullptr) const;

  // As of the last Commit(): routes (<= /64, code != 0) whose every address
  // the hardware can answer (outside /64s mixed by longer routes) is answered,
  // and their total weight — what the entry choice maximises;
  // whether the last write plan needed the always-safe (punt-through) order.
  uint64_t covered_routes() const { return opt_.covered_routes(); }
  uint64_t covered_weight() const { return opt_.covered_weight(); }
  bool last_plan_fell_back() const { return fell_back_; }
  // Bytes held for the routes, the trie and the DP tables (an estimate from
  // sizes and capacities; the bench checks it against the real heap).
  tcam6::Optimizer::Memory memory() const { return opt_.memory(); }

 private:
  // A route changed since the last Commit(): its first 64 bits, length (at
  // most 64: a longer route is its /64) and new code (kGone: erased).
  struct Change {
    uint64_t hi = 0;
    uint8_t len = 0;
    int16_t code = 0;
  };
  static constexpr int16_t kGone = -1;
  // Beyond this many changes Protect() punts every entry naming a code
  // instead of remembering each change (a table load's worth).
  static constexpr size_t kMaxChanges = 1 << 16;
  void Changed(const Prefix& p, int16_t code);
  void Defer(const Prefix& p, const std::optional<Tcam6Route>& r);
  bool Wrong(const regs::Tcam6Entry& e) const;
  std::vector<tcam6::OptEntry> Held() const;  // the valid slots, as the optimizer's entries
  std::vector<TcamWrite> Plan(std::vector<regs::Tcam6Entry> target);  // slots_ → target
  void SetSlots(std::vector<regs::Tcam6Entry> slots);

  uint32_t capacity_;
  tcam6::Optimizer opt_;
  bool dirty_ = false;
  std::vector<regs::Tcam6Entry> slots_;  // set through SetSlots
  bool coded_ = false;                   // a valid slot names a code
  bool fell_back_ = false;
  std::vector<Change> changes_;  // since the last Commit()
  bool changes_overflow_ = false;
  // The entries of the last Commit() while Protect() has punted some of them,
  // or held when an unfinished Commit() began: the optimizer's tie-break
  // prefers these, not the punts.
  std::optional<std::vector<tcam6::OptEntry>> chosen_;
  // A choice under way (Commit with a deadline): the changes made since it
  // began, to give the optimizer once it is done; changes_ held this many
  // when it began.
  bool choosing_ = false;
  // A change that came during the choice, for the next one: 24 bytes, not a
  // Prefix's 48 and an optional route (a zebra restart defers the erase and
  // the return of most IPv6 routes while a choice runs).
  struct Deferred {
    U128 addr() const { return (static_cast<U128>(hi) << 64) | lo; }
    uint64_t hi = 0, lo = 0;
    uint32_t weight = 0;
    uint8_t len = 0;
    uint8_t code = 0;
    PuntReason reason = PuntReason::kNone;
    bool erased = false;
  };
  static_assert(sizeof(Deferred) == 24);
  std::vector<Deferred> deferred_;
  size_t choice_changes_ = 0;
};

// Drops the entries (an LPM: longest match wins) whose removal changes no
// answer: one shadowed by longer ones, a punt over nothing but punts. The
// optimizer keeps such an entry when it was held before (a kept entry costs
// no write), but a warm start cannot tell what it once answered for: without
// them the TCAM is what a fresh run that adopts it chooses too. Every choice
// goes to the device through it.
void DropRedundantEntries(std::vector<regs::Tcam6Entry>& entries);

}  // namespace fibnic
