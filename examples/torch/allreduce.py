"""A gloo all-reduce over a muster gang: every member adds its RANK + 1, and checks the sum.

muster gives each member RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (docs/agent.md), which is
what torch.distributed's env:// rendezvous reads. Exits 0 when the reduced value is right, 1 when
it is not, and with torch's own error when the gang cannot form.
"""
import os
import sys

import torch
import torch.distributed as dist


def main() -> int:
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    expected = world * (world + 1) / 2
    ok = value.item() == expected
    print(
        f"rank {rank}/{world} local {os.environ.get('LOCAL_RANK')} node {os.environ.get('NODE_RANK')}/{os.environ.get('NNODES')} "
        f"attempt {os.environ.get('MUSTER_ATTEMPT')} master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}: "
        f"all_reduce sum {value.item():g}, expected {expected:g}: {'ok' if ok else 'WRONG'}",
        flush=True,
    )
    dist.barrier()
    dist.destroy_process_group()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
