#include "ipnuma/emu_rings.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace fibnic::ipnuma {

DoorbellRings::~DoorbellRings() {
  for (auto& [client, ring] : rings_) ::munmap(ring, sizeof(DoorbellRing));
}

Status DoorbellRings::Attach(int client, int fd) {
  struct stat st {};
  Status st_out;
  if (rings_.count(client) != 0) {
    st_out = FailedPrecondition("this connection already has a doorbell ring");
  } else if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < sizeof(DoorbellRing)) {
    st_out = InvalidArgument("the doorbell ring is not a memory file of at least " +
                             std::to_string(sizeof(DoorbellRing)) + " bytes");
  } else if ((::fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK) == 0) {
    // A file the program could still shrink would fault the emulator (SIGBUS)
    // on its next look at the ring.
    st_out = InvalidArgument("the doorbell ring's memory file is not sealed against shrinking (F_SEAL_SHRINK)");
  } else {
    void* m = ::mmap(nullptr, sizeof(DoorbellRing), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) st_out = IoError(std::string("cannot map the doorbell ring: ") + std::strerror(errno));
    else {
      rings_[client] = static_cast<DoorbellRing*>(m);
      __atomic_store_n(&rings_[client]->line, line_, __ATOMIC_RELAXED);
    }
  }
  ::close(fd);
  return st_out;
}

void DoorbellRings::Detach(int client) {
  auto it = rings_.find(client);
  if (it == rings_.end()) return;
  ::munmap(it->second, sizeof(DoorbellRing));
  rings_.erase(it);
}

bool DoorbellRings::Drain(int client, EmuNic& nic) {
  auto it = rings_.find(client);
  if (it == rings_.end()) return false;
  DoorbellRing* r = it->second;
  uint32_t head = __atomic_load_n(&r->head, __ATOMIC_RELAXED);  // written here only
  const uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
  if (head == tail) return false;
  if (tail - head > kDoorbellRingSlots) {
    // The program's memory, so its bug: nothing in it can be trusted.
    nic.RefusePosted(client, InvalidArgument("doorbell ring: " + std::to_string(tail - head) +
                                             " entries published in a ring of " +
                                             std::to_string(kDoorbellRingSlots)));
  } else {
    for (; head != tail; ++head) {
      DoorbellRequest req;
      std::memcpy(&req, &r->slot[head % kDoorbellRingSlots], sizeof req);
      if (req.op != static_cast<uint32_t>(DoorbellOp::kWritePosted)) {
        nic.RefusePosted(client, InvalidArgument("doorbell ring entry with op " + std::to_string(req.op) +
                                                 ": only posted writes ride the ring"));
        continue;
      }
      nic.Ring(client, req);
    }
  }
  __atomic_store_n(&r->head, tail, __ATOMIC_RELEASE);
  return true;
}

bool DoorbellRings::DrainAll(EmuNic& nic) {
  bool any = false;
  for (auto& [client, ring] : rings_) any |= Drain(client, nic);
  return any;
}

bool DoorbellRings::Waiting() const {
  for (const auto& [client, r] : rings_) {
    if (__atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) != __atomic_load_n(&r->head, __ATOMIC_RELAXED)) return true;
  }
  return false;
}

void DoorbellRings::SetLine(uint32_t line) {
  if (line == line_) return;
  line_ = line;
  for (auto& [client, r] : rings_) __atomic_store_n(&r->line, line, __ATOMIC_RELAXED);
}

void DoorbellRings::SetLinkTaken(int client, uint32_t taken) {
  auto it = rings_.find(client);
  if (it != rings_.end()) __atomic_store_n(&it->second->link_taken, taken, __ATOMIC_RELEASE);
}

bool DoorbellRings::Sleep() {
  bool waiting = false;
  for (auto& [client, r] : rings_) {
    __atomic_store_n(&r->asleep, 1u, __ATOMIC_SEQ_CST);
    waiting |= __atomic_load_n(&r->tail, __ATOMIC_SEQ_CST) != __atomic_load_n(&r->head, __ATOMIC_RELAXED);
  }
  return waiting;
}

void DoorbellRings::Awake() {
  for (auto& [client, r] : rings_) __atomic_store_n(&r->asleep, 0u, __ATOMIC_RELAXED);
}

}  // namespace fibnic::ipnuma
