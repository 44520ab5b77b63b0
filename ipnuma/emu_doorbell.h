// The doorbell between a program on the host and its ipnuma-emu: the bytes
// of a store are already in the page region (the BAR2 file both map), so a
// doorbell carries only which range to send and the answer only how it went.
// One SOCK_SEQPACKET message each way, fixed size, host byte order (both
// ends run on the same host): the kernel keeps message boundaries, so neither
// side parses a stream.
#pragma once

#include <sys/socket.h>

#include <cstdint>

namespace fibnic::ipnuma {

enum class DoorbellOp : uint32_t {
  kWrite = 1,      // send BAR2 [offset, offset+length) as it is now
  kRead = 2,       // load [offset, offset+length); the data is in BAR2 when answered
  kResetPeer = 3,  // PEER_STATE[offset] bit0 written 1: reset that PC ID's stream
  // A posted write, as a CPU store to BAR2 is: sent like kWrite, never
  // answered on its own. Its refusal (the first since the last kFlush) is
  // kept for the connection's next kFlush.
  kWritePosted = 4,
  // Answered once every packet queued so far is acknowledged, refused or
  // discarded, with the first refusal of the posted writes before it.
  kFlush = 5,
  // Hands the emulator this connection's ring of posted writes (a memfd,
  // SCM_RIGHTS; length: its size). Answered: 0 once mapped.
  kAttachRing = 6,
  // Wakes an emulator that sleeps while the ring has entries; never answered.
  kKick = 7,
  // Asks for this connection's host link (an emulator whose transmit path
  // runs in the kernel, ipnuma/xdp/ipnuma_tx_shared.h): answered 0 with an
  // AF_PACKET socket (SCM_RIGHTS) to send doorbell frames on, and the tag
  // they carry in `value`. From then on posted writes go there.
  kOpenLink = 8,
};

struct DoorbellRequest {
  uint32_t op = 0;      // DoorbellOp
  uint32_t length = 0;  // bytes, at most kDoorbellMaxLength
  uint64_t offset = 0;  // BAR2 offset (or PC ID for kResetPeer)
  // Doorbell frames this connection sent on its host link so far (wrapping):
  // the emulator takes them all before this message, so a message never
  // overtakes a posted write sent before it.
  uint32_t link_sent = 0;
  uint32_t reserved = 0;
};

struct DoorbellAnswer {
  int32_t code = 0;       // fibnic::StatusCode: 0 done; else the first refusal
  uint32_t value = 0;     // kOpenLink: the tag
  char message[248] = {};  // NUL-terminated reason when code != 0
};

// One doorbell as a message with room for one file descriptor beside it
// (kAttachRing's ring), for sendmsg and recvmsg alike.
struct DoorbellMessage {
  DoorbellRequest req;
  iovec iov{&req, sizeof req};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  DoorbellMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  DoorbellMessage(const DoorbellMessage&) = delete;
  DoorbellMessage& operator=(const DoorbellMessage&) = delete;
};

// A store larger than this is split by the caller: the emulator queues a
// whole request at once, and its packets wait in the model's stream.
inline constexpr uint32_t kDoorbellMaxLength = 1u << 20;

// Posted writes without a system call: a ring of doorbells in memory the
// program and its emulator share, as a NIC's send queue is. One producer
// (the connection's program), one consumer (the emulator); each index only
// grows and is written by one side. The emulator drains a connection's ring
// before every message of that connection, so a posted write is never
// overtaken by a later doorbell on the socket.
//
// Wake-ups: an emulator about to sleep sets `asleep`, then looks at the ring
// once more; a program, after publishing an entry, looks at `asleep` and
// sends kKick if it is set. With a full fence on both sides between the
// store and the load, one of them always sees the other: no entry waits
// for a sleeping emulator. A busy-polling emulator never sets it, so its
// programs never make a system call to store.
inline constexpr uint32_t kDoorbellRingSlots = 256;

inline constexpr uint32_t kLinkCredit = 256;

struct DoorbellRing {
  alignas(64) uint32_t tail;    // program: entries published (release)
  alignas(64) uint32_t head;    // emulator: entries taken (release)
  alignas(64) uint32_t asleep;  // emulator: 1 while it may sleep
  // Emulator: MAX_PAYLOAD now, kept current. The kernel transmit path sends a
  // doorbell frame at once only if it stays within one such aligned line (a
  // larger one goes through the emulator, which splits it), so the library
  // sends host-link stores in lines of this size.
  alignas(64) uint32_t line;
  // Emulator: the connection's host-link frames taken so far (adopted or
  // passed up). The library keeps at most kLinkCredit frames beyond it, so
  // a fast writer cannot overrun the socket the emulator takes them from,
  // as PCIe flow-control credits keep a CPU from overrunning a NIC.
  alignas(64) uint32_t link_taken;
  alignas(64) DoorbellRequest slot[kDoorbellRingSlots];
};

}  // namespace fibnic::ipnuma
