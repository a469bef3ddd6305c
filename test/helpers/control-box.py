#!/usr/bin/python3
"""A simulated §14a control box behind a Modbus I/O module: a Modbus TCP slave (Debian's
python3-pymodbus 3.0) whose discrete inputs 0..3 are the relay contacts. Each line on stdin
sets them ("1", "10", "0": one character per input, 1 = closed); "ready <port>" is printed once
it listens. Used by test/integration/grid-dimming.test.ts."""
import asyncio
import sys
import threading

from pymodbus.datastore import ModbusSequentialDataBlock, ModbusServerContext, ModbusSlaveContext
from pymodbus.server import StartAsyncTcpServer

port = int(sys.argv[1])
inputs = ModbusSequentialDataBlock(0, [0] * 8)
context = ModbusServerContext(slaves=ModbusSlaveContext(di=inputs, co=ModbusSequentialDataBlock(0, [0] * 8), hr=ModbusSequentialDataBlock(0, [0] * 8), ir=ModbusSequentialDataBlock(0, [0] * 8), zero_mode=True), single=True)


def read_stdin():
    for line in sys.stdin:
        bits = [1 if c == "1" else 0 for c in line.strip()]
        if bits:
            inputs.setValues(0, bits)
            print("set " + "".join(map(str, bits)), flush=True)


async def main():
    threading.Thread(target=read_stdin, daemon=True).start()
    loop = asyncio.get_running_loop()
    loop.call_later(0.3, lambda: print(f"ready {port}", flush=True))
    await StartAsyncTcpServer(context=context, address=("127.0.0.1", port))


asyncio.run(main())
