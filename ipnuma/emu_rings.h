// ipnuma-emu's side of the programs' doorbell rings (ipnuma/emu_doorbell.h,
// DoorbellRing): each connection may hand over one ring of posted writes,
// which the emulator maps and drains into the NIC.
#pragma once

#include <map>

#include "common/status.h"
#include "ipnuma/emu_doorbell.h"
#include "ipnuma/emu_nic.h"

namespace fibnic::ipnuma {

class DoorbellRings {
 public:
  DoorbellRings() = default;
  ~DoorbellRings();
  DoorbellRings(const DoorbellRings&) = delete;
  DoorbellRings& operator=(const DoorbellRings&) = delete;

  // Maps the ring a connection sent (fd: a memfd of at least one DoorbellRing;
  // taken and closed). A second ring for one connection is refused.
  Status Attach(int client, int fd);
  void Detach(int client);

  // Hands the connection's waiting entries to the NIC; whether there were any.
  bool Drain(int client, EmuNic& nic);
  bool DrainAll(EmuNic& nic);
  // Whether any ring has entries (without taking them).
  bool Waiting() const;
  // Shows MAX_PAYLOAD in every ring (DoorbellRing::line), now and to rings
  // attached later.
  void SetLine(uint32_t line);
  // Shows a connection's host-link frames taken (DoorbellRing::link_taken).
  void SetLinkTaken(int client, uint32_t taken);
  // Before sleeping: tells the programs to kick, then says whether an entry
  // came meanwhile (then do not sleep). After waking: Awake().
  bool Sleep();
  void Awake();

 private:
  std::map<int, DoorbellRing*> rings_;
  uint32_t line_ = 0;
};

}  // namespace fibnic::ipnuma
