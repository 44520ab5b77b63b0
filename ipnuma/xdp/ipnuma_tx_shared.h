// What ipnuma-emu's transmit path in the kernel (ipnuma/xdp/ipnuma_tx.bpf.c)
// shares with user space: the doorbell frame a program sends on its host
// link, the stream slots the program and the emulator hand back and forth,
// and the record of every packet the program sent. Plain C, included by the
// BPF program and by C++ (ipnuma/xdp_transmit.h, the emulator, tests).
//
// The host link is a veth pair: a program sends doorbell frames into one end
// (an AF_PACKET socket the emulator hands it), the NIC's program runs on the
// other. A doorbell frame is what a CPU store is to the hardware: a BAR2
// offset and the bytes. The program resolves page -> PC ID -> address from
// the live BAR0 map, gives the packet the stream's next sequence, records it
// for the emulator (which retransmits and takes the ACKs) and redirects the
// WRITE to the wire, all in the sender's own system call.
//
// Ownership of a stream's sequence numbers, so the program and the emulator
// never both assign one: a stream slot's word has KERNEL set while the
// program may send on it. Anything the program cannot send at once (no slot,
// KERNEL clear, window full, a store that spans a MAX_PAYLOAD line, NIC
// disabled, page unmapped, PC ID invalid, a frame it does not understand) it
// passes up (XDP_PASS) to the emulator's socket on that end, and for a slot's
// stream it first clears KERNEL, so every later store of that stream follows
// the one passed up. The emulator hands a slot back (sets KERNEL) only when
// its own queue for that stream is empty, no read is in flight, and it has
// taken every frame the program passed up for that slot.
//
// Frames of another EtherType pass up uncounted: they are not doorbells.
// The library splits stores on page boundaries: the program resolves a store
// by its first byte's page, so only that page's stream keeps its order
// against a store that reaches into the next page.
#pragma once

#ifdef __cplusplus
#include <cstdint>
#define IPNUMA_TX_U8 uint8_t
#define IPNUMA_TX_U16 uint16_t
#define IPNUMA_TX_U32 uint32_t
#define IPNUMA_TX_U64 uint64_t
#else
#define IPNUMA_TX_U8 __u8
#define IPNUMA_TX_U16 __u16
#define IPNUMA_TX_U32 __u32
#define IPNUMA_TX_U64 __u64
#endif

// Doorbell frame: Ethernet II (any destination, any source), EtherType
// IPNUMA_DOORBELL_ETHERTYPE, then struct ipnuma_doorbell, then `length` data
// bytes (the frame may be padded beyond them). Host byte order: both ends
// run on one host.
#define IPNUMA_DOORBELL_ETHERTYPE 0x88B5  // IEEE local experimental
#define IPNUMA_DOORBELL_MAGIC 0x49504E44  // 'IPND'
#define IPNUMA_DOORBELL_POSTED_WRITE 1
// At most one page: a larger store is split by the library.
#define IPNUMA_DOORBELL_MAX_DATA 4096

struct ipnuma_doorbell {
  IPNUMA_TX_U32 magic;
  IPNUMA_TX_U16 op;         // IPNUMA_DOORBELL_POSTED_WRITE
  IPNUMA_TX_U16 length;     // data bytes, 1 .. IPNUMA_DOORBELL_MAX_DATA
  IPNUMA_TX_U32 client;     // the connection's tag, given by the emulator
  // Written by the program into a frame it passes up: the slot whose
  // `punted` it counted the frame in (0: none, no slot for that address or
  // the frame was not resolved). Senders write 0.
  IPNUMA_TX_U32 punt_slot;
  IPNUMA_TX_U64 offset;     // BAR2 offset of the first byte
};

// Stream slots: an mmapable array map `tx_streams`, max_entries = PC ID
// entries + 1 (CAPS1, at least 2). Slot 0 is never a stream: its `punted`
// counts frames passed up without a slot. A hash map `tx_slot` maps a
// destination IPv4 (network order) to its slot index; the emulator writes
// a slot fully before it inserts the address.
#define IPNUMA_TX_SEQ_MASK 0xffffffffULL  // word [31:0]: next sequence to assign
#define IPNUMA_TX_EPOCH_SHIFT 32          // word [47:32]: the stream's epoch
#define IPNUMA_TX_KERNEL (1ULL << 48)     // the program may assign sequences
// word [63:49]: frames passed up for this slot, modulo 2^15. The program
// advances it (after `punted`, before it clears KERNEL) for every frame it
// passes up for the slot, so the emulator's hand-back, a compare-and-swap
// from the word it read before it read `punted`, fails when a frame was
// passed up in between (it would else hand back a stream with that frame
// still on its way up). The emulator keeps these bits as it read them.
#define IPNUMA_TX_PUNTS_SHIFT 49
#define IPNUMA_TX_PUNTS_ONE (1ULL << IPNUMA_TX_PUNTS_SHIFT)

struct ipnuma_tx_stream {
  IPNUMA_TX_U64 word;    // atomic only: the emulator compare-and-swaps; the program also adds and clears bits
  // The program sends seq only while (s32)(limit - seq) > 0. Set by the
  // emulator as it hands the stream over (oldest unacked + TX_WINDOW), then
  // only raised, by it and by the receive program on an ACK, with a 64-bit
  // compare-and-swap of limit and ip together (little-endian: limit low).
  IPNUMA_TX_U32 limit;
  IPNUMA_TX_U32 ip;      // destination IPv4, network order; 0: slot free
  IPNUMA_TX_U64 punted;  // program: frames of this stream passed up (atomic add)
  IPNUMA_TX_U64 reserved;
};

// One packet the program sent, in the ring buffer `tx_sent`. The program
// reserves the record before it takes the sequence (so no sequence is ever
// taken that cannot be recorded); one stream's records are therefore in
// sequence order unless two CPUs send on that stream at once, when a record
// may precede one with a lower sequence: the emulator adopts by sequence.
// It adopts a record into its sender (ipnuma_model::Sender::Adopt) before it
// reads any answer, so an ACK names a packet the sender has not heard of only
// while another CPU is between taking that packet's sequence and submitting
// its record (the packet leaves after its record is submitted).
#define IPNUMA_TX_MAX_PACKET (40 + 4 * 1024)
struct ipnuma_tx_record {
  IPNUMA_TX_U32 client;     // the doorbell's tag
  IPNUMA_TX_U32 slot;
  IPNUMA_TX_U32 dst_ip;     // network order
  IPNUMA_TX_U16 pcid;
  IPNUMA_TX_U8 dst_mac[6];
  IPNUMA_TX_U64 bar2_offset;
  IPNUMA_TX_U32 bytes;      // the store's length
  IPNUMA_TX_U32 packet_len; // bytes of packet[] used
  IPNUMA_TX_U8 packet[IPNUMA_TX_MAX_PACKET];  // the UDP payload as sent: header .. end code
};
