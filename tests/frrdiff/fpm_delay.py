#!/usr/bin/env python3
"""FPM with a lag, as a loaded host makes it (bench/frr: zebra installs in the
kernel first and its FPM stream trails by seconds to minutes).

  fpm_delay.py LISTEN_PORT TARGET_PORT DELAY_SECONDS

Listens on 127.0.0.1:LISTEN_PORT, where zebra connects, and for each
connection opens one to fibnicd at 127.0.0.1:TARGET_PORT; zebra's bytes reach
fibnicd DELAY_SECONDS after they were sent, in order; fibnicd's replies go
back at once. A side that closes closes the other (after the delay)."""
import asyncio
import sys
import time


async def pump(reader, writer, delay):
    queue = asyncio.Queue()

    async def take():
        while True:
            try:
                data = await reader.read(65536)
            except OSError:
                data = b""
            await queue.put((time.monotonic() + delay, data))
            if not data:
                return

    async def give():
        while True:
            due, data = await queue.get()
            if due > time.monotonic():
                await asyncio.sleep(due - time.monotonic())
            if not data:
                writer.close()
                return
            try:
                writer.write(data)
                await writer.drain()
            except OSError:
                return

    await asyncio.gather(take(), give())


async def main(listen, target, delay):
    async def handle(zr, zw):
        try:
            fr, fw = await asyncio.open_connection("127.0.0.1", target)
        except OSError:
            zw.close()
            return
        await asyncio.gather(pump(zr, fw, delay), pump(fr, zw, 0), return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", listen, reuse_address=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])))
