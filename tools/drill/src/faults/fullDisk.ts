import { diskFaultUnavailable, fillDisk } from '../drillDiskFault.ts';
import type { DrillFault } from './drillFault.ts';

const yesNo = (b: boolean): string => (b ? 'yes' : 'no');

/** One NATS node's store on a tmpfs filled to the last byte for `diskFullMs`, then freed (drillDiskFault.ts). */
export const fullDisk: DrillFault<'full-disk'> = {
  kind: 'full-disk',
  help: "one NATS node's store on a tmpfs filled to the last byte for a few seconds, then freed and the node recovered",
  needs: 'root',
  inDefault: true,
  natsNode: true,
  unavailable: diskFaultUnavailable,
  inject: fillDisk,
  detail: ({ disk }) =>
    disk === undefined
      ? ''
      : ` (tmpfs of ${disk.mb} MB full for ${disk.fullMs} ms; its monitor answered at the end of that: ${yesNo(disk.answeredWhenFull)}, once freed: ${yesNo(disk.answeredAfterFree)}; restarted on ${disk.recovery === 'empty-store' ? 'an empty store' : 'the store it left'})`,
};
