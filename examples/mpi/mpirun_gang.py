#!/usr/bin/env python3
"""Runs an MPI program over a muster gang with `mpirun --hostfile $MUSTER_HOSTFILE`.

docs/job-spec.md ("Running a distributed program") shows the job. Every member of the gang runs
this script, one member per MPI slot. The members meet at the gang's rendezvous (MASTER_ADDR,
MASTER_PORT): every other member connects to member 0 and holds its node's slots; once all are
there, member 0 launches the WORLD_SIZE ranks with mpirun (on its own node directly, on the others
the way OpenMPI does, over ssh), then closes the connections, and every member exits; the gang
ends with mpirun's exit code. MPIRUN_FLAGS adds flags to mpirun.

    usage: mpirun_gang.py PROGRAM [ARGS...]
"""
import os
import socket
import subprocess
import sys
import time


def main() -> int:
    world = int(os.environ["WORLD_SIZE"])
    where = (os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]))
    if os.environ["RANK"] == "0":
        server = socket.create_server(("", where[1]))
        peers = [server.accept()[0] for _ in range(world - 1)]
        command = ["mpirun", *os.environ.get("MPIRUN_FLAGS", "").split(), "--hostfile", os.environ["MUSTER_HOSTFILE"], "-np", str(world), *sys.argv[1:]]
        status = subprocess.call(command)
        for peer in peers:
            peer.close()
        return status
    deadline = time.monotonic() + 300
    while True:
        try:
            conn = socket.create_connection(where, timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                print(f"member 0 never answered at {where[0]}:{where[1]}", file=sys.stderr)
                return 1
            time.sleep(0.5)
    conn.settimeout(None)
    conn.recv(1)  # b"" once member 0 is done
    return 0


if __name__ == "__main__":
    sys.exit(main())
