import { z } from 'zod';
import { idSchema } from './jobSpecSchema.ts';
import { ADDRESS_PATTERN, MAX_GPUS_PER_NODE, MAX_LABEL_VALUE_LENGTH, MAX_NAME_LENGTH, NODE_LABEL_PATTERN } from './specLimits.ts';

/** One GPU device, on the wire. */
export const gpuDeviceSchema = z.strictObject({
  id: z.int().min(0).meta({ description: 'Device index on the host, unique per node.' }),
  memoryMb: z.int().min(0).meta({ description: 'Device memory, in MiB.' }),
  model: z.string().max(MAX_NAME_LENGTH).meta({ description: 'Model name, e.g. "A100".' }),
  nvlinkDomain: z.int().min(0).default(0).meta({ description: 'Devices with the same value share an NVLink domain.' }),
});

const portSchema = z.int().min(1).max(65535);

/** The port range a node lends to gangs for their rendezvous (DESIGN.md §15), on the wire; `from <= to` is checked by `validateNodeSpec`. */
export const portRangeSchema = z.strictObject({
  from: portSchema.meta({ description: 'Lowest port of the range (1..65535).' }),
  to: portSchema.meta({ description: 'Highest port of the range (1..65535, at least from).' }),
}).meta({ description: 'The ports this node lends to gangs for their rendezvous (contract v1.2); default 29500..29999. A gang whose member 0 is here holds the lowest free one while it runs.' });

/** A host name or an IP address other nodes reach this node at (DESIGN.md §15). */
export const addressSchema = z.string().regex(ADDRESS_PATTERN, { error: 'must be a host name or an IP address' })
  .meta({ description: 'Host name or IP address the gang\'s other nodes reach this node at (contract v1.2; the agent fills it from --address). Absent: the node id is used as its host name.' });

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
  address: addressSchema.optional(),
  ports: portRangeSchema.optional(),
});

/** The NodeSpec wire shape after zod has filled in defaults, before the cross-field checks. */
export type NodeSpecWire = z.output<typeof nodeSpecSchema>;
