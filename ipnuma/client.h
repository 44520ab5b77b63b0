/* libipnuma: stores into another host's memory through the local ipnuma-emu.
 *
 * The page region (BAR2) is a file both the program and the emulator map: a
 * write copies the bytes into their page and rings the emulator's doorbell
 * (one message on a unix SOCK_SEQPACKET socket) with the range; the answer
 * comes once every packet of it is acknowledged by the peer, refused or
 * discarded. So unlike a posted PCIe write, the call learns how the write
 * went. A posted write's doorbell goes into a ring in memory shared with the
 * emulator instead (ipnuma/emu_doorbell.h): no system call unless the
 * emulator sleeps. With an emulator whose transmit path is in the kernel
 * (ipnuma-emu --host-link), a posted write is instead one doorbell frame per
 * MAX_PAYLOAD line on the host link the emulator handed over, which the
 * kernel sends on as a WRITE within that call. Calls on one handle must not
 * overlap (one doorbell at a time).
 *
 * Return values: 0, or a negative errno:
 *   -EACCES     the peer's NIC refused the range (no valid REGION admits it).
 *               An ERROR lost on the wire is not repeated (the contract), so
 *               under loss a refused write may return 0: the peer's rx_denied
 *               counter is the authoritative count.
 *   -EHOSTDOWN  the peer is down (retry limit passed); reset it to go on
 *   -ENXIO      the page is unmapped or names an invalid PC ID
 *   -ENETDOWN   the NIC is disabled (CONTROL.enable 0)
 *   -EINVAL     outside the page region
 *   -EIO        the emulator could not be reached, or another failure
 * ipnuma_last_error() says which page and why. */
#ifndef FIBNIC_IPNUMA_CLIENT_H
#define FIBNIC_IPNUMA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ipnuma_client ipnuma_client;

/* pages_file: the BAR2 file ipnuma-emu was given (--pages); socket_path: its
 * doorbell (--socket), NULL for the default pages_file + ".sock". NULL on
 * failure, with errno set. */
ipnuma_client* ipnuma_open(const char* pages_file, const char* socket_path);
void ipnuma_close(ipnuma_client* c);

int ipnuma_write(ipnuma_client* c, uint64_t page_offset, const void* data, size_t len);
int ipnuma_read(ipnuma_client* c, uint64_t page_offset, void* data, size_t len);
/* A posted write, as a CPU store to BAR2 is: the bytes go out in order with
 * c's other writes, and the call returns once the doorbell is in c's ring
 * (or, with an emulator that takes no ring, sent), not waiting for the peer. Returns -EINVAL or -EIO only; how the write went
 * is told by the next ipnuma_flush (and, as for the hardware, PEER_STATE and
 * the counters). */
int ipnuma_write_posted(ipnuma_client* c, uint64_t page_offset, const void* data, size_t len);
/* Waits until every write so far is acknowledged, refused or discarded;
 * returns the first refusal of c's posted writes since the last flush, or 0. */
int ipnuma_flush(ipnuma_client* c);
/* on != 0: waits for answers by polling the doorbell without sleeping (a
 * core kept busy, no wake-up to wait for); 0, the default: sleeps in recv. */
void ipnuma_set_busy_poll(ipnuma_client* c, int on);
/* Writes 1 to PEER_STATE[pcid] bit0: the stream to that peer restarts (a new
 * epoch), so writes go out again after the peer was down. */
int ipnuma_reset_peer(ipnuma_client* c, uint16_t pcid);
/* The reason of the last failed call on c ("" after a success). */
const char* ipnuma_last_error(const ipnuma_client* c);

#ifdef __cplusplus
}
#endif

#endif /* FIBNIC_IPNUMA_CLIENT_H */
