import { z } from 'zod';
import { idSchema } from './jobSpecSchema.ts';
import { MAX_GPUS_PER_NODE, MAX_LABEL_VALUE_LENGTH, MAX_NAME_LENGTH, NODE_LABEL_PATTERN } from './specLimits.ts';

/** One GPU device, on the wire. */
export const gpuDeviceSchema = z.strictObject({
  id: z.int().min(0).meta({ description: 'Device index on the host, unique per node.' }),
  memoryMb: z.int().min(0).meta({ description: 'Device memory, in MiB.' }),
  model: z.string().max(MAX_NAME_LENGTH).meta({ description: 'Model name, e.g. "A100".' }),
  nvlinkDomain: z.int().min(0).default(0).meta({ description: 'Devices with the same value share an NVLink domain.' }),
});

/**
 * The NodeSpec as agents send it (DESIGN.md §4): every object strict, defaults filled in; unique
 * GPU ids are checked by `validateNodeSpec`.
 */
export const nodeSpecSchema = z.strictObject({
  id: idSchema.meta({ description: 'Node id; becomes a subject token.' }),
  labels: z.record(
    z.string().max(MAX_NAME_LENGTH).regex(NODE_LABEL_PATTERN, { error: 'label name must match [A-Za-z_][A-Za-z0-9_.-]*' }),
    z.union([z.string().max(MAX_LABEL_VALUE_LENGTH), z.number()], { error: 'must be a string or a number' }),
  ).default({}).meta({ description: 'Labels select expressions read. cpu, memoryMb, slots and gpus name capacities in select, so labels of those names are never read.' }),
  capacity: z.strictObject({
    cpu: z.int().min(0).meta({ description: 'CPU in millicores.' }),
    memoryMb: z.int().min(0).meta({ description: 'Memory in MiB.' }),
    slots: z.int().min(0).optional().meta({ description: 'Most members at once; absent: no limit.' }),
  }),
  gpus: z.array(gpuDeviceSchema).max(MAX_GPUS_PER_NODE).default([])
    .meta({ description: 'GPU devices; ids unique.' }),
});

/** The NodeSpec wire shape after zod has filled in defaults, before the cross-field checks. */
export type NodeSpecWire = z.output<typeof nodeSpecSchema>;
