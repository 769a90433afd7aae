// The subjects of the public contract v1 (DESIGN.md §2) are declared once, in the core's wire
// module; the bus hands them on to every service.
export { idOf, subjects } from '@muster/core';
export type { NodeInputKind } from '@muster/core';
