#!/usr/bin/env python3
"""Watches a namespace's kernel FIB and fibnicd side by side, for bench/frr.

Run inside the router's namespace. Kernel: an rtnetlink socket subscribed to
IPv4/IPv6 route events counts zebra's route changes (rtm_protocol BGP) and
stamps the last one. Device: fibnicd's REST status, polled, stamps the last
change of the BAR's GENERATION (the last batch written). Prints one JSON
line when both have been quiet for --quiet seconds (or --limit passed):
  {"kernel_s": ..., "device_s": ..., "kernel_events": ..., ...}
times relative to the start of the watch (the event that starts the phase).
"""
import argparse, json, socket, struct, subprocess, time, urllib.request

RTM_NEWROUTE, RTM_DELROUTE = 24, 25
RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE = 7, 11
RTPROT_BGP = 186


def status(url):
    try:
        with urllib.request.urlopen(url + "/api/v1/status", timeout=2) as r:
            return json.load(r)
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", default="http://127.0.0.1:8080")
    ap.add_argument("--quiet", type=float, default=3.0)
    ap.add_argument("--limit", type=float, default=600.0)
    ap.add_argument("--run", help="shell command that starts the phase, run once the watch is set up")
    a = ap.parse_args()

    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.setsockopt(socket.SOL_SOCKET, 33, 256 << 20)  # SO_RCVBUFFORCE: a full table arrives in bursts
    s.bind((0, (1 << (RTNLGRP_IPV4_ROUTE - 1)) | (1 << (RTNLGRP_IPV6_ROUTE - 1))))
    s.setblocking(False)

    first = status(a.api)
    start = time.monotonic()
    if a.run:
        subprocess.Popen(a.run, shell=True)
    kernel_last, kernel_events, overruns = None, 0, 0
    device_last, generation, polls = None, None, 0
    next_poll = start
    if first:
        generation = first.get("device", {}).get("generation")
    while True:
        now = time.monotonic()
        try:
            while True:
                data = s.recv(1 << 20)
                off = 0
                while off + 16 <= len(data):
                    length, mtype = struct.unpack_from("=IH", data, off)
                    if length < 16:
                        break
                    # struct rtmsg after the 16-byte header: family, dst_len, src_len, tos, table, protocol
                    if mtype in (RTM_NEWROUTE, RTM_DELROUTE) and off + 22 <= len(data):
                        if data[off + 16 + 5] == RTPROT_BGP:
                            kernel_events += 1
                            kernel_last = time.monotonic()
                    off += (length + 3) & ~3
        except BlockingIOError:
            pass
        except OSError:  # ENOBUFS: events were lost; the stamp is still the last one seen
            overruns += 1
        if now >= next_poll:
            st = status(a.api)
            polls += 1
            if st:
                g = st.get("device", {}).get("generation")
                if g != generation:
                    generation, device_last = g, now
            next_poll = now + 0.1
        # Quiet counts from the phase's first kernel change (a BGP session
        # may take seconds to come up), bounded by --limit.
        if kernel_last is not None and now - max(t for t in (kernel_last, device_last) if t is not None) >= a.quiet:
            break
        if now - start >= a.limit:
            break
        time.sleep(0.005)
    rel = lambda t: None if t is None else round(t - start, 3)
    print(json.dumps({"kernel_s": rel(kernel_last), "device_s": rel(device_last), "kernel_events": kernel_events,
                      "overruns": overruns, "polls": polls, "timed_out": time.monotonic() - start >= a.limit}))


if __name__ == "__main__":
    main()
